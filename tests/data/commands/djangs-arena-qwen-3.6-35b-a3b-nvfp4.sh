# djangodevreng/dgx-spark-benchmarks results/qwen-3.6/qwen-3.6-35b-a3b/nvfp4/meta.json at commit 5636536703fb6fe6a4992f68162b93fa03e7f15e
# (https://github.com/djangodevreng/dgx-spark-benchmarks/blob/5636536703fb6fe6a4992f68162b93fa03e7f15e/results/qwen-3.6/qwen-3.6-35b-a3b/nvfp4/meta.json), the run behind the DGX Spark Arena at https://djangodevreng.nl/en/arena/
# meta.json records the server configuration (server_config: max_model_len, gpu_memory_utilization, kv_cache_dtype,
# enable_prefix_caching, async_scheduling, extra_vllm_args, profile_env_vars) and served_name, not a command line:
# this is `vllm serve` with those settings in that order, extra_vllm_args as written, profile_env_vars before it.
VLLM_USE_FLASHINFER_MOE_FP4=0 vllm serve RedHatAI/Qwen3.6-35B-A3B-NVFP4 \
  --served-model-name qwen3.6-35b-a3b-nvfp4 \
  --max-model-len 131072 \
  --gpu-memory-utilization 0.9 \
  --kv-cache-dtype fp8 \
  --no-enable-prefix-caching \
  --async-scheduling \
  --language-model-only --reasoning-parser qwen3 --trust-remote-code --moe-backend marlin --linear-backend marlin
