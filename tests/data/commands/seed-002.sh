docker pull nvcr.io/nvidia/vllm:25.09-py3

docker run --gpus all -it --rm \
  --network host \
  --ipc=host \
  --shm-size=16g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v ~/.cache/huggingface:/root/.cache/huggingface \
  nvcr.io/nvidia/vllm:25.09-py3
export TIKTOKEN_ENCODINGS_BASE=/workspace/tiktoken_encodings
vllm serve "openai/gpt-oss-120b" \
  --host 0.0.0.0 \
  --port 8000 \
  --async-scheduling \
  --trust-remote-code \
  --tensor-parallel-size 1 \
  --gpu-memory-utilization 0.7 \
  --swap-space 32 \
  --max-model-len 64000 \
  --max-num-seqs 512 \
  --gpu-memory-utilization 0.75
