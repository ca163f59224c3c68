"""Page generation: entries -> view models -> Markdown pages (no MkDocs needed)."""
