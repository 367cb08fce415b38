"""A scripted OpenAI-compatible server on loopback: reference construction without a GPU.

``crystal references demo-server`` (and ``crystal demo --construction``, which starts one)
serves :class:`~crystalbench.demo.models.DemoModels` (four generators, a validator
and the sample's model styles, answering from the bundled sample) over the two routes
``crystal references build`` and ``crystal infer`` use:

- ``GET /v1/models``: the names it serves;
- ``POST /v1/chat/completions``: one completion (``n`` 1, no streaming), the image taken from
  the first ``image_url`` data URL, the prompt from the text parts, the seed from ``seed``.

Point any ``--generator NAME=URL`` / ``--validator NAME=URL`` / ``crystal infer --base-url``
at its URL; swap in real URLs for a real build. It is Starlette served by uvicorn (the
``serve`` extra), behind the request guard both crystalbench servers use
(:mod:`crystalbench.serving`), and it listens on loopback only: it answers anyone who can
connect, with no key.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import threading
import time
from http import HTTPStatus
from typing import Any

from crystalbench.config.settings import (
    REFERENCES_DEMO_PORT,
    SERVING_BODY_GRACE_S,
    SERVING_MIN_BODY_BYTES_PER_S,
)
from crystalbench.demo.models import (
    GENERATORS,
    MODEL_STYLES,
    VALIDATOR,
    DemoModels,
    DemoRequest,
)
from crystalbench.errors import CrystalbenchError, InputError
from crystalbench.serving.connections import (
    bind_socket,
    check_port,
    guarded_protocol,
    is_loopback,
    require_server_stack,
)
from crystalbench.serving.limits import HttpError, RequestGuard, decode_json_body

__all__ = ["DemoServer", "build_demo_app", "served_models"]

logger = logging.getLogger("crystalbench.demo.server")

_MAX_BODY_BYTES = 64 * 1024 * 1024
_MAX_HEADER_BYTES = 16 * 1024


def served_models() -> list[str]:
    """The model names ``/v1/models`` lists (any other name is answered too).

    Examples:
        >>> served_models()[:2], "validator" in served_models()
        (['gen-literal', 'gen-grounded'], True)
    """
    return [*GENERATORS, VALIDATOR, *MODEL_STYLES]


def _prompt_and_image(body: dict[str, Any]) -> tuple[str, bytes | None]:
    """The text of every message and the first data-URL image of a chat request."""
    texts: list[str] = []
    image: bytes | None = None
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise HttpError(HTTPStatus.BAD_REQUEST, "messages must be a non-empty list")
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif part.get("type") == "image_url" and image is None:
                url = str((part.get("image_url") or {}).get("url", ""))
                if url.startswith("data:") and "," in url:
                    try:
                        image = base64.b64decode(url.split(",", 1)[1], validate=True)
                    except (binascii.Error, ValueError):
                        raise HttpError(HTTPStatus.BAD_REQUEST, "image is not base64") from None
    return "\n".join(texts), image


def _completion(model: str, text: str, prompt: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-demo-{abs(hash((model, text))) % 10**12}",
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
            "prompt_tokens": len(prompt.split()),
            "completion_tokens": len(text.split()),
            "total_tokens": len(prompt.split()) + len(text.split()),
        },
    }


class _OpenAIErrors(RequestGuard):
    """The shared guard, refusing in the OpenAI error format."""

    def refusal(self, status: HTTPStatus, message: str) -> tuple[bytes, bytes]:
        body = {"error": {"message": message, "type": "invalid_request_error"}}
        return b"application/json", json.dumps(body).encode()


def build_demo_app(models: DemoModels | None = None) -> Any:
    """The ASGI app (Starlette behind the shared request guard) serving ``models`` (default:
    the bundled sample's, :meth:`DemoModels.from_sample`)."""
    require_server_stack("the demo server", "serve")
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    scripted = models if models is not None else DemoModels.from_sample()

    def error(status: HTTPStatus, message: str) -> Any:
        body = {"error": {"message": message, "type": "invalid_request_error"}}
        return JSONResponse(body, status_code=status)

    async def list_models(request: Any) -> Any:
        data = [{"id": name, "object": "model", "owned_by": "crystalbench-demo"}
                for name in served_models()]  # fmt: skip
        return JSONResponse({"object": "list", "data": data})

    async def chat(request: Any) -> Any:
        try:
            raw = await request.body()
            try:
                body = decode_json_body(raw, max_depth=32, max_int_digits=100)
            except ValueError as exc:
                raise HttpError(HTTPStatus.BAD_REQUEST, str(exc)) from None
            model = body.get("model")
            if not isinstance(model, str) or not model:
                raise HttpError(HTTPStatus.BAD_REQUEST, "model must be a non-empty string")
            if body.get("stream"):
                raise HttpError(HTTPStatus.BAD_REQUEST, "the demo server does not stream")
            if body.get("n") not in (None, 1):
                raise HttpError(HTTPStatus.BAD_REQUEST, "the demo server answers n=1 only")
            seed = body.get("seed")
            if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
                raise HttpError(HTTPStatus.BAD_REQUEST, "seed must be an integer")
            prompt, image = _prompt_and_image(body)
        except HttpError as exc:
            return error(exc.status, exc.message)
        demo = DemoRequest(model=model, prompt=prompt, image=image, seed=seed)
        text = await run_in_threadpool(scripted.reply, demo)
        return JSONResponse(_completion(model, text, prompt))

    async def not_found(request: Any, exc: Exception) -> Any:
        return error(HTTPStatus.NOT_FOUND, f"no route {request.url.path}")

    app = Starlette(
        routes=[
            Route("/v1/models", list_models, methods=["GET"]),
            Route("/v1/chat/completions", chat, methods=["POST"]),
        ],
        exception_handlers={404: not_found},
    )
    return _OpenAIErrors(
        app,
        max_header_bytes=_MAX_HEADER_BYTES,
        max_body_bytes=_MAX_BODY_BYTES,
        realm="crystalbench-demo",
        min_body_bytes_per_s=SERVING_MIN_BODY_BYTES_PER_S,
        body_grace_s=SERVING_BODY_GRACE_S,
    )


class DemoServer:
    """The demo server on a loopback port, in a background thread (a context manager), or in
    the foreground (:meth:`serve_forever`).

    Args:
        port: TCP port (0: a free one; see :attr:`url`).
        host: A loopback address (anything else is refused: the server has no key).
        models: The scripted models (default: the bundled sample's).

    Raises:
        InputError: ``host`` is not loopback, or ``port`` is not a port number.
        OSError: The port is in use.

    Examples:
        >>> with DemoServer(port=0) as server:
        ...     server.url.startswith("http://127.0.0.1:"), server.url.endswith("/v1")
        (True, True)
    """

    def __init__(
        self, port: int = REFERENCES_DEMO_PORT, *, host: str = "127.0.0.1",
        models: DemoModels | None = None,
    ) -> None:  # fmt: skip
        require_server_stack("the demo server", "serve")
        check_port(port)
        if not is_loopback(host):
            raise InputError(
                f"the demo server listens on loopback only (it answers anyone, with no key); "
                f"got {host!r}: use 127.0.0.1",
                field="--host",
            )
        import uvicorn

        self.host = host
        self._socket = bind_socket(host, port, backlog=256)
        self._server = uvicorn.Server(
            uvicorn.Config(
                build_demo_app(models),
                http=guarded_protocol(idle_timeout_s=30.0, header_timeout_s=10.0),
                lifespan="off",
                log_config=None,
                log_level=logging.WARNING,
                access_log=False,
                h11_max_incomplete_event_size=_MAX_HEADER_BYTES,
                server_header=False,
            )
        )
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._socket.getsockname()[1])

    @property
    def url(self) -> str:
        """The base URL clients use (ends in ``/v1``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def __enter__(self) -> DemoServer:
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True,
            name="demo-server",
        )  # fmt: skip
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if self._thread is not None and not self._thread.is_alive():
                raise CrystalbenchError("the demo server stopped while starting")
            if time.monotonic() > deadline:
                raise CrystalbenchError("the demo server did not start within 30 s")
            time.sleep(0.01)
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving (a background server's thread is joined)."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._socket.close()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (Ctrl-C)."""
        try:
            self._server.run(sockets=[self._socket])
        finally:
            self._socket.close()
