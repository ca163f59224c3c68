"""The simulator's OpenAI-compatible HTTP server (aiohttp, which vLLM's own client also uses): the engine of
simulator/engine.py stepped in real time, tokens streamed as vLLM streams them (one SSE event per token, a usage
event, `[DONE]`)."""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any

from aiohttp import web

from simulator.engine import Engine, Request, block_hashes
from simulator.metrics import Metrics
from simulator.profile import Profile


@dataclass
class Settings:
    """What the command line decided."""

    names: list[str]
    """Served model names; the first is reported."""
    max_model_len: int | None
    seed: int


LATE_S = 0.001
"""A step that ended more than this after its planned end ran late: the host, not the model, set its length."""


@dataclass
class Lateness:
    """How well the server kept its model's schedule: each step's end against its planned end (the previous step's
    end plus its duration). A starved event loop (other work on the CPUs) shows here, not in the model."""

    steps: int = 0
    late: int = 0
    worst_s: float = 0.0

    def record(self, late_s: float) -> None:
        self.steps += 1
        self.late += late_s > LATE_S
        self.worst_s = max(self.worst_s, late_s)

    def text(self) -> str:
        share = self.late / self.steps if self.steps else 0.0
        return (
            f"simulator: lateness: {self.steps} steps, {self.late} ({share:.1%}) ended more than "
            f"{LATE_S * 1000:g} ms after their planned end, the latest by {self.worst_s * 1000:.1f} ms"
        )


def lateness_line(log: Path) -> str:
    """The last lateness line a simulator wrote to its log (`Lateness.text`, printed when it stops)."""
    lines = [line for line in log.read_text().splitlines() if "lateness:" in line] if log.is_file() else []
    return lines[-1] if lines else "simulator: no lateness line in its log"


class Simulated:
    """The server's state: the engine, each request's token queue, the counters."""

    def __init__(self, profile: Profile, engine: Engine, encode: Any, settings: Settings) -> None:
        self.profile = profile
        self.engine = engine
        self.encode = encode
        self.settings = settings
        self.metrics = Metrics()
        self.queues: dict[int, asyncio.Queue[float]] = {}
        self.wake = asyncio.Event()
        self.ids = count()
        self.failures = random.Random(settings.seed + 1)
        self.lateness = Lateness()

    async def run_engine(self) -> None:
        """Step the engine for ever: each step ends `duration` after the previous one ended (or after now, when the
        engine was idle or late), so the event loop's lateness does not add up over steps."""
        loop = asyncio.get_running_loop()
        end = loop.time()
        while True:
            if not self.engine.busy:
                self.wake.clear()
                await self.wake.wait()
                end = loop.time()
            step = self.engine.plan()
            planned = end + step.duration_s
            end = max(end, loop.time() - step.duration_s) + step.duration_s
            await asyncio.sleep(max(0.0, end - loop.time()))
            self.lateness.record(loop.time() - planned)
            now = time.monotonic()
            for request in self.engine.finish(step, now):
                if (queue := self.queues.get(request.rid)) is not None:
                    for _ in range(request.new_tokens):
                        queue.put_nowait(now)

    def tokens(self, text: str) -> list[int]:
        return list(self.encode(text))

    async def generate(self, http: web.Request, prompt: list[int], body: dict, chat: bool) -> web.StreamResponse:
        """Queue one request and answer it, streamed or whole."""
        arrival = time.monotonic()
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        limit = 16 if limit is None else limit
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            return _error(400, "max_tokens must be a positive integer")
        if self.settings.max_model_len is not None and len(prompt) + limit > self.settings.max_model_len:
            return _error(400, f"prompt ({len(prompt)}) + max_tokens ({limit}) exceeds max_model_len")
        if self.failures.random() < self.profile.fail_share:
            self.metrics.failed += 1
            return _error(500, "simulated failure (the profile's fail_share)")
        if self.profile.api_ms:
            await asyncio.sleep(self.profile.api_ms / 1000)
        rid = next(self.ids)
        request = Request(rid, max(1, len(prompt)), limit, arrival, block_hashes(prompt, self.profile.block_size))
        queue: asyncio.Queue[float] = asyncio.Queue()
        self.queues[rid] = queue
        self.engine.add(request)
        self.wake.set()
        try:
            if body.get("stream"):
                return await self._stream(http, request, queue, body, chat)
            while not request.finished:
                await queue.get()
            return web.json_response(_whole(self, request, chat))
        finally:
            del self.queues[rid]
            if not request.finished:
                self.engine.abort(request)
            self._account(request)

    async def _stream(
        self, http: web.Request, request: Request, queue: asyncio.Queue[float], body: dict, chat: bool
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(http)
        head = _head(self, request, chat)
        text = json.dumps(self.profile.token_text)
        sent = 0
        while sent < request.max_tokens:  # one event a token, several a step when drafts were accepted
            await queue.get()
            sent += 1
            reason = '"length"' if sent == request.max_tokens else "null"
            if chat:
                role = '"role":"assistant",' if sent == 1 else ""
                choice = f'{{"index":0,"delta":{{{role}"content":{text}}},"logprobs":null,"finish_reason":{reason}}}'
            else:
                choice = f'{{"index":0,"text":{text},"logprobs":null,"finish_reason":{reason},"stop_reason":null}}'
            await response.write(f'data: {{{head},"choices":[{choice}],"usage":null}}\n\n'.encode())
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = json.dumps(_usage(request))
            await response.write(f'data: {{{head},"choices":[],"usage":{usage}}}\n\n'.encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    def _account(self, request: Request) -> None:
        """Count a request that ended (its histograms as vLLM records them: TPOT over the tokens after the first)."""
        if request.first_token is None or request.last_token is None:
            return
        m = self.metrics
        m.ttft.observe(request.first_token - request.arrival)
        m.e2e.observe(request.last_token - request.arrival)
        if request.generated > 1:
            m.tpot.observe((request.last_token - request.first_token) / (request.generated - 1))
        for before, after in zip(request.token_times, request.token_times[1:], strict=False):
            m.itl.observe(after - before)
        m.prompt_tokens += request.prompt
        m.generation_tokens += request.generated
        m.success += request.finished


def _head(state: Simulated, request: Request, chat: bool) -> str:
    kind = "chat.completion.chunk" if chat else "text_completion"
    prefix = "chatcmpl" if chat else "cmpl"
    name = json.dumps(state.settings.names[0])
    return f'"id":"{prefix}-{request.rid}","object":"{kind}","created":{int(time.time())},"model":{name}'


def _usage(request: Request) -> dict[str, int]:
    return {
        "prompt_tokens": request.prompt,
        "total_tokens": request.prompt + request.generated,
        "completion_tokens": request.generated,
    }


def _whole(state: Simulated, request: Request, chat: bool) -> dict:
    text = state.profile.token_text * request.generated
    if chat:
        choice: dict = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
    else:
        choice = {"index": 0, "text": text, "finish_reason": "length", "logprobs": None}
    head = json.loads("{" + _head(state, request, chat).replace(".chunk", "") + "}")
    return {**head, "choices": [choice], "usage": _usage(request)}


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "BadRequestError", "code": status}}, status=status)


