"""`python -m catalogue` runs the command line."""

import sys

from catalogue.cli import main

sys.exit(main())
