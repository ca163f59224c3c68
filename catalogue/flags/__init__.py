"""Flag validation against vLLM's own parser and registries (live) or a flag snapshot."""
