# 0xBakeer/inference-atlas results/vllm/google/gemma-4-E2B-it/nvidia-gb10-dgx-spark/2f71f87e0d13efd3--sweep-parallel-1-32-i512-o256-v1--e62de9.json at commit 73a9291f02f4aa3ef361d3c46608caa0063ab68e
# (https://github.com/0xBakeer/inference-atlas/blob/73a9291f02f4aa3ef361d3c46608caa0063ab68e/results/vllm/google/gemma-4-E2B-it/nvidia-gb10-dgx-spark/2f71f87e0d13efd3--sweep-parallel-1-32-i512-o256-v1--e62de9.json).
# The file records the arguments (its "args" block), not a command line: this is `vllm serve` with those arguments in the file's order.
vllm serve google/gemma-4-E2B-it \
  --max-model-len 131072 \
  --max-num-seqs 32 \
  --gpu-memory-utilization 0.6 \
  --enable-auto-tool-choice \
  --tool-call-parser gemma4
