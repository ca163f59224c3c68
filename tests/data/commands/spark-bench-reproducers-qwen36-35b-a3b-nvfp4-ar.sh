# my-other-github-account/spark-bench-reproducers qwen36-35b-a3b-dflash-spark/scripts/launch_server_ar.sh at commit 19f08389c8e736b453c029f1f066ddb958961899
# (https://github.com/my-other-github-account/spark-bench-reproducers/blob/19f08389c8e736b453c029f1f066ddb958961899/qwen36-35b-a3b-dflash-spark/scripts/launch_server_ar.sh; unchanged since fc3cbc6 of 2026-04-27),
# as the script execs it with its defaults (MODELS_DIR=/models, HOST=0.0.0.0, PORT=8000) and THINK_KWARGS='{"enable_thinking": true}'
# (the thinking-on setting of the README quick start and of the AR run results/ar-pp128-tg128-thinkON.json).
# Started in a container as the folder's README quick start runs the image.
docker run --rm -d --name qwen36-35b-a3b-dflash --runtime=nvidia --gpus all --network=host -v ~/models:/models:ro \
  qwen36-35b-a3b-dflash-spark \
  vllm serve /models/Qwen3.6-35B-A3B-NVFP4 \
    --served-model-name qwen36-35b-a3b \
    --host 0.0.0.0 --port 8000 \
    --tensor-parallel-size 1 \
    --gpu-memory-utilization 0.92 \
    --max-model-len 262144 \
    --max-num-batched-tokens 4096 \
    --max-num-seqs 1 \
    --trust-remote-code \
    --load-format fastsafetensors \
    --attention-backend flash_attn \
    --enable-prefix-caching \
    --seed 0 \
    --default-chat-template-kwargs '{"enable_thinking": true}'
