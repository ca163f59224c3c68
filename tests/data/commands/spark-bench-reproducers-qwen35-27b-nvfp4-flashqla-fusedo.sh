# my-other-github-account/spark-bench-reproducers prefill-fusions/flashqla-megafusion-3300-spark/scripts/launch_server.sh at commit 19f08389c8e736b453c029f1f066ddb958961899
# (https://github.com/my-other-github-account/spark-bench-reproducers/blob/19f08389c8e736b453c029f1f066ddb958961899/prefill-fusions/flashqla-megafusion-3300-spark/scripts/launch_server.sh),
# as scripts/launch_pass_server.sh starts it in the PASS image: the script's flags and six exports, plus VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0
# that launch_pass_server.sh passes. The host stays 127.0.0.1, as the measured server's log shows (non-default args: host 127.0.0.1).
VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 VLLM_NVFP4_GEMM_BACKEND=cutlass PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True FLASHINFER_CUDA_ARCH_LIST=12.1a TORCH_CUDA_ARCH_LIST=12.1a FLASHQLA_HKV_O_BK=128 FLASHQLA_HKV_O_BV=128 \
vllm serve /models/AxionML-Qwen3.5-27B-NVFP4 \
  --host 127.0.0.1 \
  --port 8000 \
  --trust-remote-code \
  --max-model-len 4096 \
  --served-model-name qwen35-27b-axionml-nvfp4 \
  --generation-config vllm \
  --load-format fastsafetensors \
  --attention-backend FLASH_ATTN \
  --gpu-memory-utilization 0.90 \
  --max-num-batched-tokens 8192 \
  --max-num-seqs 1 \
  --enable-chunked-prefill
