"""Benchmark files other tools wrote, read into the catalogue's levels: one module per tool."""
