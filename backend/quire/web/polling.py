"""The polling schedule the server hands the browser: fast at first, slower later, then stop.

A page starts watching at `since` (server time, epoch milliseconds, carried in the polling URL).
Every 2 s for the first 10 s, then every 5 s; after 2 minutes of watching polling stops and the
page offers "Check now", which starts a fresh watch. A terminal job stops polling at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from quire.settings import Settings


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Poll:
    """What the next fragment tells the browser: poll again after `delay_s`, or stop."""

    since: int
    delay_s: float | None
    gave_up: bool

    @property
    def active(self) -> bool:
        return self.delay_s is not None


def next_poll(settings: Settings, since: int | None, terminal: bool, now: int | None = None) -> Poll:
    now = now_ms() if now is None else now
    # A missing or future start (a bad clock, an edited URL) starts the watch now.
    since = now if since is None or since > now else since
    if terminal:
        return Poll(since, None, gave_up=False)
    watched_s = (now - since) / 1000
    if watched_s >= settings.poll_stop_after_s:
        return Poll(since, None, gave_up=True)
    delay = settings.poll_fast_s if watched_s < settings.poll_fast_for_s else settings.poll_slow_s
    return Poll(since, delay, gave_up=False)
