# Conselara Labs, "DGX Spark Benchmark Results: vLLM on SM121" (https://conselara.dev/notes/dgx-spark-benchmarks/), section
# "Qwen3-235B-A22B-GPTQ-Int4 — Two-node cluster", measured 2026-05-03 on vLLM 0.19.0 (nvcr.io/nvidia/vllm:26.04-py3).
# The page lists the configuration, not a command line: "TP=2, EP=2, Ray cluster over QSFP-DD RoCE direct interconnect,
# --attention-backend=TRITON_ATTN, --quantization=gptq_marlin, --kv-cache-dtype=fp8, --gpu-memory-utilization=0.87".
# This is `vllm serve` on the Ray head with those settings: TP=2 as --tensor-parallel-size 2, EP=2 as
# --enable-expert-parallel (expert parallelism over the same two ranks), Ray as --distributed-executor-backend ray.
vllm serve Qwen/Qwen3-235B-A22B-GPTQ-Int4 \
  --tensor-parallel-size 2 \
  --enable-expert-parallel \
  --distributed-executor-backend ray \
  --attention-backend TRITON_ATTN \
  --quantization gptq_marlin \
  --kv-cache-dtype fp8 \
  --gpu-memory-utilization 0.87
