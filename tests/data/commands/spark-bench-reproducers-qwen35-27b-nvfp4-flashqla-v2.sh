# my-other-github-account/spark-bench-reproducers vllm-prefill-flashqla-hkv-spark/scripts/launch_server.sh at commit 19f08389c8e736b453c029f1f066ddb958961899
# (https://github.com/my-other-github-account/spark-bench-reproducers/blob/19f08389c8e736b453c029f1f066ddb958961899/vllm-prefill-flashqla-hkv-spark/scripts/launch_server.sh; unchanged since e32fb7f of 2026-05-06),
# as the script execs it with its defaults (MODELS_DIR=/models, HOST=127.0.0.1, PORT=8000) and the six variables it exports (V2: HKV output blocks 128/128).
# Started in a container as the folder's README (step 7) runs the image, with the script's exported variables as -e.
docker run --rm -d --name vllm-prefill-flashqla-v2 --runtime=nvidia --gpus all --ipc=host --network=host -v ~/models:/models:ro \
  -e VLLM_NVFP4_GEMM_BACKEND=cutlass \
  -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
  -e FLASHINFER_CUDA_ARCH_LIST=12.1a \
  -e TORCH_CUDA_ARCH_LIST=12.1a \
  -e FLASHQLA_HKV_O_BK=128 \
  -e FLASHQLA_HKV_O_BV=128 \
  vllm-prefill-flashqla-hkv-spark:repro-v2 \
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
