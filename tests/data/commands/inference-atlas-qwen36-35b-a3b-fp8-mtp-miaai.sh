# 0xBakeer/inference-atlas results/vllm/Qwen/Qwen3.6-35B-A3B/nvidia-gb10-dgx-spark/8cd52c733b36ecb7--sweep-parallel-1-32-i512-o256-v1--77c0d1.json at commit a7c179357a115bb69dac7693812f21a9a5df4955
# (https://github.com/0xBakeer/inference-atlas/blob/a7c179357a115bb69dac7693812f21a9a5df4955/results/vllm/Qwen/Qwen3.6-35B-A3B/nvidia-gb10-dgx-spark/8cd52c733b36ecb7--sweep-parallel-1-32-i512-o256-v1--77c0d1.json).
# The file records the arguments (its "args" block) and says the image was started with --entrypoint /usr/local/bin/vllm on the
# official Qwen/Qwen3.6-35B-A3B-FP8: this is `vllm serve` with those arguments in the file's order.
vllm serve Qwen/Qwen3.6-35B-A3B-FP8 \
  --tensor-parallel-size 1 \
  --trust-remote-code \
  --moe-backend auto \
  --gpu-memory-utilization 0.8 \
  --attention-backend flashinfer \
  --max-model-len 262144 \
  --max-num-seqs 24 \
  --max-num-batched-tokens 32768 \
  --enable-chunked-prefill \
  --async-scheduling \
  --kv-cache-dtype fp8 \
  --limit-mm-per-prompt '{"image":4}' \
  --speculative-config '{"method":"mtp","num_speculative_tokens":2,"moe_backend":"triton"}' \
  --reasoning-parser qwen3 \
  --tool-call-parser qwen3_coder \
  --enable-auto-tool-choice \
  --default-chat-template-kwargs '{"enable_thinking":true,"preserve_thinking":true}' \
  --override-generation-config '{"temperature":0.6,"top_p":0.95,"top_k":20,"min_p":0,"presence_penalty":0,"repetition_penalty":1}'
