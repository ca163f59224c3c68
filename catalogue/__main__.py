"""`python -m catalogue` runs the command line."""

import sys

from catalogue.commands.cli import main

sys.exit(main())
