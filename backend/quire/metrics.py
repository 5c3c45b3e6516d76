"""Prometheus metrics. Workers and web processes write to one multiprocess directory
(`QUIRE_METRICS_DIR`, default `<data dir>/metrics`) and `/metrics` on the web serves the sum,
plus figures read from the job record at scrape time. Labels stay low-cardinality: states,
event types, error codes and workflow names, never job ids or users.

This module must be imported before anything else imports prometheus_client.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from quire.settings import get_settings


def _multiprocess_dir() -> str:
    settings = get_settings()
    directory = settings.metrics_dir or settings.data_dir / "metrics"
    directory.mkdir(parents=True, exist_ok=True)
    return str(directory.resolve())


os.environ["PROMETHEUS_MULTIPROC_DIR"] = _multiprocess_dir()

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, multiprocess  # noqa: E402
from prometheus_client.core import GaugeMetricFamily, Metric  # noqa: E402
from prometheus_client.registry import Collector  # noqa: E402

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

TRANSITIONS = Counter("quire_transitions_total", "Job state transitions, by the event recorded", ["event"])
RETRIES = Counter("quire_retries_total", "Retries scheduled after a failed attempt", ["error"])
DEAD_LETTERS = Counter("quire_dead_letters_total", "Jobs dead-lettered", ["error", "workflow"])
LEASE_RECOVERIES = Counter("quire_lease_recoveries_total", "Running jobs recovered after their lease expired")
UPLOAD_BYTES = Counter("quire_upload_bytes_total", "Bytes of documents uploaded")
ATTEMPT_SECONDS = Histogram(
    "quire_attempt_duration_seconds",
    "How long attempts ran, by workflow and outcome",
    ["workflow", "outcome"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900),
)


class JobRecordCollector(Collector):
    """Gauges read from the job record when scraped: jobs by state, queue depth, oldest queued age."""

    def collect(self) -> Iterator[Metric]:
        from quire.jobs.operations import overview

        figures = overview(heartbeat_window_s=get_settings().lease_seconds)
        jobs = GaugeMetricFamily("quire_jobs", "Jobs by state", labels=["state"])
        for state, count in figures["by_state"].items():
            jobs.add_metric([state], count)
        yield jobs
        yield GaugeMetricFamily("quire_queue_depth", "Jobs waiting in the queue", value=figures["queue_depth"])
        yield GaugeMetricFamily(
            "quire_oldest_queued_age_seconds", "Age of the oldest queued job", value=figures["oldest_queued_age_s"]
        )
        yield GaugeMetricFamily(
            "quire_workers_alive", "Worker processes with a recent heartbeat", value=len(figures["workers"])
        )


def render() -> bytes:
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    registry.register(JobRecordCollector())
    return generate_latest(registry)
