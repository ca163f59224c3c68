# djangodevreng/dgx-spark-benchmarks results/nemotron-3/nemotron-3-nano-omni-30b-a3b-reasoning/bf16/meta.json at commit 5636536703fb6fe6a4992f68162b93fa03e7f15e
# (https://github.com/djangodevreng/dgx-spark-benchmarks/blob/5636536703fb6fe6a4992f68162b93fa03e7f15e/results/nemotron-3/nemotron-3-nano-omni-30b-a3b-reasoning/bf16/meta.json), the run behind the DGX Spark Arena at https://djangodevreng.nl/en/arena/
# meta.json records the server configuration (server_config: max_model_len, gpu_memory_utilization, kv_cache_dtype,
# enable_prefix_caching, async_scheduling, extra_vllm_args, profile_env_vars) and served_name, not a command line:
# this is `vllm serve` with those settings in that order, extra_vllm_args as written, profile_env_vars before it.
vllm serve nvidia/Nemotron-3-Nano-Omni-30B-A3B-Reasoning-BF16 \
  --served-model-name nemotron-3-nano-omni-30b-bf16 \
  --max-model-len 131072 \
  --gpu-memory-utilization 0.9 \
  --kv-cache-dtype auto \
  --no-enable-prefix-caching \
  --trust-remote-code --max-num-seqs 256 --max-num-batched-tokens 8192 --video-pruning-rate 0.5 --reasoning-parser nemotron_v3 --enable-auto-tool-choice --tool-call-parser qwen3_coder
