"""CSRF tokens bound to the browser session: Litestar's CSRF check under a per-session key.

This module is also the one place that uses Litestar's CSRF internals (names outside its
`__all__`, and the scope state its `csrf_token()` template helper reads);
`tests/unit/test_library_shims.py` fails loudly when an upgrade changes them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from collections import OrderedDict
from typing import Any

from litestar.config.csrf import CSRFConfig
from litestar.connection import Request
from litestar.datastructures import Cookie, MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.middleware.csrf import CSRF_SECRET_LENGTH, CSRFMiddleware, generate_csrf_hash, generate_csrf_token
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from litestar.utils.scope.state import ScopeState

from quire.web.auth import SESSION_CSRF_KEY

CHECKERS_KEPT = 4096
# The header htmx and our upload script send the token in. A request without it carries the token
# in its form body, which Litestar's check reads (parses) before the handler runs.
CSRF_HEADER = "x-csrftoken"


def _csrf_key(scope: Scope) -> str:
    session = scope.get("session")
    return str(session.get(SESSION_CSRF_KEY) or "") if isinstance(session, dict) else ""


class SessionCSRFMiddleware:
    """Litestar's CSRF middleware, with its signing key bound to the browser session.

    Litestar's CSRF is a signed double-submit cookie: any cookie and token pair it ever signed is
    accepted, in any session. Here a state-changing request is checked by Litestar's middleware
    under the key `secret + the session's CSRF key` (a random value set at sign-in), so a pair from
    another session, or from before a sign-in or sign-out, fails. A page is rendered with the
    browser's token when it was signed for this session, else with a new one sent as the cookie;
    and a response that changes the session's key (sign-in, sign-out) carries a new cookie too.
    A request with a bearer token cannot be forged by another site (browsers never attach it on
    their own), so it passes without a CSRF token.
    """

    def __init__(self, app: ASGIApp, config: CSRFConfig) -> None:
        self.app = app
        self.config = config
        # One checker per session key, kept for the session's next requests (Litestar's checker
        # reads its secret from its config), the least recently used dropped first.
        self._checkers: OrderedDict[str, CSRFMiddleware] = OrderedDict()

    def _checker_for(self, key: str) -> CSRFMiddleware:
        checker = self._checkers.pop(key, None) or CSRFMiddleware(self.app, self._config_for(key))
        self._checkers[key] = checker
        if len(self._checkers) > CHECKERS_KEPT:
            self._checkers.popitem(last=False)
        return checker

    def _config_for(self, key: str) -> CSRFConfig:
        bound = hashlib.sha256(f"{self.config.secret}\x00{key}".encode()).hexdigest()
        return dataclasses.replace(self.config, secret=bound)

    def _signed_for(self, token: str, key: str) -> bool:
        secret = self._config_for(key).secret
        body, signature = token[:CSRF_SECRET_LENGTH], token[CSRF_SECRET_LENGTH:]
        return len(body) == CSRF_SECRET_LENGTH and secrets.compare_digest(
            signature, generate_csrf_hash(token=body, secret=secret)
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"authorization" and value[:7].lower() == b"bearer ":
                await self.app(scope, receive, send)
                return
        key_before = _csrf_key(scope)
        issued: str | None = None
        if scope["method"] in self.config.safe_methods:
            cookie = Request[Any, Any, Any](scope).cookies.get(self.config.cookie_name)
            if cookie is None or not self._signed_for(cookie, key_before):
                cookie = issued = generate_csrf_token(self._config_for(key_before).secret)
            # What Litestar's `csrf_token()` template helper reads.
            ScopeState.from_scope(scope).csrf_token = cookie

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                key_after = _csrf_key(scope)
                token = issued if key_after == key_before else generate_csrf_token(self._config_for(key_after).secret)
                if token is not None:
                    self._set_cookie(message, token)
            await send(message)

        if scope["method"] in self.config.safe_methods:
            await self.app(scope, receive, send_with_cookie)
            return
        await self._checker_for(key_before)(scope, receive, send_with_cookie)

    def _set_cookie(self, message: Message, token: str) -> None:
        cookie = Cookie(
            key=self.config.cookie_name,
            value=token,
            path=self.config.cookie_path,
            secure=self.config.cookie_secure,
            httponly=self.config.cookie_httponly,
            samesite=self.config.cookie_samesite,
            domain=self.config.cookie_domain,
        )
        MutableScopeHeaders.from_message(message).add("set-cookie", cookie.to_header(header=""))
