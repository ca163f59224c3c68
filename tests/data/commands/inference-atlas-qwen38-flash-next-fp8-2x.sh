# 0xBakeer/inference-atlas results/vllm/Qwen/Qwen3.8-Flash-Next/nvidia-gb10-dgx-spark/3c6d5b151ad6b0c1--serve-single-i256-o256-v1--316125.json at commit 2f62148a6fdaf5f781fc3587869589d57e7f0c68
# (https://github.com/0xBakeer/inference-atlas/blob/2f62148a6fdaf5f781fc3587869589d57e7f0c68/results/vllm/Qwen/Qwen3.8-Flash-Next/nvidia-gb10-dgx-spark/3c6d5b151ad6b0c1--serve-single-i256-o256-v1--316125.json).
# The file records the arguments (its "args" block), not a command line: this is `vllm serve` with those arguments in
# the file's order; the model is Qwen's FP8 release (the file: Qwen/Qwen3.8-Flash-Next, quant_id fp8, 172.8 GiB of weights).
vllm serve Qwen/Qwen3.8-Flash-Next-FP8 \
  --tensor-parallel-size 2 \
  --distributed-executor-backend ray \
  --max-model-len 32768 \
  --max-num-batched-tokens 2048 \
  --enforce-eager \
  --gpu-memory-utilization 0.8 \
  --kv-cache-memory 4294967296 \
  --reasoning-parser qwen3 \
  --enable-auto-tool-choice \
  --tool-call-parser qwen3_coder
