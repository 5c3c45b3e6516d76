"""Who is asking: sessions and API tokens; and the headers every response carries.

- A browser signs in and gets a server-side session in Redis; the session id is rotated at login
  and an id the server never issued is never adopted (no session fixation). The session holds a
  stamp of the password: a password change signs out every other session.
- A program sends `Authorization: Bearer <token>`; bearer requests skip CSRF (`web/csrf.py`),
  which guards cookie-authenticated requests only, with a key held in the session.
- The authentication middleware decides who asks for every route but the public ones; the polled
  job views decide it themselves, the same way, in their own worker thread and database session
  (`AUTHENTICATES_ITSELF`, docs/architecture.md "The read side").
- Every response carries a strict Content-Security-Policy and the usual hardening headers.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import Any, cast

from anyio import to_thread
from litestar.connection import ASGIConnection, Request
from litestar.datastructures import Cookie, MutableScopeHeaders
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers import BaseRouteHandler
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult, DefineMiddleware
from litestar.middleware.session import SessionMiddleware
from litestar.middleware.session.server_side import ServerSideSessionBackend, ServerSideSessionConfig
from litestar.types import Message, Scope
from litestar.types.empty import Empty
from litestar.utils.dataclass import extract_dataclass_items
from redis.exceptions import RedisError
from sqlmodel import Session

from quire.accounts.service import Principal, principal_for_token, session_principal
from quire.db import Database
from quire.settings import Settings
from quire.web.deps import quire_of

log = logging.getLogger(__name__)

SESSION_USER = "user_id"
SESSION_STAMP = "password_stamp"
SESSION_CSRF_KEY = "csrf_key"
# A notice for the page a form's POST redirects to ("Deleted ...", "The token was revoked ..."), said once there.
FLASH_KEY = "quire_flash"
# Sign-out needs no signed-in user: with Redis down nobody is, and the cookie must still go.
PUBLIC_PATHS = ["^/static/", "^/healthz$", "^/readyz$", "^/metrics$", "^/schema", "^/login$", "^/signup$", "^/logout$"]
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
        if scope_session is Empty:
            # Signed out: the expiring cookie goes out first, so the browser is signed out even
            # when Redis cannot be reached to drop the stored session. (Litestar's own answer
            # keeps a "null" cookie with the session's Max-Age, which outlives its Expires.)
            params = dict(extract_dataclass_items(self.config, exclude_none=True, include=Cookie.__dict__.keys()))
            params["max_age"] = 0
            cookie = Cookie(value="", key=self.config.key, expires=0, **params)
            MutableScopeHeaders.from_message(message).add("Set-Cookie", cookie.to_header(header=""))
        try:
            if scope_session is Empty:
                if old and old != "null":
                    await self.delete(old, store=store)
                return
            if connection.state.get("quire_rotate_session") and old and old != "null":
                await self.delete(old, store=store)
            await super().store_in_message(scope_session, message, connection)
        except RedisError as exc:
            log.warning("session store unreachable, session not saved: %s", exc)


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


def session_middleware(settings: Settings) -> DefineMiddleware:
    """Litestar's session middleware on the rotating backend, built through their public
    constructors (a config's `.middleware` would build its own backend class, chosen by a private
    attribute)."""
    return DefineMiddleware(SessionMiddleware, backend=RotatingSessionBackend(config=session_config(settings)))


def session_config(settings: Settings) -> ServerSideSessionConfig:
    return ServerSideSessionConfig(
        key="quire_session",
        store="sessions",
        max_age=settings.session_days * 86400,
        secure=settings.env == "production",
        httponly=True,
        samesite="lax",
        renew_on_access=True,
    )


# Authentication -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Credentials:
    """What a request presents: a bearer token, or a signed-in session's user and password stamp."""

    token: str | None = None
    user_id: str = ""
    stamp: str = ""


def credentials_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Credentials:
    """The request's credentials, read without the database; none at all is 401 at once."""
    header = connection.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return Credentials(token=header[7:].strip())
    session = connection.scope.get("session")
    user_id = session.get(SESSION_USER) if isinstance(session, dict) else None
    if user_id and isinstance(session, dict):
        return Credentials(user_id=str(user_id), stamp=str(session.get(SESSION_STAMP) or ""))
    raise NotAuthorizedException("Sign in, or send an API token.")


def principal_of(db: Database, credentials: Credentials, session: Session | None = None) -> AuthenticationResult:
    """Who the credentials belong to, read in `session` when given; 401 when nobody."""
    if credentials.token is not None:
        principal = principal_for_token(db, credentials.token, session)
        if principal is None:
            raise NotAuthorizedException("The API token is not valid.")
        return AuthenticationResult(user=principal, auth="token")
    principal = session_principal(db, credentials.user_id, credentials.stamp, session)
    if principal is None:
        raise NotAuthorizedException("Sign in, or send an API token.")
    return AuthenticationResult(user=principal, auth="session")


class QuireAuthentication(AbstractAuthenticationMiddleware):
    """A bearer token, else the session's user; anything else is 401 (pages turn it into a login)."""

    async def authenticate_request(self, connection: ASGIConnection[Any, Any, Any, Any]) -> AuthenticationResult:
        db = quire_of(connection).db
        return await to_thread.run_sync(principal_of, db, credentials_of(connection))


# A route whose handler reads the database anyway, and is asked for often (the polled job views),
# authenticates itself: `opt=AUTHENTICATES_ITSELF` skips the middleware, and the handler calls
# `authenticate_here` in its own worker thread, with its own database session. The decision is
# the middleware's, so the request makes one thread trip and opens one session instead of two.
AUTHENTICATES_ITSELF = {"exclude_from_auth": True}


def authenticate_here(db: Database, connection: ASGIConnection[Any, Any, Any, Any], session: Session) -> Principal:
    """What the middleware would decide, in the caller's thread and session; sets `request.user`
    and `request.auth` as the middleware does."""
    result = principal_of(db, credentials_of(connection), session)
    connection.scope["user"] = result.user
    connection.scope["auth"] = result.auth
    return cast(Principal, result.user)


def browser_session_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Guard: only a signed-in browser manages the account (tokens, password). A leaked API token
    must not be able to mint more tokens, or revoke the owner's."""
    if connection.scope.get("auth") != "session":
        raise PermissionDeniedException("Manage API tokens and the password from a signed-in browser.")


# Headers ------------------------------------------------------------------------------------------


async def add_security_headers(message: Message, scope: Scope) -> None:
    """CSP and hardening headers on every response: pages, API, files, errors and 404s alike."""
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        for key, value in SECURITY_HEADERS.items():
            headers[key] = value
