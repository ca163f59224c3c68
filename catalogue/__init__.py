"""The recipe catalogue: file models, run policy and statistics at the top, with the flag checks (flags/), other
tools' files and pasted commands (imports/, paste/), the pages (site/), the JSON API and the command line (commands/)
above them; it never imports the runner. The allowed imports are in tests/import_layers.toml."""
