"""The catalogue's files as typed models, and how they are read and written: recipe.yaml
(recipe), run files (benchmark), platform profiles, topology, workload keys, SLOs, launch commands, the kinds of
text, the Arena profile, quality checks, passports, reproduce commands; the YAML reader and writer, one-line errors,
atomic writes. May import the standard library, pydantic and YAML, and within the catalogue only policy/ (a
profile's docker options and a run file's secrets are judged as they are read) and stats/ (a run's figures): never
flags/, imports/, paste/, publish/, site/, commands/ or the runner."""
