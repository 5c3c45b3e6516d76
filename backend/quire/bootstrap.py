"""One bootstrap for the web app, the worker and the CLI: the parts a process needs, built once.

Importing any module of the package only defines things. Whatever touches the process (the
metrics directory, the broker and its Redis pool, the dispatcher, per-process state such as the
admission read or the attempts a worker holds) is built here and handed to what needs it:
Litestar dependencies for the handlers, this object for the worker and the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass

from quire.jobs.service import Admission
from quire.jobs.store import RecentViews
from quire.metrics import Metrics, get_metrics
from quire.queue.actors import declare_process_job
from quire.queue.broker import DEFAULT_REDIS_URL, RedisBroker, RedisQueue, create_broker
from quire.queue.dispatch import Dispatcher
from quire.queue.runner import Runner
from quire.settings import Settings, get_settings


@dataclass
class Quire:
    """The application object: what a web, worker or CLI process runs on."""

    settings: Settings
    metrics: Metrics
    broker: RedisBroker
    dispatcher: Dispatcher
    admission: Admission
    recent_views: RecentViews

    def worker_runner(self) -> Runner:
        """The runner for a worker process, with `process_job` declared on the broker to call it."""
        runner = Runner(self.dispatcher)
        declare_process_job(self.broker, runner.run_attempt)
        return runner


def bootstrap(settings: Settings | None = None) -> Quire:
    settings = settings or get_settings()
    # First, so that prometheus_client writes to the shared directory from its first value on.
    metrics = get_metrics()
    broker = create_broker(settings.redis_url or DEFAULT_REDIS_URL)
    return Quire(
        settings=settings,
        metrics=metrics,
        broker=broker,
        dispatcher=Dispatcher(RedisQueue(broker)),
        admission=Admission(),
        recent_views=RecentViews(),
    )
