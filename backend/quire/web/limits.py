"""How often one may try: sign-in attempts per address and per account, job submissions per person.

All counters live in Redis, so they hold across web processes.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from litestar.exceptions import TooManyRequestsException
from litestar.middleware.rate_limit import DURATION_VALUES, CacheObject, RateLimitConfig, RateLimitMiddleware
from litestar.stores.base import Store
from litestar.stores.redis import RedisStore
from litestar.types import Receive, Scope, Send
from redis.asyncio import Redis
from redis.exceptions import RedisError

from quire.accounts.service import Principal, normalise_email

log = logging.getLogger(__name__)


class AccountThrottled(Exception):
    """Too many failed password checks for one account; the message is safe to show."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"Too many sign-in attempts for this account. Try again in {retry_after_s} s.")
        self.retry_after_s = retry_after_s


# INCR and the window's expiry in one step: parallel guesses each get their own number, so no more
# than the limit of them ever reach the password check. A key left without an expiry (never by
# this script, but by hand or an older release) gets one here rather than counting forever.
_ATTEMPT = """
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
"""
# Give back an attempt that turned out right; never below zero, never on a key that expired.
_RELEASE = """
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return n
"""


class LoginThrottle:
    """Password checks per account per minute, from anywhere (`QUIRE_ACCOUNT_LOGIN_ATTEMPTS_PER_MINUTE`).

    An attempt is counted before the password is checked and given back when the password was
    right, so only wrong passwords use the budget. Sign-in and the password change share it.
    Emails without an account are counted the same way, so the answer tells nothing. A RedisError
    propagates: the caller answers 503, since sign-in cannot work without Redis anyway.
    """

    def __init__(self, redis: Redis[Any], limit: int, window_s: int = 60) -> None:
        self._attempt = redis.register_script(_ATTEMPT)
        self._release = redis.register_script(_RELEASE)
        self._limit = limit
        self._window_s = window_s

    @staticmethod
    def _key(email: str) -> str:
        # Hashed: Redis need not hold anyone's email address.
        return "quire:login-account:" + hashlib.sha256(normalise_email(email).encode()).hexdigest()

    async def attempt(self, email: str) -> None:
        """Count one password check for this account; AccountThrottled when over the limit."""
        result = await self._attempt(keys=[self._key(email)], args=[self._window_s])
        count, ttl = int(result[0]), int(result[1])
        if count > self._limit:
            raise AccountThrottled(max(1, ttl))

    async def succeeded(self, email: str) -> None:
        """The password was right: this attempt does not count."""
        await self._release(keys=[self._key(email)])


class FailOpenStore(Store):
    """A store that forgets rather than fails: reads of an unreachable Redis find nothing and
    writes are dropped. Litestar's rate limiter keeps its counts here, so while Redis is down
    requests are let through instead of failed: a job must still be accepted. (Sessions keep a
    store that fails: sign-in must say it cannot work.)"""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def get(self, key: str, renew_for: int | timedelta | None = None) -> bytes | None:
        try:
            return await self._store.get(key, renew_for)
        except RedisError as exc:
            log.warning("rate-limit store unreachable, not limiting: %s", exc)
            return None

    async def set(self, key: str, value: str | bytes, expires_in: int | timedelta | None = None) -> None:
        try:
            await self._store.set(key, value, expires_in)
        except RedisError as exc:
            log.warning("rate-limit store unreachable, not recording: %s", exc)

    async def delete(self, key: str) -> None:
        with contextlib.suppress(RedisError):
            await self._store.delete(key)

    async def delete_all(self) -> None:
        with contextlib.suppress(RedisError):
            await self._store.delete_all()

    async def exists(self, key: str) -> bool:
        try:
            return await self._store.exists(key)
        except RedisError:
            return False

    async def expires_in(self, key: str) -> int | None:
        try:
            return await self._store.expires_in(key)
        except RedisError:
            return None


