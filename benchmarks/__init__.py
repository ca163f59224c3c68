"""Performance figures for `nox -s bench`: printed, never asserted."""
