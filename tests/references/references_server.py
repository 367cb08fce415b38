"""A scripted OpenAI-compatible server for reference-construction tests (FastAPI + uvicorn).

Each request is answered by ``script(model, prompt, seed)``, a Python function the test
sets, returning ``{"text": ..., "finish_reason": ...}`` or ``{"status": 500}`` (an HTTP
error). Every request is logged (model, seed, prompt, status), so tests can check which
seeds were sent and how often. Runs in a background thread of the test process.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from starlette.responses import Response

Reply = dict[str, Any]
Script = Callable[[str, str, int | None], Reply]


@dataclass
class ServerState:
    script: Script = lambda model, prompt, seed: {"text": "{}"}
    models: list[str] = field(default_factory=list)
    delay: float = 0.0
    log: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _prompt(body: dict[str, Any]) -> tuple[str, bool]:
    texts, image = [], False
    for message in body.get("messages", []):
        for part in message.get("content") or []:
            if part.get("type") == "text":
                texts.append(part.get("text", ""))
            elif part.get("type") == "image_url":
                image = part["image_url"]["url"].startswith("data:image/")
    return "\n".join(texts), image


def build_app(state: ServerState) -> FastAPI:
    app = FastAPI()

    @app.get("/v1/models")
    async def models() -> Any:
        return {"object": "list", "data": [{"id": m, "object": "model"} for m in state.models]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        body = await request.json()
        prompt, image = _prompt(body)
        model, seed = body.get("model", ""), body.get("seed")
        if state.delay:
            await asyncio.sleep(state.delay)
        reply = state.script(model, prompt, seed)
        entry = {"t": time.time(), "model": model, "seed": seed, "prompt": prompt,
                 "image": image, "status": reply.get("status", 200)}  # fmt: skip
        with state.lock:
            state.log.append(entry)
        if "status" in reply:
            error = {
                "error": {"message": reply.get("message", "injected"), "code": reply["status"]}
            }
            return Response(
                json.dumps(error), status_code=reply["status"], media_type="application/json"
            )
        text = reply.get("text", "")
        payload = {
            "id": "chatcmpl-ref",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": reply.get("finish_reason", "stop"),
                }
            ],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(text.split())},
        }
        return Response(json.dumps(payload), media_type="application/json")

    return app


class ReferenceServer:
    """The app on 127.0.0.1 and a free port, in a thread; ``base_url`` ends in ``/v1``."""

    def __init__(self, state: ServerState | None = None) -> None:
        self.state = state or ServerState()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> ReferenceServer:
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(1024)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            build_app(self.state), log_level="error", access_log=False, lifespan="off"
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

    def __exit__(self, *_: object) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
