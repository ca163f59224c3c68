# my-other-github-account/spark-bench-reproducers qwen36-aeon-combined-flashqla-dflash-spark/results/aeon-paired-allpp-corrected-ar-n30-20260514/ar-reference/server-command.sh at commit 19f08389c8e736b453c029f1f066ddb958961899
# (https://github.com/my-other-github-account/spark-bench-reproducers/blob/19f08389c8e736b453c029f1f066ddb958961899/qwen36-aeon-combined-flashqla-dflash-spark/results/aeon-paired-allpp-corrected-ar-n30-20260514/ar-reference/server-command.sh), the exact server command of the ar-reference side, as the folder's README says; run in ghcr.io/aeon-7/vllm-aeon-ultimate-dflash:qwen36-v4 with the checkpoint mounted at /models/aeon-xs (docker-inspect.json); started as scripts/run_aeon_paired_allpp_corrected_ar_n30.sh starts it (its docker run options and -e variables; its --entrypoint /opt/qwen36-aeon-dflash-spark-vllm/docker/entrypoint.sh with bash -lc "exec vllm serve ..." is written here as the plain vllm serve command), with the host model folders under ~/models.
docker run -d --name aeon-paired-allpp-corrected-ar-n30-ar-reference --network host --ipc host --ulimit memlock=-1 --runtime=nvidia --gpus all \
    -e VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 \
    -e TORCH_CUDA_ARCH_LIST=12.1a \
    -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
    -e TORCH_MATMUL_PRECISION=high \
    -e NVIDIA_FORWARD_COMPAT=1 \
    -e NVIDIA_DISABLE_REQUIRE=1 \
    -e ENABLE_NVFP4_SM100=0 \
    -e VLLM_USE_FLASHINFER_MOE_FP4=0 \
    -e VLLM_TEST_FORCE_FP8_MARLIN=0 \
    -e VLLM_USE_FLASHINFER_SAMPLER=1 \
    -e VLLM_NVFP4_GEMM_BACKEND=flashinfer-cutlass \
    -v ~/models/aeon-ultimate-multimodal-nvfp4-mtp-xs:/models/aeon-xs:ro \
    ghcr.io/aeon-7/vllm-aeon-ultimate-dflash:qwen36-v4 \
  vllm serve /models/aeon-xs --served-model-name aeon-ultimate qwen36-ultimate aeon-fast aeon-deep qwen36-ultimate-xs --host 0.0.0.0 --port 8000 --tensor-parallel-size 1 --dtype auto --quantization modelopt --kv-cache-dtype auto --max-model-len 262144 --max-num-seqs 64 --max-num-batched-tokens 32768 --gpu-memory-utilization 0.85 --enable-chunked-prefill --no-enable-prefix-caching --generation-config vllm --load-format safetensors --trust-remote-code --enable-auto-tool-choice --tool-call-parser qwen3_coder --reasoning-parser qwen3 --attention-backend flash_attn --compilation-config \{\"inductor_compile_config\":\{\"combo_kernels\":false\,\"benchmark_combo_kernel\":false\}\} --limit-mm-per-prompt \{\"image\":4\,\"video\":2\} --mm-encoder-tp-mode data --mm-processor-cache-type shm --mm-shm-cache-max-object-size-mb 256
