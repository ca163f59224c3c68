# TechPreacher/dgx-spark-vllm-cluster qwen/launch-qwen-122b.sh L40-52 at commit 0c356fff0efff38c4d77e5080823e9a1796dd64d
# (https://github.com/TechPreacher/dgx-spark-vllm-cluster/blob/0c356fff0efff38c4d77e5080823e9a1796dd64d/qwen/launch-qwen-122b.sh). The script runs it in the head node's Ray container with
# docker exec -it -e VLLM_API_KEY=... $CONTAINER /bin/bash -c '... exec vllm serve ...'; this is the vllm serve
# after 'exec', as written (catalogue new refuses docker exec).
vllm serve Qwen/Qwen3.5-122B-A10B-FP8 \
    --served-model-name qwen35_122b_thinking \
    --host 0.0.0.0 --port 8000 \
    --tensor-parallel-size 2 \
    --max-num-seqs 4 \
    --max-model-len 65536 \
    --max-num-batched-tokens 16384 \
    --gpu-memory-utilization 0.85 \
    --enable-prefix-caching \
    --reasoning-parser qwen3 \
    --enable-auto-tool-choice \
    --tool-call-parser qwen3_coder \
    --trust-remote-code
