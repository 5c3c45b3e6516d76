"""How often one may try: sign-in attempts per address and per account, job submissions per person.

All counters live in Redis, so they hold across web processes.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from litestar.middleware.rate_limit import CacheObject, RateLimitConfig, RateLimitMiddleware
from litestar.stores.base import Store
from redis.asyncio import Redis
from redis.exceptions import RedisError

from quire.accounts.service import Principal, normalise_email
from quire.settings import get_settings

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


def _per_minute(rate: int, key: Any) -> RateLimitConfig:
    """POSTs per minute per key, failing open when the store is unreachable."""
    return RateLimitConfig(
        rate_limit=("minute", rate),
        store="rate_limit",
        identifier_for_request=key,
        check_throttle_handler=_posts_only,
        middleware_class=FailOpenRateLimit,
    )


def login_rate_limit() -> RateLimitConfig:
    """Login attempts per client address."""
    return _per_minute(get_settings().login_attempts_per_minute, _login_key)


def submission_rate_limit() -> RateLimitConfig:
    """Job submissions per person."""
    return _per_minute(get_settings().submissions_per_minute, _submitter_key)
