# eugr/spark-vllm-docker README.md L656 at commit 74c02c37c280c64d07119350a7d42225f1b154ba
# (https://github.com/eugr/spark-vllm-docker/blob/74c02c37c280c64d07119350a7d42225f1b154ba/README.md), section '7. Using cluster mode for inference'.
# The README runs it inside the head container (docker exec -it vllm_node bash -i -c "..."); this is the vllm serve inside the quotes, as written.
vllm serve RedHatAI/Qwen3-VL-235B-A22B-Instruct-NVFP4 --port 8888 --host 0.0.0.0 --gpu-memory-utilization 0.7 -tp 2 --distributed-executor-backend ray --max-model-len 32768
