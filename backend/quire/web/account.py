"""Account pages: sign in, sign up, sign out, change password, API tokens."""

from __future__ import annotations

from typing import Any

from anyio import to_thread
from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.response import Redirect, Template

from quire.accounts import service as accounts
from quire.accounts.service import Principal
from quire.settings import get_settings
from quire.web.auth import SESSION_USER, login_rate_limit, rotate_session

AnyRequest = Request[Any, Any, Any]
UserRequest = Request[Principal, Any, Any]


def safe_next(target: str | None) -> str:
    """Only a path on this site: never `//other.site` or `https://...` (no open redirect)."""
    if target and target.startswith("/") and not target.startswith("//") and "\\\\" not in target:
        return target
    return "/"


class AccountController(Controller):
    path = ""
    include_in_schema = False

    @get("/login")
    async def login_page(self, next: str | None = None) -> Template:
        return Template("pages/login.html", context={"next": safe_next(next), "error": None, "email": ""})

    @post("/login", status_code=303, middleware=[login_rate_limit().middleware])
    async def login(self, request: AnyRequest) -> Redirect | Template:
        form = await request.form()
        email, password = str(form.get("email") or ""), str(form.get("password") or "")
        target = safe_next(str(form.get("next") or "/"))
        principal = await to_thread.run_sync(accounts.authenticate, email, password)
        if principal is None:
            context = {"next": target, "error": "That email and password do not match an account.", "email": email}
            return Template("pages/login.html", context=context, status_code=401)
        request.set_session({SESSION_USER: principal.user_id})
        rotate_session(request)
        return Redirect(target, status_code=303)

    @post("/logout", status_code=303)
    async def logout(self, request: AnyRequest) -> Redirect:
        request.clear_session()
        return Redirect("/login", status_code=303)

    @get("/signup")
    async def signup_page(self) -> Template:
        _require_signup()
        return Template("pages/signup.html", context={"error": None, "email": ""})

    @post("/signup", status_code=303, middleware=[login_rate_limit().middleware])
    async def signup(self, request: AnyRequest) -> Redirect | Template:
        _require_signup()
        form = await request.form()
        email, password = str(form.get("email") or ""), str(form.get("password") or "")
        try:
            principal = await to_thread.run_sync(accounts.create_user, email, password)
        except accounts.AccountError as exc:
            return Template("pages/signup.html", context={"error": str(exc), "email": email}, status_code=422)
        request.set_session({SESSION_USER: principal.user_id})
        rotate_session(request)
        return Redirect("/", status_code=303)

    @get("/settings", sync_to_thread=True)
    def settings_page(self, request: UserRequest) -> Template:
        return _settings(request.user)

    @post("/settings/password")
    async def change_password(self, request: UserRequest) -> Template:
        form = await request.form()
        try:
            await to_thread.run_sync(
                accounts.change_password,
                request.user.user_id,
                str(form.get("current_password") or ""),
                str(form.get("new_password") or ""),
            )
        except accounts.AccountError as exc:
            message = str(exc)
            return await to_thread.run_sync(lambda: _settings(request.user, error=message, status=422))
        rotate_session(request)
        return await to_thread.run_sync(lambda: _settings(request.user, notice="Your password was changed."))

    @post("/settings/tokens")
    async def create_token(self, request: UserRequest) -> Template:
        form = await request.form()
        _, secret = await to_thread.run_sync(accounts.create_token, request.user.user_id, str(form.get("name") or ""))
        return await to_thread.run_sync(lambda: _settings(request.user, new_token=secret))

    @post("/settings/tokens/{token_id:str}/revoke", status_code=303, sync_to_thread=True)
    def revoke_token(self, request: UserRequest, token_id: str) -> Redirect:
        accounts.revoke_token(request.user.user_id, token_id)
        return Redirect("/settings", status_code=303)


def _require_signup() -> None:
    if not get_settings().signup_enabled:
        raise NotFoundException("Sign-up is turned off. Ask an administrator for an account.")


def _settings(
    user: Principal,
    *,
    error: str | None = None,
    notice: str | None = None,
    new_token: str | None = None,
    status: int = 200,
) -> Template:
    context = {
        "user": user,
        "tokens": accounts.list_tokens(user.user_id),
        "error": error,
        "notice": notice,
        "new_token": new_token,
    }
    return Template("pages/settings.html", context=context, status_code=status)
