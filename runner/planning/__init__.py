"""What a refresh will run and whether it may: the plan (every node's command, router,
client, jobs), its data (plan_data), the helper containers, the dry run, and the run policy's two gates (on the
recipe's words; on docker's own view of each created container). May import the catalogue, runner.scripts and
runner.hosts."""
