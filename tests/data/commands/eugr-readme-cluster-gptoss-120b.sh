# eugr/spark-vllm-docker README.md L678 at commit 74c02c37c280c64d07119350a7d42225f1b154ba
# (https://github.com/eugr/spark-vllm-docker/blob/74c02c37c280c64d07119350a7d42225f1b154ba/README.md), section '8. Fastsafetensors' (run inside the head container of a two-node cluster).
HF_HUB_OFFLINE=1 vllm serve openai/gpt-oss-120b --port 8888 --host 0.0.0.0 --trust_remote_code --swap-space 16 --gpu-memory-utilization 0.7 -tp 2 --distributed-executor-backend ray --load-format fastsafetensors
