# my-other-github-account/spark-bench-reproducers prefill-fusions/flashqla-megafusion-3300-spark/scripts/launch_server.sh at commit 19f08389c8e736b453c029f1f066ddb958961899
# (https://github.com/my-other-github-account/spark-bench-reproducers/blob/19f08389c8e736b453c029f1f066ddb958961899/prefill-fusions/flashqla-megafusion-3300-spark/scripts/launch_server.sh),
# as scripts/launch_pass_server.sh starts it in the PASS image: the script's flags and six exports, plus VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0
# that launch_pass_server.sh passes. The host stays 127.0.0.1, as the measured server's log shows (non-default args: host 127.0.0.1).
# Started in a container as scripts/launch_pass_server.sh (its MODELS_DIR default) runs the image, with the script's exported variables as -e.
docker run --rm -d --name vllm-prefill-flashqla-alias-kpack2-api-n30 --runtime=nvidia --gpus all --network=host --shm-size=32g -v /home/user/models:/models:ro \
  -e VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 \
  -e VLLM_NVFP4_GEMM_BACKEND=cutlass \
  -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
  -e FLASHINFER_CUDA_ARCH_LIST=12.1a \
  -e TORCH_CUDA_ARCH_LIST=12.1a \
  -e FLASHQLA_HKV_O_BK=128 \
  -e FLASHQLA_HKV_O_BV=128 \
  vllm-prefill-flashqla-hkv-spark:spark1-fusedo-qkgemm-alias-kpack2 \
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