class RateLimitStore(FailOpenStore):
    """The rate limiter's store: a fail-open RedisStore that can also count a request in one
    round trip (`hit`), which `CountingRateLimitMiddleware` uses instead of a read and a write."""

    def __init__(self, redis: Redis[Any], namespace: str) -> None:
        super().__init__(RedisStore(redis, namespace=namespace))
        self._namespace = namespace
        self._hit = redis.register_script(_ATTEMPT)  # a request counted in its window, as a sign-in attempt is

    async def hit(self, key: str, window_s: int) -> tuple[int, int] | None:
        """Count one request under `key`: (requests in this window so far, seconds until it resets),
        or None when Redis cannot be reached (the request is let through)."""
        try:
            result = await self._hit(keys=[f"{self._namespace}:{key}"], args=[window_s])
        except RedisError as exc:
            log.warning("rate-limit store unreachable, not limiting: %s", exc)
            return None
        return int(result[0]), int(result[1])


class CountingRateLimitMiddleware(RateLimitMiddleware):
    """Litestar's rate limiter with a counter in place of its history of timestamps.

    Litestar's own middleware reads the history, appends to it and writes it back under one lock
    per process: two Redis round trips per request, a history that grows with the limit, and every
    limited request of the process waiting its turn. The window is the same fixed one (it starts
    with the first request and resets after the unit), the answers and headers are Litestar's; the
    count is one atomic script, so nothing waits on a lock and the count holds across processes.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = scope["litestar_app"]
        if isinstance(self.config, PerMinuteSetting):
            # The number is the app's own setting: routes are declared before any app is built.
            self.max_requests = getattr(app.state["quire"].settings, self.config.setting)
        request = app.request_class(scope)
        store = self.config.get_store_from_app(app)
        if isinstance(store, RateLimitStore) and await self.should_check_request(request=request):
            window = DURATION_VALUES[self.unit]
            counted = await store.hit(self.cache_key_from_request(request), window)
            if counted is not None:
                count, left = counted
                # Litestar's headers read the window from a history: one entry per request counted.
                seen = CacheObject(history=[0] * min(count, self.max_requests + 1), reset=int(time.time()) + left)
                if count > self.max_requests:
                    headers = self.create_response_headers(seen) if self.config.set_rate_limit_headers else None
                    raise TooManyRequestsException(headers=headers)
                if self.config.set_rate_limit_headers:
                    send = self.create_send_wrapper(send=send, cache_object=seen)
            await self.app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def _remote(request: Any) -> str:
    return request.client.host if request.client else "unknown"


def _login_key(request: Any) -> str:
    return f"login:{_remote(request)}"


def _submitter_key(request: Any) -> str:
    user = request.scope.get("user")
    return f"submit:{user.user_id}" if isinstance(user, Principal) else f"submit:{_remote(request)}"


async def _posts_only(request: Any) -> bool:
    return bool(request.method == "POST")


@dataclass
class PerMinuteSetting(RateLimitConfig):
    """A per-minute limit whose number is the setting `setting` of the app's `Quire`, read by the
    middleware at each request (a route's middleware is declared before the app and its settings
    exist)."""

    setting: str = ""


def _per_minute(setting: str, key: Any) -> RateLimitConfig:
    """POSTs per minute per key, as many as the setting `setting` allows, counted in the
    `rate_limit` store (a RateLimitStore)."""
    return PerMinuteSetting(
        setting=setting,
        rate_limit=("minute", 1),  # replaced by the setting's number at each request
        store="rate_limit",
        identifier_for_request=key,
        check_throttle_handler=_posts_only,
        middleware_class=CountingRateLimitMiddleware,
    )


def login_rate_limit() -> RateLimitConfig:
    """Login attempts per client address (`QUIRE_LOGIN_ATTEMPTS_PER_MINUTE`)."""
    return _per_minute("login_attempts_per_minute", _login_key)


def submission_rate_limit() -> RateLimitConfig:
    """Job submissions per person (`QUIRE_SUBMISSIONS_PER_MINUTE`)."""
    return _per_minute("submissions_per_minute", _submitter_key)
