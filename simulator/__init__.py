"""A simulated vLLM server with a known latency model: the project's test instrument, never a source of figures.

The model (the numbers are a profile's, simulator/profiles/<name>.yaml):

- Requests queue in arrival order. Each engine step first serves the running requests (one decode token each, or the
  next chunk of a prompt), then admits waiting ones while fewer than `--max-num-seqs` run and the step's token budget,
  `--max-num-batched-tokens`, lasts (chunked prefill, as vLLM's scheduler). No preemption, no KV-cache limit.
- With prefix caching (on unless `--no-enable-prefix-caching`, as in vLLM), a prompt's full 16-token blocks are keyed
  by chained hashes of their token ids; at admission the leading blocks already cached count as computed and cost
  nothing; a prompt's blocks enter the cache when its prefill completes (least recently used leave first). Queries and
  hits are counted in tokens, whole blocks only, as vLLM's `vllm:prefix_cache_queries` / `_hits` counters.
- A step lasts step_ms + prefill_ms_per_token × (uncached prompt tokens in it) + decode_ms_per_seq × n +
  decode_ms_per_kctx × (context tokens of the n decoding sequences) / 1000 + decode_ms(n), where decode_ms is a curve
  by batch size (linear between its points); times `slowdown` when n > `slowdown_above`; times a mean-one lognormal
  noise factor exp(σz − σ²/2), z drawn per step from a generator seeded by `--seed`.
- When a step ends, every decoding sequence gets one token and every prompt that completed gets its first token.
  A request ends after exactly `max_tokens` tokens (no end-of-sequence: the runner sends `--ignore-eos`).
- With `--speculative-config` (its num_speculative_tokens k), each decoding sequence drafts k tokens a step; each is
  accepted with the profile's `spec_acceptance` while the ones before it were, so a step gives it 1 + accepted
  tokens at once (at most what it still owes), and costs spec_ms_per_token × k more per sequence. vLLM's
  speculative-decoding counters (drafts, draft tokens, accepted tokens, accepted by position) count them.
- A share `fail_share` of requests (seeded too) is answered HTTP 500 on arrival.

The server (simulator/server.py) steps this engine in real time and streams each token as its own SSE event, as
vLLM does; /metrics carries vLLM's names. simulator/truth.py runs the same model in virtual time: the true
percentiles of a level and the true capacity under an SLO, with no HTTP, client or clock in between.
"""
