"""Prometheus metrics. Workers and web processes write to one multiprocess directory
(`QUIRE_METRICS_DIR`, default `<data dir>/metrics`) and `/metrics` on the web serves the sum,
plus figures read from the job record at scrape time (`quire.web.health`). Labels stay
low-cardinality: states, event types, error codes and workflow names, never job ids or users.

Nothing here runs on import: the bootstrap calls `start_metrics` first, which points
prometheus_client at the shared directory before the library is imported, then builds the
instruments.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from functools import lru_cache
from typing import Any, Protocol

from quire.settings import Settings

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
ATTEMPT_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900)


class Collector(Protocol):
    """What `render` takes besides the shared files: anything with prometheus_client's `collect()`."""

    def collect(self) -> Iterable[Any]: ...


def multiprocess_dir(settings: Settings) -> str:
    directory = settings.metrics_dir or settings.data_dir / "metrics"
    directory.mkdir(parents=True, exist_ok=True)
    return str(directory.resolve())


class Metrics:
    """This process's instruments, writing to the shared multiprocess directory."""

    def __init__(self) -> None:
        # prometheus_client chooses where values live (shared files or this process's memory) once,
        # when it is first imported, from PROMETHEUS_MULTIPROC_DIR: so `start_metrics` sets the
        # variable first and the library is imported only then, here rather than at the top.
        from prometheus_client import Counter, Histogram

        # registry=None: the values are read back from the files by `render`, never from a registry.
        self.transitions = Counter(
            "quire_transitions_total", "Job state transitions, by the event recorded", ["event"], registry=None
        )
        self.retries = Counter(
            "quire_retries_total", "Retries scheduled after a failed attempt", ["error"], registry=None
        )
        self.dead_letters = Counter(
            "quire_dead_letters_total", "Jobs dead-lettered", ["error", "workflow"], registry=None
        )
        self.lease_recoveries = Counter(
            "quire_lease_recoveries_total", "Running jobs recovered after their lease expired", registry=None
        )
        self.upload_bytes = Counter("quire_upload_bytes_total", "Bytes of documents uploaded", registry=None)
        self.webhook_attempts = Counter(
            "quire_webhook_attempts_total",
            "Webhook delivery attempts, by what followed: delivered, retry or failed (given up)",
            ["outcome"],
            registry=None,
        )
        self.attempt_seconds = Histogram(
            "quire_attempt_duration_seconds",
            "How long attempts ran, by workflow and outcome",
            ["workflow", "outcome"],
            buckets=ATTEMPT_BUCKETS,
            registry=None,
        )

    def render(self, collectors: Iterable[Collector] = ()) -> bytes:
        """The exposition of every process sharing the directory, plus `collectors`' figures."""
        from prometheus_client import CollectorRegistry, generate_latest, multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        for collector in collectors:
            registry.register(collector)
        return generate_latest(registry)


class JobFigures(Protocol):
    """What the gauges read (`jobs.operations.Overview` has it)."""

    @property
    def by_state(self) -> Mapping[str, int]: ...
    @property
    def queue_depth(self) -> int: ...
    @property
    def oldest_queued_age_s(self) -> float: ...
    @property
    def workers(self) -> Sized: ...


class JobRecordCollector:
    """Gauges read from the job record when scraped: jobs by state, queue depth, oldest queued age.

    `figures` reads them (`jobs.operations.overview`); passed in, as the job record sits above this module.
    """

    def __init__(self, figures: Callable[[], JobFigures]) -> None:
        self.figures = figures

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily  # see Metrics.__init__ for why here

        figures = self.figures()
        jobs = GaugeMetricFamily("quire_jobs", "Jobs by state", labels=["state"])
        for state, count in figures.by_state.items():
            jobs.add_metric([state], count)
        yield jobs
        yield GaugeMetricFamily("quire_queue_depth", "Jobs waiting in the queue", value=figures.queue_depth)
        yield GaugeMetricFamily(
            "quire_oldest_queued_age_seconds", "Age of the oldest queued job", value=figures.oldest_queued_age_s
        )
        yield GaugeMetricFamily(
            "quire_workers_alive", "Worker processes with a recent heartbeat", value=len(figures.workers)
        )


def start_metrics(settings: Settings) -> Metrics:
    """Point prometheus_client at the shared directory the settings name, then build this process's
    instruments; the bootstrap calls it before anything else."""
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = multiprocess_dir(settings)
    return get_metrics()


@lru_cache(maxsize=1)
def get_metrics() -> Metrics:
    """This process's instruments, built once. prometheus_client keeps a process's values
    process-wide (in the shared directory once `start_metrics` has named it, else in memory, as in
    unit tests) whatever object holds the instruments, so what records a value reaches them here
    rather than being handed them through every call on the way."""
    return Metrics()
