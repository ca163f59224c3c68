# djangodevreng/dgx-spark-benchmarks results/gemma-4/gemma-4-e4b-it/bf16/meta.json at commit 5636536703fb6fe6a4992f68162b93fa03e7f15e
# (https://github.com/djangodevreng/dgx-spark-benchmarks/blob/5636536703fb6fe6a4992f68162b93fa03e7f15e/results/gemma-4/gemma-4-e4b-it/bf16/meta.json), the run behind the DGX Spark Arena at https://djangodevreng.nl/en/arena/
# meta.json records the server configuration (server_config: max_model_len, gpu_memory_utilization, kv_cache_dtype,
# enable_prefix_caching, async_scheduling, extra_vllm_args, profile_env_vars) and served_name, not a command line:
# this is `vllm serve` with those settings in that order, extra_vllm_args as written, profile_env_vars before it.
vllm serve google/gemma-4-E4B-it \
  --served-model-name gemma-4-e4b-it-bf16 \
  --max-model-len 131072 \
  --gpu-memory-utilization 0.9 \
  --kv-cache-dtype fp8 \
  --no-enable-prefix-caching \
  --async-scheduling \
  --max-num-batched-tokens 8192
