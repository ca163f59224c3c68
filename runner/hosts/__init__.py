"""Where a refresh runs: the owner's hosts file, the docker CLI per host, the runner's
containers and labels, docker's view of a container, CPU placement, process sessions (server), the recipe lock.
May import the catalogue and runner.scripts."""
