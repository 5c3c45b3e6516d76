"""Who is asking, and what protects each request: sessions, API tokens, CSRF, rate limits, headers.

- A browser signs in and gets a server-side session in Redis; the session id is rotated at login
  and an id the server never issued is never adopted (no session fixation).
- A program sends `Authorization: Bearer <token>`; bearer requests skip CSRF, which guards
  cookie-authenticated requests only.
- Every response carries a strict Content-Security-Policy and the usual hardening headers.
"""

from __future__ import annotations

import logging
from typing import Any

from anyio import to_thread
from litestar.connection import ASGIConnection
from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.exceptions import NotAuthorizedException
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult
from litestar.middleware.csrf import CSRFMiddleware
from litestar.middleware.rate_limit import CacheObject, RateLimitConfig, RateLimitMiddleware
from litestar.middleware.session.server_side import ServerSideSessionBackend, ServerSideSessionConfig
from litestar.stores.base import Store
from litestar.types import Message, Receive, Scope, Send
from litestar.types.empty import Empty
from redis.exceptions import RedisError

from quire.accounts.service import Principal, get_principal, principal_for_token
from quire.settings import get_settings

log = logging.getLogger(__name__)

SESSION_USER = "user_id"
PUBLIC_PATHS = ["^/static/", "^/healthz$", "^/readyz$", "^/metrics$", "^/schema", "^/login$", "^/signup$"]
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}


# Sessions -----------------------------------------------------------------------------------------


class RotatingSessionBackend(ServerSideSessionBackend):
    """Litestar's server-side sessions, but never under an id the client chose.

    Litestar keeps whatever session id the cookie carries, even one it never issued. Here an id
    with no stored session is replaced by a fresh one, and `rotate_session()` (called at login)
    moves the session to a new id and deletes the old one.
    """

    async def load_from_connection(self, connection: ASGIConnection[Any, Any, Any, Any]) -> dict[str, Any]:
        try:
            data = await super().load_from_connection(connection)
        except RedisError as exc:
            log.warning("session store unreachable, treating the request as signed out: %s", exc)
            data = {}
        if not data and connection.cookies.get(self.config.key) not in (None, "null"):
            connection.state["quire_fresh_session_id"] = True
        return data

    def get_session_id(self, connection: ASGIConnection[Any, Any, Any, Any]) -> str:
        state = connection.state
        if state.get("quire_fresh_session_id") or state.get("quire_rotate_session"):
            if "quire_session_id" not in state:
                state["quire_session_id"] = self.generate_session_id()
            return str(state["quire_session_id"])
        return super().get_session_id(connection)

    async def store_in_message(
        self, scope_session: Any, message: Message, connection: ASGIConnection[Any, Any, Any, Any]
    ) -> None:
        old = connection.cookies.get(self.config.key)
        if (scope_session is Empty or not scope_session) and old in (None, "null"):
            return  # no session before, none now: nothing to store (API calls never touch Redis here)
        try:
            if connection.state.get("quire_rotate_session") and old and old != "null":
                await self.delete(old, store=self.config.get_store_from_app(connection.scope["litestar_app"]))
            await super().store_in_message(scope_session, message, connection)
        except RedisError as exc:
            log.warning("session store unreachable, session not saved: %s", exc)


class RotatingSessionConfig(ServerSideSessionConfig):
    _backend_class = RotatingSessionBackend


def rotate_session(connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    """Give this session a new id when the response is sent (call at login)."""
    connection.state["quire_rotate_session"] = True


def session_config() -> RotatingSessionConfig:
    settings = get_settings()
    return RotatingSessionConfig(
        key="quire_session",
        store="sessions",
        max_age=settings.session_days * 86400,
        secure=settings.env == "production",
        httponly=True,
        samesite="lax",
        renew_on_access=True,
    )


# Authentication -----------------------------------------------------------------------------------


class QuireAuthentication(AbstractAuthenticationMiddleware):
    """A bearer token, else the session's user; anything else is 401 (pages turn it into a login)."""

    async def authenticate_request(self, connection: ASGIConnection[Any, Any, Any, Any]) -> AuthenticationResult:
        header = connection.headers.get("authorization", "")
        principal: Principal | None = None
        if header.lower().startswith("bearer "):
            principal = await to_thread.run_sync(principal_for_token, header[7:].strip())
            if principal is None:
                raise NotAuthorizedException("The API token is not valid.")
            return AuthenticationResult(user=principal, auth="token")
        session = connection.scope.get("session")
        user_id = session.get(SESSION_USER) if isinstance(session, dict) else None
        if user_id:
            principal = await to_thread.run_sync(get_principal, str(user_id))
        if principal is None:
            raise NotAuthorizedException("Sign in, or send an API token.")
        return AuthenticationResult(user=principal, auth="session")


# CSRF ---------------------------------------------------------------------------------------------


class BearerAwareCSRFMiddleware(CSRFMiddleware):
    """CSRF for cookie-authenticated requests. A request with a bearer token cannot be forged by
    another site (browsers never attach it on their own), so it passes without a CSRF token."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP:
            for name, value in scope["headers"]:
                if name == b"authorization" and value[:7].lower() == b"bearer ":
                    await self.app(scope, receive, send)
                    return
        await super().__call__(scope, receive, send)


# Headers ------------------------------------------------------------------------------------------


async def add_security_headers(message: Message, scope: Scope) -> None:
    """CSP and hardening headers on every response: pages, API, files, errors and 404s alike."""
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        for key, value in SECURITY_HEADERS.items():
            headers[key] = value


# Rate limits (kept in Redis, so they hold across web processes) ------------------------------------


class FailOpenRateLimit(RateLimitMiddleware):
    """Litestar's rate limiter, but an unreachable Redis lets requests through instead of failing
    them: a job must still be accepted while Redis is down."""

    async def retrieve_cached_history(self, key: str, store: Store) -> CacheObject:
        try:
            return await super().retrieve_cached_history(key, store)
        except RedisError as exc:
            log.warning("rate-limit store unreachable, not limiting: %s", exc)
            return CacheObject(history=[], reset=0)

    async def set_cached_history(self, key: str, cache_object: CacheObject, store: Store) -> None:
        try:
            await super().set_cached_history(key, cache_object, store)
        except RedisError as exc:
            log.warning("rate-limit store unreachable, not recording: %s", exc)


def _remote(request: Any) -> str:
    return request.client.host if request.client else "unknown"


def _login_key(request: Any) -> str:
    return f"login:{_remote(request)}"


def _submitter_key(request: Any) -> str:
    user = request.scope.get("user")
    return f"submit:{user.user_id}" if isinstance(user, Principal) else f"submit:{_remote(request)}"


async def _posts_only(request: Any) -> bool:
    return bool(request.method == "POST")


def login_rate_limit() -> RateLimitConfig:
    """Login attempts per client address."""
    return RateLimitConfig(
        rate_limit=("minute", get_settings().login_attempts_per_minute),
        store="rate_limit",
        identifier_for_request=_login_key,
        check_throttle_handler=_posts_only,
        middleware_class=FailOpenRateLimit,
    )


def submission_rate_limit() -> RateLimitConfig:
    """Job submissions per person."""
    return RateLimitConfig(
        rate_limit=("minute", get_settings().submissions_per_minute),
        store="rate_limit",
        identifier_for_request=_submitter_key,
        check_throttle_handler=_posts_only,
        middleware_class=FailOpenRateLimit,
    )
