"""The server-decided polling schedule, and what it costs over a long job."""

from __future__ import annotations

from quire.settings import Settings
from quire.web.polling import next_poll


def requests_over(settings: Settings, job_seconds: float) -> int:
    """How many status requests a page following the schedule makes while a job runs."""
    since, t, count = 0, 0.0, 0
    while True:
        poll = next_poll(settings, since, terminal=t >= job_seconds, now=int(t * 1000))
        if poll.delay_s is None:
            return count
        t += poll.delay_s
        count += 1


def test_schedule_is_fast_then_slow_then_stops() -> None:
    settings = Settings()
    assert next_poll(settings, 0, False, now=0).delay_s == 2
    assert next_poll(settings, 0, False, now=9_999).delay_s == 2
    assert next_poll(settings, 0, False, now=10_000).delay_s == 5
    assert next_poll(settings, 0, False, now=119_999).delay_s == 5
    stopped = next_poll(settings, 0, False, now=120_000)
    assert (stopped.delay_s, stopped.gave_up) == (None, True)


def test_terminal_stops_at_once_and_bad_start_restarts_the_watch() -> None:
    settings = Settings()
    assert next_poll(settings, 0, True, now=1_000).delay_s is None
    assert not next_poll(settings, 0, True, now=1_000).gave_up
    assert next_poll(settings, 5_000_000, False, now=1_000).since == 1_000
    assert next_poll(settings, None, False, now=1_000).delay_s == 2


def test_two_minute_job_costs_a_tenth_of_fixed_half_second_polling() -> None:
    adaptive = requests_over(Settings(), 120)
    fixed = int(120 / 0.5)
    assert adaptive == 5 + 22
    assert adaptive * 8 < fixed
