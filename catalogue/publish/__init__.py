"""What the catalogue hands out beside its pages: a recipe as a sparkrun recipe, the
Markdown regression table of `refresh --report`. May import the domain (models, policy, stats) and flags/; never
site/, commands/ or the runner."""
