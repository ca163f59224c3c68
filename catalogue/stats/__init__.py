"""The statistics of runs: order statistics and per-request samples, the capacity search
and its verdicts, regressions (rules, samples, what differs), machine speed, GPU samples and energy, prices,
the engine's own clock, speculative decoding counters, Prometheus text, and the one table of figures (metrics).
May import models/ and policy/; nothing above."""
