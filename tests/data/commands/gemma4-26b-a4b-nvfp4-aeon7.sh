mkdir -p ~/.cache/huggingface

docker run -d --name vllm-gemma4-26b \
  --gpus all \
  --ipc=host \
  -p 8000:8000 \
  -v ~/.cache/huggingface:/root/.cache/huggingface \
  -v "$(pwd)/patches/gemma4_patched.py:/usr/local/lib/python3.12/dist-packages/vllm/model_executor/models/gemma4.py" \
  ghcr.io/aeon-7/vllm-spark-gemma4-nvfp4:latest \
  vllm serve /root/.cache/huggingface/gemma-4-26B-it-uncensored-nvfp4 \
    --served-model-name gemma-4-26b-uncensored-vllm \
    --tensor-parallel-size 1 \
    --max-model-len 262000 \
    --max-num-seqs 128 \
    --gpu-memory-utilization 0.60 \
    --trust-remote-code \
    --host 0.0.0.0 --port 8000 \
    --dtype auto \
    --kv-cache-dtype fp8 \
    --enable-chunked-prefill \
    --max-num-batched-tokens 131072 \
    --load-format safetensors \
    --enable-prefix-caching \
    --enable-auto-tool-choice \
    --tool-call-parser gemma4 \
    --reasoning-parser gemma4
