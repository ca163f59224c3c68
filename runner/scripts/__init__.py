"""Files the runner runs outside this Python: the benchmark client's driver and the probes
of a host (passport, GPU sampler, facts), mounted into or copied beside a container. Standard library only: they
import nothing of the tree (the driver finds passport_probe beside itself)."""
