# 0xBakeer/inference-atlas results/vllm/Qwen/Qwen3.8-27B/nvidia-gb10-dgx-spark/828c73f114adfb7e--serve-single-i256-o256-v1--a0348a.json at commit a47cfa0e0005347e972181aa6932f111e0cb466c
# (https://github.com/0xBakeer/inference-atlas/blob/a47cfa0e0005347e972181aa6932f111e0cb466c/results/vllm/Qwen/Qwen3.8-27B/nvidia-gb10-dgx-spark/828c73f114adfb7e--serve-single-i256-o256-v1--a0348a.json).
# The file records the arguments (its "args" block), not a command line: this is `vllm serve` on the checkpoint its notes name
# (unsloth/Qwen3.8-27B-NVFP4) with those arguments in the file's order, and the five variables its notes give as the gist's environment.
CUTE_DSL_ARCH=sm_121a FLASHINFER_CUDA_ARCH_LIST=12.1a FLASHINFER_DISABLE_VERSION_CHECK=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True VLLM_USE_FLASHINFER_SAMPLER=1 \
vllm serve unsloth/Qwen3.8-27B-NVFP4 \
  --max-model-len 262144 \
  --max-num-seqs 8 \
  --gpu-memory-utilization 0.82 \
  --enable-prefix-caching \
  --limit-mm-per-prompt '{"image":4,"video":0}' \
  --reasoning-parser qwen3 \
  --enable-auto-tool-choice \
  --tool-call-parser qwen3_xml \
  --enable-flashinfer-autotune \
  --speculative-config '{"method":"mtp","num_speculative_tokens":3,"model":"unsloth/Qwen3.8-27B-NVFP4"}'
