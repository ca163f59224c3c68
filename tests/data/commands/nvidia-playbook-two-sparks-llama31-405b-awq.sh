# NVIDIA/dgx-spark-playbooks nvidia/vllm/README.md L450,453 at commit 0db7c141da60870ca6ed5c99436320f4e35cd531
# (https://github.com/NVIDIA/dgx-spark-playbooks/blob/0db7c141da60870ca6ed5c99436320f4e35cd531/nvidia/vllm/README.md), Run on two Sparks, Step 11.
# The playbook runs it inside the head node's Ray container (docker exec ... /bin/bash -c '...'); catalogue new refuses
# docker exec, so this is the vllm serve inside the quotes, exactly as written, with the closing quote left out.
  vllm serve hugging-quants/Meta-Llama-3.1-405B-Instruct-AWQ-INT4 \
    --tensor-parallel-size 2 --max-model-len 64 --gpu-memory-utilization 0.9 \
    --max-num-seqs 1 --max-num-batched-tokens 64 \
    --distributed-executor-backend ray
