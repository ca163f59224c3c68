# eugr/spark-vllm-docker recipes/gemma4-26b-a4b.yaml at commit 288da8e91170b643845099455769818080e8d4a1 (2026-04-04)
# (https://github.com/eugr/spark-vllm-docker/blob/288da8e91170b643845099455769818080e8d4a1/recipes/gemma4-26b-a4b.yaml), as its run-recipe.py
# renders it with --solo (run-recipe.py at that commit: tensor_parallel defaults to 1, '--distributed-executor-backend ray' is removed),
# with max_model_len 131072 for the "131K (solo)" context of kubis.ai's Gemma4-26B topology benchmark (2026-04-06).
vllm serve google/gemma-4-26B-A4B-it \
  --max-model-len 131072 \
  --gpu-memory-utilization 0.7 \
  --port 8000 \
  --host 0.0.0.0 \
  --load-format fastsafetensors \
  --enable-prefix-caching \
  --enable-auto-tool-choice \
  --tool-call-parser gemma4 \
  --reasoning-parser gemma4 \
  --quantization fp8 \
  --kv-cache-dtype fp8 \
  --max-num-batched-tokens 8192 \
  -tp 1
