"""Who is asking, and what protects each request: sessions, API tokens, CSRF, rate limits, headers.

- A browser signs in and gets a server-side session in Redis; the session id is rotated at login
  and an id the server never issued is never adopted (no session fixation). The session holds a
  stamp of the password: a password change signs out every other session.
- A program sends `Authorization: Bearer <token>`; bearer requests skip CSRF, which guards
  cookie-authenticated requests only. CSRF tokens are signed with a key held in the session, so a
  token is worth nothing in another session, and a new one is issued at login and logout.
- Every response carries a strict Content-Security-Policy and the usual hardening headers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import secrets
from typing import Any

from anyio import to_thread
from litestar.config.csrf import CSRFConfig
from litestar.connection import ASGIConnection, Request
from litestar.datastructures import Cookie, MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers import BaseRouteHandler
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult
from litestar.middleware.csrf import CSRF_SECRET_LENGTH, CSRFMiddleware, generate_csrf_hash, generate_csrf_token
from litestar.middleware.rate_limit import CacheObject, RateLimitConfig, RateLimitMiddleware
from litestar.middleware.session.server_side import ServerSideSessionBackend, ServerSideSessionConfig
from litestar.stores.base import Store
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from litestar.types.empty import Empty
from litestar.utils.dataclass import extract_dataclass_items
from litestar.utils.scope.state import ScopeState
from redis.exceptions import RedisError

from quire.accounts.service import Principal, normalise_email, principal_for_token, session_principal
from quire.settings import get_settings

log = logging.getLogger(__name__)

SESSION_USER = "user_id"
SESSION_STAMP = "password_stamp"
SESSION_CSRF_KEY = "csrf_key"
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
        store = self.config.get_store_from_app(connection.scope["litestar_app"])
        try:
            if scope_session is Empty:
                # Signed out: drop the stored session and the cookie. (Litestar's own answer keeps
                # a "null" cookie with the session's Max-Age, which outlives its Expires.)
                if old and old != "null":
                    await self.delete(old, store=store)
                params = dict(extract_dataclass_items(self.config, exclude_none=True, include=Cookie.__dict__.keys()))
                params["max_age"] = 0
                cookie = Cookie(value="", key=self.config.key, expires=0, **params)
                MutableScopeHeaders.from_message(message).add("Set-Cookie", cookie.to_header(header=""))
                return
            if connection.state.get("quire_rotate_session") and old and old != "null":
                await self.delete(old, store=store)
            await super().store_in_message(scope_session, message, connection)
        except RedisError as exc:
            log.warning("session store unreachable, session not saved: %s", exc)


class RotatingSessionConfig(ServerSideSessionConfig):
    _backend_class = RotatingSessionBackend


def rotate_session(connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    """Give this session a new id when the response is sent (call at login)."""
    connection.state["quire_rotate_session"] = True


def start_session(request: Request[Any, Any, Any], user_id: str, stamp: str, csrf_key: str | None = None) -> None:
    """Sign a browser in: a new session id, the password stamp, and a new CSRF key unless one is
    kept (a new key makes every token issued before this moment stop working)."""
    key = csrf_key or secrets.token_urlsafe(24)
    request.set_session({SESSION_USER: user_id, SESSION_STAMP: stamp, SESSION_CSRF_KEY: key})
    rotate_session(request)


async def require_session_store(request: Request[Any, Any, Any]) -> None:
    """Raise RedisError now if sessions cannot be saved, rather than answering a sign-in with a
    redirect that silently carries no session."""
    await request.app.stores.get("sessions").exists("ping")


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
        if user_id and isinstance(session, dict):
            stamp = str(session.get(SESSION_STAMP) or "")
            principal = await to_thread.run_sync(session_principal, str(user_id), stamp)
        if principal is None:
            raise NotAuthorizedException("Sign in, or send an API token.")
        return AuthenticationResult(user=principal, auth="session")


def browser_session_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Guard: only a signed-in browser manages the account (tokens, password). A leaked API token
    must not be able to mint more tokens, or revoke the owner's."""
    if connection.scope.get("auth") != "session":
        raise PermissionDeniedException("Manage API tokens and the password from a signed-in browser.")


# CSRF ---------------------------------------------------------------------------------------------


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
        self._anonymous = CSRFMiddleware(app, self._config_for(""))

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
        checker = self._anonymous if key_before == "" else CSRFMiddleware(self.app, self._config_for(key_before))
        await checker(scope, receive, send_with_cookie)

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


class AccountThrottled(Exception):
    """Too many failed sign-ins for one account; the message is safe to show."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"Too many sign-in attempts for this account. Try again in {retry_after_s} s.")
        self.retry_after_s = retry_after_s


def _account_key(email: str) -> str:
    # Hashed: the rate-limit store need not hold anyone's email address.
    return "login-account:" + hashlib.sha256(normalise_email(email).encode()).hexdigest()


async def check_account_login(request: Request[Any, Any, Any], email: str) -> None:
    """Refuse a sign-in, before the password is checked, once an account has had
    `QUIRE_ACCOUNT_LOGIN_ATTEMPTS_PER_MINUTE` failed attempts in the current minute from anywhere.
    Emails without an account are counted the same way, so the answer tells nothing. RedisError
    propagates: sign-in cannot work without the session store anyway."""
    store = request.app.stores.get("rate_limit")
    failures = await store.get(_account_key(email))
    if failures is not None and int(failures) >= get_settings().account_login_attempts_per_minute:
        raise AccountThrottled(max(1, await store.expires_in(_account_key(email)) or 60))


async def record_failed_login(request: Request[Any, Any, Any], email: str) -> None:
    """Count a failed sign-in against the account, in a window of one minute from the first."""
    store = request.app.stores.get("rate_limit")
    key = _account_key(email)
    failures = await store.get(key)
    left = await store.expires_in(key) if failures is not None else None
    await store.set(key, str(int(failures or 0) + 1), expires_in=left or 60)


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
