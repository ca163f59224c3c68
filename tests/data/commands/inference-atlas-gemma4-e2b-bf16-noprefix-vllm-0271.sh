# 0xBakeer/inference-atlas results/vllm/google/gemma-4-E2B-it/nvidia-gb10-dgx-spark/3a7140b911cd5012--sweep-parallel-1-32-i512-o256-v1--00d5b6.json at commit d4acb201f787c132dfe9c1858b22f532eb8356e7
# (https://github.com/0xBakeer/inference-atlas/blob/d4acb201f787c132dfe9c1858b22f532eb8356e7/results/vllm/google/gemma-4-E2B-it/nvidia-gb10-dgx-spark/3a7140b911cd5012--sweep-parallel-1-32-i512-o256-v1--00d5b6.json).
# The file records the arguments (its "args" block), not a command line: this is `vllm serve` with those arguments in the file's order
# (enable-prefix-caching false is vLLM's --no-enable-prefix-caching).
vllm serve google/gemma-4-E2B-it \
  --max-model-len 131072 \
  --max-num-seqs 32 \
  --gpu-memory-utilization 0.6 \
  --enable-auto-tool-choice \
  --tool-call-parser gemma4 \
  --no-enable-prefix-caching
