"""A scriptable OpenAI-compatible chat server on loopback, for tests and benchmarks.

The server speaks ``POST /v1/chat/completions`` like vLLM, SGLang or the OpenAI API. It
decodes the request's image (a base64 data URL) with Pillow, answers from a script keyed
by a substring of the prompt (the question text), and can inject faults per attempt:

- ``{"status": 429, "retry_after": "1"}``: an HTTP error with an optional ``Retry-After``
  (``retry_after_ms`` sends ``retry-after-ms`` instead);
- ``{"status": 500}``, ``{"status": 401}``...: any HTTP error;
- ``{"sleep": 2.0}``: answer after a delay (beyond the client's timeout: a timeout);
- ``{"drip": 0.5, "bytes": 20}``: send the headers at once, then the body one byte (a
  space, which JSON allows before the completion) every 0.5 s, ``bytes`` times, then
  the completion: every read finishes well within a per-read timeout, yet the whole
  answer takes 10 s. The log entry gets ``disconnected`` (the time the server saw the
  client hang up) or ``completed`` (the whole body was sent);
- ``{"garbage": "text"}`` / ``{"garbage": "json"}``: a 200 whose body is not a completion;
- ``{"ok": true}``: answer normally (useful after faults).

A request with ``logprobs: true`` is answered from ``logprobs`` (prompt substring ->
``{token: logprob}``): the most likely token is the reply and every token is among the first
token's ``top_logprobs``; a key without an entry gets no ``logprobs`` at all (a server that
gives none). ``fingerprint`` is sent as ``system_fingerprint``; ``served_model`` (when set)
as the reply's ``model``. Each log entry notes the request's ``response_format`` type,
``logprobs``, ``guided_choice`` and ``max_tokens``.

Faults for a key are consumed one per request; once exhausted the server answers. A
global ``max_image_side`` rejects larger images with a 400 saying the image is too large,
as real servers do. Two global modes apply to every prompt: ``drip`` (seconds per byte,
``drip_bytes`` bytes) drips every answer as above, and ``retry_after`` answers the first
request of each prompt with a 429 carrying that ``Retry-After`` value.

Every request is logged (time, key, image size, status) for tests to inspect: directly
(:attr:`ServerState.log`) when the server runs in a thread, or through ``GET /_log`` when
it runs in a subprocess (``python tests/servers/openai_server.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import io
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from starlette.responses import JSONResponse, Response, StreamingResponse

DEFAULT_STEPS = ["The image is {w} by {h} pixels.", "The question is read from the prompt."]


@dataclass
class ServerState:
    """What the server answers and what it has seen."""

    answers: dict[str, str] = field(default_factory=dict)
    """Prompt substring -> response text (the first key found in the prompt wins)."""
    faults: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Prompt substring -> faults, consumed one per request."""
    default_answer: str = "A"
    """Answer of the default CRYSTAL-JSON response."""
    max_image_side: int | None = None
    """Reject images with a larger side (400, "image too large")."""
    delay: float = 0.0
    """Seconds to wait before every answer (a slow server)."""
    decode_images: bool = True
    """Decode images with Pillow (off for the throughput benchmark: answer instantly)."""
    drip: float = 0.0
    """Seconds between the bytes of every answer (0: answer at once)."""
    drip_bytes: int = 20
    """Bytes dripped before the completion (with ``drip``)."""
    retry_after: str | None = None
    """Answer the first request of each prompt 429 with this ``Retry-After`` value."""
    rate_limited: set[str] = field(default_factory=set)
    """Prompt keys already answered 429 in the ``retry_after`` mode."""
    logprobs: dict[str, dict[str, float]] = field(default_factory=dict)
    """Prompt substring -> first-token log-probabilities (for ``logprobs: true`` requests)."""
    fingerprint: str | None = None
    """``system_fingerprint`` of every reply."""
    served_model: str | None = None
    """The ``model`` every reply names (default: the requested one)."""
    model_answers: dict[str, dict[str, str]] = field(default_factory=dict)
    """Requested model -> its own ``answers`` (checked before ``answers``): several judges
    on one server that disagree."""
    log: list[dict[str, Any]] = field(default_factory=list)
    generation: int = 0
    """Bumped by :meth:`configure`: a request received under an older script (one still
    sleeping after its client timed out, in an earlier test) is not logged into the new one."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def key_for(self, prompt: str) -> str | None:
        """The script key found in ``prompt``: the longest key that occurs in it."""
        own = [k for answers in self.model_answers.values() for k in answers]
        keys = [k for k in (*self.answers, *self.faults, *self.logprobs, *own) if k in prompt]
        return max(keys, key=len) if keys else None

    def next_fault(self, key: str | None) -> dict[str, Any] | None:
        if key is None:
            return None
        with self.lock:
            queue = self.faults.get(key)
            if queue:
                return queue.pop(0)
        return None

    def configure(self, script: dict[str, Any]) -> None:
        """Replace the script (answers, faults, max_image_side, delay, decode_images,
        drip, drip_bytes, retry_after)."""
        with self.lock:
            self.answers = dict(script.get("answers", {}))
            self.faults = {k: list(v) for k, v in script.get("faults", {}).items()}
            self.default_answer = script.get("default_answer", "A")
            self.max_image_side = script.get("max_image_side")
            self.delay = float(script.get("delay", 0.0))
            self.decode_images = bool(script.get("decode_images", True))
            self.drip = float(script.get("drip", 0.0))
            self.drip_bytes = int(script.get("drip_bytes", 20))
            self.retry_after = script.get("retry_after")
            self.logprobs = {k: dict(v) for k, v in script.get("logprobs", {}).items()}
            self.fingerprint = script.get("fingerprint")
            self.served_model = script.get("served_model")
            self.model_answers = {k: dict(v) for k, v in script.get("model_answers", {}).items()}
            self.rate_limited = set()
            self.log.clear()
            self.generation += 1

    def record(self, entry: dict[str, Any], generation: int) -> None:
        """Log ``entry`` of a request received under script ``generation`` (if still current)."""
        with self.lock:
            if generation == self.generation:
                self.log.append(entry)

    def first_request(self, key: str | None) -> bool:
        """True the first time ``key`` is asked for (for the ``retry_after`` mode)."""
        with self.lock:
            seen = (key or "") in self.rate_limited
            self.rate_limited.add(key or "")
        return not seen


def _prompt_and_image(body: dict[str, Any]) -> tuple[str, str | None]:
    texts: list[str] = []
    image_url = None
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content or []:
            if part.get("type") == "text":
                texts.append(part.get("text", ""))
            elif part.get("type") == "image_url":
                image_url = part["image_url"]["url"]
    return "\n".join(texts), image_url


def _decode_image(url: str) -> tuple[int, int]:
    from PIL import Image

    if not url.startswith("data:image/") or ";base64," not in url:
        raise ValueError("expected a base64 data URL")
    payload = base64.b64decode(url.split(";base64,", 1)[1], validate=True)
    with Image.open(io.BytesIO(payload)) as image:
        image.load()
        return image.size


def _completion(model: str, text: str, prompt_tokens: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt_tokens + len(text.split()),
        },
    }


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
    body = json.dumps({"error": {"message": message, "type": "test_error", "code": status}})
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def _dripping(
    request: Request, entry: dict[str, Any], payload: bytes, interval: float, n_bytes: int
) -> Any:
    """The body ``payload`` preceded by ``n_bytes`` spaces, one every ``interval`` seconds."""

    async def body() -> Any:
        try:
            for _ in range(n_bytes):
                if await request.is_disconnected():
                    return
                yield b" "
                await asyncio.sleep(interval)
            if await request.is_disconnected():
                return
            yield payload
            entry["completed"] = time.time()
        finally:  # the client hung up: seen here, or the stream was cancelled or closed
            if "completed" not in entry:
                entry["disconnected"] = time.time()

    return StreamingResponse(body(), media_type="application/json")


def build_app(state: ServerState) -> Any:
    """The FastAPI app serving ``state``."""
    app = FastAPI()

    @app.get("/v1/models")
    async def models() -> Any:
        return {"object": "list", "data": [{"id": "test-model", "object": "model"}]}

    @app.get("/_log")
    async def get_log() -> Any:
        with state.lock:
            return JSONResponse(list(state.log))

    @app.post("/_script")
    async def set_script(request: Request) -> Any:
        state.configure(await request.json())
        return {"ok": True}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        received = time.time()
        generation = state.generation
        body = await request.json()
        prompt, image_url = _prompt_and_image(body)
        key = state.key_for(prompt)
        entry: dict[str, Any] = {"t": received, "key": key, "image": None, "status": 200}
        entry["response_format"] = (body.get("response_format") or {}).get("type")
        entry["logprobs"] = bool(body.get("logprobs"))
        entry["guided_choice"] = body.get("guided_choice")
        entry["max_tokens"] = body.get("max_tokens")
        entry["model"] = body.get("model")
        size: tuple[int, int] | None = None
        if image_url is not None and state.decode_images:
            try:
                size = _decode_image(image_url)
            except (ValueError, binascii.Error, OSError) as exc:
                entry["status"] = 400
                state.record(entry, generation)
                return _error(400, f"could not decode the image: {exc}")
            entry["image"] = list(size)
        fault = state.next_fault(key)
        entry["fault"] = fault
        if state.delay:
            await asyncio.sleep(state.delay)
        if fault and "sleep" in fault:
            await asyncio.sleep(float(fault["sleep"]))
        if fault is None and state.retry_after is not None and state.first_request(key):
            fault = {"status": 429, "retry_after": state.retry_after, "message": "slow down"}
            entry["fault"] = fault
        if fault and "status" in fault:
            status = int(fault["status"])
            entry["status"] = status
            state.record(entry, generation)
            headers = {}
            if "retry_after" in fault:
                headers["Retry-After"] = str(fault["retry_after"])
            if "retry_after_ms" in fault:
                headers["retry-after-ms"] = str(fault["retry_after_ms"])
            return _error(status, fault.get("message", f"injected {status}"), headers)
        if fault and "garbage" in fault:
            entry["status"] = 200
            state.record(entry, generation)
            if fault["garbage"] == "json":
                return Response('{"choices": [', media_type="application/json")
            return Response("<html>upstream hiccup</html>", media_type="text/html")
        if size is not None and state.max_image_side and max(size) > state.max_image_side:
            entry["status"] = 400
            state.record(entry, generation)
            return _error(
                400,
                f"Image too large: {size[0]}x{size[1]} pixels exceeds the maximum side "
                f"{state.max_image_side}",
            )
        top: dict[str, float] | None = None
        if body.get("logprobs") and key is not None and key in state.logprobs:
            top = state.logprobs[key]
            text = max(top, key=lambda token: top[token]) if top else ""
        elif key is not None and key in state.model_answers.get(body.get("model"), {}):
            text = state.model_answers[body.get("model")][key]
        elif key is not None and key in state.answers:
            text = state.answers[key]
        else:
            w, h = size if size is not None else (0, 0)
            steps = [s.format(w=w, h=h) for s in DEFAULT_STEPS]
            text = json.dumps({"reasoning_steps": steps, "answer": state.default_answer})
        prompt_tokens = len(prompt.split()) + (size[0] * size[1] // 784 if size else 0)
        entry["prompt_tokens"] = prompt_tokens
        state.record(entry, generation)
        completion = _completion(
            state.served_model or body.get("model", "test-model"), text, prompt_tokens
        )
        if state.fingerprint is not None:
            completion["system_fingerprint"] = state.fingerprint
        if top is not None:
            first = max(top, key=lambda token: top[token]) if top else ""
            completion["choices"][0]["logprobs"] = {
                "content": [
                    {
                        "token": first,
                        "logprob": top.get(first, 0.0),
                        "bytes": None,
                        "top_logprobs": [
                            {"token": t, "logprob": lp, "bytes": None} for t, lp in top.items()
                        ],
                    }
                ]
            }
        payload = json.dumps(completion)
        interval = float(fault["drip"]) if fault and "drip" in fault else state.drip
        if interval > 0:
            n_bytes = int(fault.get("bytes", state.drip_bytes)) if fault else state.drip_bytes
            return _dripping(request, entry, payload.encode(), interval, n_bytes)
        return Response(payload, media_type="application/json")

    return app


class LoopbackServer:
    """Runs the app with uvicorn on 127.0.0.1 and a free port, in a background thread.

    Use as a context manager; :attr:`base_url` ends in ``/v1`` like vLLM's.
    """

    def __init__(self, state: ServerState | None = None) -> None:
        self.state = state or ServerState()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LoopbackServer:
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(2048)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            build_app(self.state),
            log_level="error",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("test server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


def main() -> None:
    """Serve in the foreground (subprocess mode); prints ``PORT <n>`` once listening."""
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--no-decode", action="store_true", help="do not decode images")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--drip", type=float, default=0.0, help="seconds between answer bytes")
    parser.add_argument("--retry-after", help="answer each prompt's first request 429 with this")
    args = parser.parse_args()
    state = ServerState(
        decode_images=not args.no_decode,
        delay=args.delay,
        drip=args.drip,
        retry_after=args.retry_after,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(2048)  # connections queue until uvicorn accepts them
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(build_app(state), log_level="error", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
