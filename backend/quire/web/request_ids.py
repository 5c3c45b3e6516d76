"""Request ids: every web request gets one (or keeps a sane `X-Request-ID`), bound to each log
line it produces (`logs.py`) and sent back in the response."""

from __future__ import annotations

import re
import uuid

import structlog
from litestar.datastructures import MutableScopeHeaders
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")


class RequestIdMiddleware(ASGIMiddleware):
    """Give every web request an id (or keep a sane X-Request-ID), bind it to every log line the
    request produces, and send it back in the response."""

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        incoming = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if _SAFE_ID.match(incoming) else uuid.uuid4().hex

        async def with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableScopeHeaders.from_message(message)["x-request-id"] = request_id
            await send(message)

        with structlog.contextvars.bound_contextvars(request_id=request_id):
            await next_app(scope, receive, with_id)
