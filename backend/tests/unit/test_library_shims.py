"""The library internals Quire relies on are still there: an upgrade that changes them fails here,
loudly, instead of quietly turning a defence off.

- web/server.py subclasses uvicorn's httptools protocol: its hooks and its `cycle`/`pipeline`.
- web/csrf.py signs and checks Litestar CSRF tokens with names outside `litestar.middleware.csrf`'s
  `__all__`, and sets the scope state its `csrf_token()` template helper reads.
"""

from __future__ import annotations

import inspect

import uvicorn
from litestar.middleware import csrf as litestar_csrf
from litestar.utils.scope.state import ScopeState
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from quire.web.server import HeaderDeadlineProtocol


def test_uvicorn_is_the_minor_version_the_header_deadline_was_written_for() -> None:
    assert uvicorn.__version__.startswith("0.54."), uvicorn.__version__


def test_uvicorns_httptools_protocol_has_the_hooks_the_header_deadline_overrides() -> None:
    for hook in ("connection_made", "on_headers_complete", "on_response_complete", "connection_lost"):
        assert hook in vars(HttpToolsProtocol), hook
        assert hook in vars(HeaderDeadlineProtocol), hook
    init = inspect.getsource(HttpToolsProtocol.__init__)
    assert "self.cycle" in init
    assert "self.pipeline" in init
    assert "self.loop" in init
    assert "response_complete" in inspect.getsource(RequestResponseCycle.__init__)
    # uvicorn still moves `cycle` to a pipelined request when its headers are complete.
    assert "self.pipeline.appendleft" in inspect.getsource(HttpToolsProtocol.on_headers_complete)


def test_litestar_csrf_internals_web_csrf_uses() -> None:
    secret = "s" * 32
    token = litestar_csrf.generate_csrf_token(secret=secret)
    body = token[: litestar_csrf.CSRF_SECRET_LENGTH]
    assert token == body + litestar_csrf.generate_csrf_hash(token=body, secret=secret)
    assert "csrf_token" in ScopeState.__slots__
    checker = litestar_csrf.CSRFMiddleware
    assert "_decode_csrf_token" in vars(checker)
    assert "self.config.secret" in inspect.getsource(checker._decode_csrf_token)
