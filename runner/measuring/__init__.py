"""One boot of a recipe's servers and what is measured against it: launch and readiness,
Ray, the sweep with vLLM's bench client, the capacity search, the state gates, quality checks, the Arena profile.
May import the catalogue and every runner package below it (scripts, hosts, planning, machine, recording) and
runner.state."""
