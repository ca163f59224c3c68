"""A measured run as a run file: provenance, the run file written; --resume and
`reproduce --refresh` checks. May import the catalogue and the runner's lower packages (scripts, hosts, planning,
machine) and runner.state."""
