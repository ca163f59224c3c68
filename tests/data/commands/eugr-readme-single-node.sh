# eugr/spark-vllm-docker README.md L81-92 at commit 74c02c37c280c64d07119350a7d42225f1b154ba
# (https://github.com/eugr/spark-vllm-docker/blob/74c02c37c280c64d07119350a7d42225f1b154ba/README.md), as published
 docker run \
  --privileged \
  --gpus all \
  -it --rm \
  --network host --ipc=host \
  -v  ~/.cache/huggingface:/root/.cache/huggingface \
  vllm-node \
  bash -c -i "vllm serve \
  QuantTrio/Qwen3-VL-30B-A3B-Instruct-AWQ \
  --port 8000 --host 0.0.0.0 \
  --gpu-memory-utilization 0.7 \
  --load-format fastsafetensors"
