"""The run policy: what a recipe may ask of a machine (rules: every docker option,
environment variable and vLLM flag -> never / consent / note), how it is applied (check), mounts, environment,
flags, findings, docker's options (docker_options, docker_run: the docker CLI's own list), and credentials
(secret_scan, file_secrets). May import models/ and stats/, and detect-secrets; nothing above."""
