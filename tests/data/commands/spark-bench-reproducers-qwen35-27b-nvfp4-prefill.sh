# my-other-github-account/spark-bench-reproducers vllm-prefill-optimized-spark/scripts/launch_server.sh at commit 19f08389c8e736b453c029f1f066ddb958961899
# (https://github.com/my-other-github-account/spark-bench-reproducers/blob/19f08389c8e736b453c029f1f066ddb958961899/vllm-prefill-optimized-spark/scripts/launch_server.sh; unchanged since b3f0093 of 2026-05-03),
# as the script execs it with its defaults (MODELS_DIR=/models, HOST=127.0.0.1, PORT=8000) and the four variables it exports.
# The measured server (scripts/launch_server_host_vllm.sh) ran the same flags and variables from a host venv.
# Started in a container as the folder's README quick start runs the image, with the script's exported variables as -e.
docker run --rm -d --name vllm-prefill-qwen35 --runtime=nvidia --gpus all --ipc=host --network=host -v ~/models:/models:ro \
  -e VLLM_NVFP4_GEMM_BACKEND=cutlass \
  -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
  -e FLASHINFER_CUDA_ARCH_LIST=12.1a \
  -e TORCH_CUDA_ARCH_LIST=12.1a \
  vllm-prefill-optimized-spark \
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
    --enable-prefix-caching \
    --max-num-batched-tokens 8192 \
    --max-num-seqs 1 \
    --enable-chunked-prefill
