# eugr/spark-vllm-docker README.md L109-118 at commit 74c02c37c280c64d07119350a7d42225f1b154ba
# (https://github.com/eugr/spark-vllm-docker/blob/74c02c37c280c64d07119350a7d42225f1b154ba/README.md), section 'On a cluster'.
# The README starts it with ./launch-cluster.sh exec (its cluster launcher); this is the vllm serve after 'exec', as written.
vllm serve \
  QuantTrio/MiniMax-M2-AWQ \
  --port 8000 --host 0.0.0.0 \
  --gpu-memory-utilization 0.7 \
  -tp 2 \
  --distributed-executor-backend ray \
  --max-model-len 128000 \
  --load-format fastsafetensors \
  --enable-auto-tool-choice --tool-call-parser minimax_m2 \
  --reasoning-parser minimax_m2_append_think
