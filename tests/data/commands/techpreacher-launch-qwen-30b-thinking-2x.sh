# TechPreacher/dgx-spark-vllm-cluster qwen/launch-qwen-30b.sh L26-37 at commit 0c356fff0efff38c4d77e5080823e9a1796dd64d
# (https://github.com/TechPreacher/dgx-spark-vllm-cluster/blob/0c356fff0efff38c4d77e5080823e9a1796dd64d/qwen/launch-qwen-30b.sh). The script runs it in the head node's Ray container with
# docker exec -it -e VLLM_API_KEY=... $CONTAINER /bin/bash -c '... exec vllm serve ...'; this is the vllm serve
# after 'exec', as written (catalogue new refuses docker exec).
vllm serve Qwen/Qwen3-30B-A3B-Thinking-2507-FP8 \
    --served-model-name qwen3_30b_thinking \
    --host 0.0.0.0 --port 8000 \
    --tensor-parallel-size 2 \
    --max-num-seqs 8 \
    --max-model-len 131072 \
    --max-num-batched-tokens 32768 \
    --gpu-memory-utilization 0.70 \
    --enable-prefix-caching \
    --reasoning-parser deepseek_r1 \
    --enable-auto-tool-choice \
    --tool-call-parser hermes
