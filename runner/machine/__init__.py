"""The machine's state around a sweep: preflight (engines, image, GPU, interface, ports),
each host's passport before and after, the GPU sampler during it. May import the catalogue, runner.scripts,
runner.hosts and runner.planning."""
