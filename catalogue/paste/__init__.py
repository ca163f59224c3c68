"""A pasted launch command -> the parts of a recipe: shell words, docker run options, vllm serve flags."""
