"""The runner: launch a recipe's server, sweep it with `vllm bench serve`, record a dated run."""

__version__ = "0.1.0"
