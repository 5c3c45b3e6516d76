"""Account pages: sign in, sign up, sign out, change password, API tokens, webhook settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from anyio import to_thread
from litestar import Controller, Request, get, post
from litestar.enums import RequestEncodingType
from litestar.exceptions import NotFoundException
from litestar.params import Body, FromPath, FromQuery
from litestar.response import Redirect, Template
from redis.exceptions import RedisError

from quire.accounts import service as accounts
from quire.accounts.service import Principal
from quire.db import Database
from quire.settings import Settings
from quire.web.auth import FLASH_KEY, SESSION_CSRF_KEY, browser_session_only, require_session_store, start_session
from quire.web.deps import DbDep, SettingsDep
from quire.web.limits import AccountThrottled, LoginThrottle, login_rate_limit
from quire.webhooks.targets import TargetRefused, check_url

AnyRequest = Request[Any, Any, Any]
UserRequest = Request[Principal, Any, Any]
UNAVAILABLE = "Signing in is unavailable right now: the session service cannot be reached. Try again in a minute."
SIGN_IN_NOW = "If this email already had an account, sign in with its existing password."
NEW_TOKEN_KEY = "quire_new_token"  # noqa: S105 (a session key, not a secret)
FORM = RequestEncodingType.URL_ENCODED


@dataclass
class WebhookForm:
    webhook_url: str = ""


def _throttle(request: AnyRequest) -> LoginThrottle:
    throttle: LoginThrottle = request.app.state.login_throttle
    return throttle


def safe_next(target: str | None) -> str:
    """Only a path on this site: never `//other.site` or `https://...` (no open redirect)."""
    if target and target.startswith("/") and not target.startswith("//") and "\\\\" not in target:
        return target
    return "/"


class AccountController(Controller):
    path = ""
    include_in_schema = False

    @get("/login")
    async def login_page(self, next: FromQuery[str | None] = None, signed_up: FromQuery[bool] = False) -> Template:
        context = {"next": safe_next(next), "error": None, "email": "", "notice": SIGN_IN_NOW if signed_up else None}
        return Template("pages/login.html", context=context)

    @post("/login", status_code=303, middleware=[login_rate_limit().middleware])
    async def login(self, db: DbDep, request: AnyRequest) -> Redirect | Template:
        form = await request.form()
        email, password = str(form.get("email") or ""), str(form.get("password") or "")
        target = safe_next(str(form.get("next") or "/"))

        def page(error: str, status: int, headers: dict[str, str] | None = None) -> Template:
            context = {"next": target, "error": error, "email": email, "notice": None}
            return Template("pages/login.html", context=context, status_code=status, headers=headers)

        throttle = _throttle(request)
        try:
            await require_session_store(request)
            await throttle.attempt(email)
        except RedisError:
            return page(UNAVAILABLE, 503, {"Retry-After": "30"})
        except AccountThrottled as exc:
            return page(str(exc), 429, {"Retry-After": str(exc.retry_after_s)})
        principal = await to_thread.run_sync(accounts.authenticate, db, email, password)
        if principal is None:
            return page("That email and password do not match an account.", 401)
        try:
            await throttle.succeeded(email)
        except RedisError:
            return page(UNAVAILABLE, 503, {"Retry-After": "30"})
        stamp = await to_thread.run_sync(accounts.stamp_for, db, principal.user_id)
        start_session(request, principal.user_id, stamp)
        return Redirect(target, status_code=303)

    @post("/logout", status_code=303)
    async def logout(self, request: AnyRequest) -> Redirect:
        request.clear_session()
        return Redirect("/login", status_code=303)

    @get("/signup")
    async def signup_page(self, settings: SettingsDep) -> Template:
        _require_signup(settings)
        return Template("pages/signup.html", context={"error": None, "email": ""})

    @post("/signup", status_code=303, middleware=[login_rate_limit().middleware])
    async def signup(self, settings: SettingsDep, db: DbDep, request: AnyRequest) -> Redirect | Template:
        _require_signup(settings)
        form = await request.form()
        email, password = str(form.get("email") or ""), str(form.get("password") or "")
        try:
            await to_thread.run_sync(accounts.create_user, db, email, password)
        except accounts.EmailTaken:
            # Answered exactly as a new account is: sign-up must not tell who has an account here.
            pass
        except accounts.AccountError as exc:
            return Template("pages/signup.html", context={"error": str(exc), "email": email}, status_code=422)
        # Both cases go on to sign in (signing the new account in straight away would set a
        # session cookie that a taken email does not get, and so tell them apart); the sign-in
        # page's notice reads true for both.
        return Redirect("/login?signed_up=true", status_code=303)

    @get("/settings", sync_to_thread=True, guards=[browser_session_only])
    def settings_page(self, db: DbDep, request: UserRequest) -> Template:
        new_token = request.session.pop(NEW_TOKEN_KEY, None)
        return _settings(db, request.user, new_token=new_token, notice=request.session.pop(FLASH_KEY, None))

    @get(
        ["/settings/password", "/settings/tokens", "/settings/webhooks", "/settings/webhooks/secret"],
        status_code=303,
        sync_to_thread=False,
    )
    def settings_forms(self) -> Redirect:
        """A settings form's address opened (a bookmark, a reload after an error): the settings page."""
        return Redirect("/settings", status_code=303)

    @post("/settings/password", guards=[browser_session_only])
    async def change_password(self, db: DbDep, request: UserRequest) -> Template | Redirect:
        form = await request.form()
        user_id, email = request.user.user_id, request.user.email
        # The current password is checked here too, so it shares the sign-in budget: a stolen
        # session cannot be used to guess the password at the speed of the hasher.
        throttle = _throttle(request)
        try:
            await throttle.attempt(email)
        except RedisError:
            return await to_thread.run_sync(lambda: _settings(db, request.user, error=UNAVAILABLE, status=503))
        except AccountThrottled as exc:
            refused, retry = str(exc), {"Retry-After": str(exc.retry_after_s)}
            return await to_thread.run_sync(
                lambda: _settings(db, request.user, error=refused, status=429, headers=retry)
            )
        try:
            stamp = await to_thread.run_sync(
                accounts.change_password,
                db,
                user_id,
                str(form.get("current_password") or ""),
                str(form.get("new_password") or ""),
            )
        except accounts.AccountError as exc:
            if not isinstance(exc, accounts.WrongPassword):
                await throttle.succeeded(email)
            message = str(exc)
            return await to_thread.run_sync(lambda: _settings(db, request.user, error=message, status=422))
        await throttle.succeeded(email)
        notice = "Your password was changed and every other session was signed out."
        if form.get("revoke_tokens"):
            revoked = await to_thread.run_sync(accounts.revoke_all_tokens, db, user_id)
            notice += f" {revoked} API token{'s' if revoked != 1 else ''} revoked."
        # This browser stays signed in under a new session id and the new stamp; its CSRF key is
        # kept, so the forms of pages it already shows still post.
        start_session(request, user_id, stamp, csrf_key=request.session.get(SESSION_CSRF_KEY))
        return _done(request, notice)

    @post("/settings/tokens", status_code=303, guards=[browser_session_only])
    async def create_token(self, db: DbDep, request: UserRequest) -> Redirect:
        """Create, then redirect (POST/redirect/GET): reloading the page must not create a second token.
        The secret rides in the server-side session for exactly one page view."""
        form = await request.form()
        _, secret = await to_thread.run_sync(
            accounts.create_token, db, request.user.user_id, str(form.get("name") or "")
        )
        request.session[NEW_TOKEN_KEY] = secret
        return Redirect("/settings", status_code=303)

    @post("/settings/webhooks", sync_to_thread=True, guards=[browser_session_only])
    def save_webhook_url(
        self,
        settings: SettingsDep,
        db: DbDep,
        request: UserRequest,
        data: Annotated[WebhookForm, Body(media_type=FORM)],
    ) -> Template | Redirect:
        """The default URL of this account's jobs' webhooks (empty: none)."""
        try:
            url = check_url(settings, data.webhook_url) if data.webhook_url.strip() else None
        except TargetRefused as exc:
            # The page keeps what was typed, so it can be corrected rather than typed again.
            return _settings(db, request.user, error=str(exc), status=422, webhook_url=data.webhook_url)
        accounts.set_default_webhook_url(db, request.user.user_id, url)
        return _done(
            request, "Webhooks of jobs submitted from now on go to this URL." if url else "No default webhook URL."
        )

    @post("/settings/webhooks/secret", status_code=303, sync_to_thread=True, guards=[browser_session_only])
    def rotate_webhook_secret(self, db: DbDep, request: UserRequest) -> Redirect:
        accounts.rotate_webhook_secret(db, request.user.user_id)
        return _done(request, "A new signing secret is in force: webhooks sent from now on are signed with it alone.")

    @post("/settings/tokens/{token_id:str}/revoke", status_code=303, sync_to_thread=True, guards=[browser_session_only])
    def revoke_token(self, db: DbDep, request: UserRequest, token_id: FromPath[str]) -> Redirect:
        if accounts.revoke_token(db, request.user.user_id, token_id):
            return _done(request, "The token was revoked: programs using it are refused from now on.")
        return _done(request, "That token was already revoked, or is not one of yours.")


def _done(request: UserRequest, notice: str) -> Redirect:
    """Back to the settings page, which says what was done once (reloading it does not do it again)."""
    request.session[FLASH_KEY] = notice
    return Redirect("/settings", status_code=303)


def _require_signup(settings: Settings) -> None:
    if not settings.signup_enabled:
        raise NotFoundException("Sign-up is turned off. Ask an administrator for an account.")


def _settings(
    db: Database,
    user: Principal,
    *,
    error: str | None = None,
    notice: str | None = None,
    new_token: str | None = None,
    status: int = 200,
    headers: dict[str, str] | None = None,
    webhook_url: str | None = None,
) -> Template:
    context = {
        "user": user,
        "tokens": accounts.list_tokens(db, user.user_id),
        "webhook_url": webhook_url if webhook_url is not None else accounts.default_webhook_url(db, user.user_id),
        "webhook_secret": accounts.webhook_secret(db, user.user_id),
        "error": error,
        "notice": notice,
        "new_token": new_token,
    }
    return Template("pages/settings.html", context=context, status_code=status, headers=headers)