def _prompt_text(prompt: Any) -> str | list[int] | None:
    """A completions prompt: text, or token ids; None when neither."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        return prompt[0]
    if isinstance(prompt, list) and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
        return prompt
    return None


def _chat_text(messages: Any) -> str | None:
    """The messages as one text ('role: content' lines; parts of type text joined); None when malformed."""
    if not isinstance(messages, list) or not messages:
        return None
    lines = []
    for message in messages:
        if not isinstance(message, dict):
            return None
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        lines.append(f"{message.get('role', 'user')}: {content}")
    return "\n".join(lines)


def make_app(state: Simulated) -> web.Application:
    """The routes: /v1/completions, /v1/chat/completions, /v1/models, /health, /metrics, /version."""

    async def body_of(http: web.Request) -> dict | None:
        try:
            data = await http.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        return data if isinstance(data, dict) else None

    async def completions(http: web.Request) -> web.StreamResponse:
        body = await body_of(http)
        prompt = _prompt_text(body.get("prompt")) if body else None
        if body is None or prompt is None:
            return _error(400, "a JSON body with a prompt (text or token ids) is needed")
        tokens = state.tokens(prompt) if isinstance(prompt, str) else prompt
        return await state.generate(http, tokens, body, chat=False)

    async def chat(http: web.Request) -> web.StreamResponse:
        body = await body_of(http)
        text = _chat_text(body.get("messages")) if body else None
        if body is None or text is None:
            return _error(400, "a JSON body with a list of messages is needed")
        return await state.generate(http, state.tokens(text), body, chat=True)

    async def models(_: web.Request) -> web.Response:
        data = [{"id": name, "object": "model", "owned_by": "simulator"} for name in state.settings.names]
        return web.json_response({"object": "list", "data": data})

    async def health(_: web.Request) -> web.Response:
        return web.Response(status=200)

    async def version(_: web.Request) -> web.Response:
        return web.json_response({"version": "simulator"})

    async def metrics(_: web.Request) -> web.Response:
        cache = state.engine.cache
        text = state.metrics.page(
            state.settings.names[0],
            running=len(state.engine.running),
            waiting=len(state.engine.waiting),
            queries=cache.queries if cache else 0,
            hits=cache.hits if cache else 0,
            spec=state.engine.spec if state.engine.spec_tokens else None,
        )
        return web.Response(text=text, content_type="text/plain")

    async def start_engine(app: web.Application) -> None:
        app["engine"] = asyncio.create_task(state.run_engine())

    async def report(_: web.Application) -> None:
        print(state.lateness.text(), flush=True)

    app = web.Application(client_max_size=64 * 1024**2)
    app.router.add_post("/v1/completions", completions)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/health", health)
    app.router.add_get("/version", version)
    app.router.add_get("/metrics", metrics)
    app.on_startup.append(start_engine)
    app.on_cleanup.append(report)
    return app
