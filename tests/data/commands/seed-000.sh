# Seed 000 ("openai/gpt-oss-120b on ASUS GX10 / DGX Spark (concurrency-first)"), its "Full Launch Command"
# as the page prints it: one option per line, no backslashes (they are lost in the page's text), and the
# image, environment and container given as comments. The container line is used as written; the image
# and the environment are placed where docker run takes them.
docker run -d --name gptoss-120b --restart unless-stopped --runtime nvidia --gpus all --ipc host --shm-size 64g -p 8000:8000 -e VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 vllm-node-mxfp4 vllm serve openai/gpt-oss-120b
--host 0.0.0.0 --port 8000
--tool-call-parser openai
--reasoning-parser openai_gptoss
--enable-auto-tool-choice
--gpu-memory-utilization 0.70
--enable-prefix-caching
--load-format fastsafetensors
--quantization mxfp4
--mxfp4-backend CUTLASS
--mxfp4-layers moe,qkv,o,lm_head
--attention-backend FLASHINFER
--kv-cache-dtype fp8
--max-num-batched-tokens 8192
--compilation-config '{"cudagraph_capture_sizes":[1,2,4,5,8,10,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128,136,144,152,160,168,176,184,192,200,208,216,224,232,240,248,256,272,288,304,320,336,352,368,384,400,416,432,448,464,480,496,512,528,544,560,576,592,608,624,640,656,672,688,704,720,736,752,768,784,800,816,832,848,864,880,896,912,928,944,960,976,992,1008,1024]}'
