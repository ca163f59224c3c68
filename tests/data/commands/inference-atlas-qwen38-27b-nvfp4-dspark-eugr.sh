# 0xBakeer/inference-atlas results/vllm/Qwen/Qwen3.8-27B/nvidia-gb10-dgx-spark/e8badcd0986cd3d8--serve-single-i256-o256-v1--151369.json at commit 75cfdd4a98f6394cd3f9f0233990243731eb6712
# (https://github.com/0xBakeer/inference-atlas/blob/75cfdd4a98f6394cd3f9f0233990243731eb6712/results/vllm/Qwen/Qwen3.8-27B/nvidia-gb10-dgx-spark/e8badcd0986cd3d8--serve-single-i256-o256-v1--151369.json).
# The file records the arguments (its "args" block), not a command line: this is `vllm serve` on the checkpoint its notes name
# (unsloth/Qwen3.8-27B-NVFP4) with those arguments in the file's order, and the two variables its notes say the boot script passes.
VLLM_MARLIN_USE_ATOMIC_ADD=1 VLLM_USE_FLASHINFER_MOE_FP4=0 \
vllm serve unsloth/Qwen3.8-27B-NVFP4 \
  --max-model-len 262144 \
  --gpu-memory-utilization 0.85 \
  --max-num-batched-tokens 16384 \
  --enable-prefix-caching \
  --reasoning-parser qwen3 \
  --tool-call-parser qwen3_xml \
  --enable-auto-tool-choice \
  --limit-mm-per-prompt '{"image":2,"video":0}' \
  --speculative-config '{"method":"dspark","model":"Doopeworld/Qwen3.8-27B-DSpark-vLLM","num_speculative_tokens":14,"draft_sample_method":"probabilistic"}'
