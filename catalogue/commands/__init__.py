"""One module per command; each is a small pipeline of plain functions."""
