"""How `quire web` meets slow clients: deadlines for request headers and for request bodies.

uvicorn closes idle keep-alive connections but has no read timeout of its own, so a client that
sends one header byte every few seconds (or stops halfway through a body) holds a connection and
its memory for as long as it likes. Two small pieces close that gap:

- `HeaderDeadlineProtocol`, uvicorn's httptools protocol passed as `uvicorn.run(http=...)` (its
  public way to choose the protocol class): the request line and headers must arrive within
  `QUIRE_HEADER_TIMEOUT_S` of the connection opening or the previous response ending, else 408
  and the connection is closed. It subclasses uvicorn's internals (the hooks below and the
  `cycle` and `pipeline` attributes), so pyproject pins uvicorn to one minor version and
  `tests/unit/test_library_shims.py` fails loudly when they change.
- `BodyDeadlineMiddleware`, plain ASGI: while a request body is still coming, each `receive()`
  must return within `QUIRE_BODY_TIMEOUT_S` (as nginx's `client_body_timeout`), and the whole
  body must arrive within `max(QUIRE_BODY_TIMEOUT_S, its length / QUIRE_BODY_MIN_RATE_KB_S)`, so
  a large upload on a slow but steady link succeeds while a drip of one byte a second does not
  hold the connection for days. Else 408.

`tests/integration/test_security.py` drives both with a raw socket.
"""

from __future__ import annotations

import asyncio
from functools import cache
from typing import Any

from litestar.enums import ScopeType
from litestar.exceptions import HTTPException
from litestar.types import ASGIApp, Receive, ReceiveMessage, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from quire.settings import Settings

REQUEST_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


@cache
def _header_timeout_s() -> float:
    """uvicorn builds the protocol itself, in each of its processes, and hands it nothing of ours:
    so the protocol reads its one setting from the environment, once per process, as the app
    factory (`create_app`) does for the rest."""
    return Settings().header_timeout_s


class HeaderDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, with a deadline for each request's line and headers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        self._disarm()
        self._header_deadline = self.loop.call_later(_header_timeout_s(), self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        # Only between requests: a raw 408 written while a request is being answered would land
        # inside that response (a pipelined request, or a body still streaming).
        between_requests = self.cycle is None or self.cycle.response_complete
        if between_requests and not self.transport.is_closing():
            self.transport.write(REQUEST_TIMEOUT)
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        waiting = bool(self.pipeline)  # a pipelined request whose headers are already in
        super().on_response_complete()
        if not waiting and not self.transport.is_closing():
            self._arm()  # the next request on this connection gets the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


class BodyDeadlineMiddleware:
    """ASGI middleware: a request body that stalls for `QUIRE_BODY_TIMEOUT_S`, or comes slower
    than `QUIRE_BODY_MIN_RATE_KB_S` overall, is answered 408."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        settings = self.settings
        timeout = settings.body_timeout_s
        length = _content_length(scope) or settings.max_upload_bytes
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(timeout, length / (settings.body_min_rate_kb_s * 1024))
        body_done = False

        async def receive_with_deadline() -> ReceiveMessage:
            nonlocal body_done
            if body_done:
                # After the body, receive() waits for the client to go away (streams rely on that).
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, min(timeout, deadline - loop.time())))
            except TimeoutError:
                raise HTTPException(status_code=408, detail="The request body arrived too slowly.") from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        await self.app(scope, receive_with_deadline, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
