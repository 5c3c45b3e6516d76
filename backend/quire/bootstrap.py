"""One bootstrap for the web app, the worker and the CLI: the parts a process needs, built once.

Importing any module of the package only defines things. Whatever touches the process (the
metrics directory, the broker and its Redis pool, the dispatcher, per-process state such as the
admission read) is built here and handed to what needs it: Litestar dependencies for the handlers,
this object for the worker and the CLI. A worker process adds what only it runs (its runner, with
the attempts it holds, and its webhook sender) in `queue/worker.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from quire.db import Database, open_database
from quire.documents.storage import Storage, configured_storage
from quire.jobs.batches import BatchCompletion, BatchView, batch_view, get_batch
from quire.jobs.results import ResultCache
from quire.jobs.service import Admission
from quire.jobs.store import RecentViews, iso
from quire.metrics import Metrics, start_metrics
from quire.queue.broker import (
    DEFAULT_REDIS_URL,
    WEBHOOK_ACTOR,
    WEBHOOK_QUEUE,
    RedisBroker,
    RedisQueue,
    create_broker,
)
from quire.queue.dispatch import Dispatcher
from quire.queue.live import ChangePublisher
from quire.settings import Settings
from quire.webhooks.outbox import WebhookOutbox


@dataclass
class Quire:
    """The application object: what a web, worker or CLI process runs on."""

    settings: Settings
    db: Database
    storage: Storage
    metrics: Metrics
    broker: RedisBroker
    dispatcher: Dispatcher
    admission: Admission
    recent_views: RecentViews
    # Invoice values read from published artifacts, kept per process (jobs/results.py).
    results: ResultCache
    # Hears each batch finish; listeners (webhooks) attach with `batches.on_completed`.
    batches: BatchCompletion
    webhooks: WebhookOutbox


def bootstrap(settings: Settings | None = None, pool_size: int | None = None) -> Quire:
    """Everything a process runs on, from `settings` (by default, read from the environment).
    `pool_size` fixes the database's connection pool (a worker sizes it to its threads)."""
    settings = settings or Settings()
    # First, so that prometheus_client writes to the shared directory from its first value on.
    metrics = start_metrics(settings)
    db = open_database(settings, pool_size)
    broker = create_broker(
        settings.redis_url or DEFAULT_REDIS_URL,
        settings.broker_heartbeat_timeout_ms,
        settings.broker_maintenance_chance,
    )
    dispatcher = Dispatcher(RedisQueue(broker))
    # Live updates: every committed change, from any process, reaches every web process.
    dispatcher.on_commit(ChangePublisher(db, broker.client))
    batches = BatchCompletion(db)
    dispatcher.on_commit(batches)
    webhooks = WebhookOutbox(db, settings, RedisQueue(broker, WEBHOOK_QUEUE, WEBHOOK_ACTOR))
    # A job's terminal transition records its webhook; this sends it as soon as that commits.
    dispatcher.on_commit(webhooks.after_transition)
    storage = configured_storage(settings)
    results = ResultCache(storage)
    batches.on_completed(webhooks.record_batch_completed)
    return Quire(
        settings=settings,
        db=db,
        storage=storage,
        metrics=metrics,
        broker=broker,
        dispatcher=dispatcher,
        admission=Admission(db, settings.admission_max_queue_age_s),
        recent_views=RecentViews(),
        results=results,
        batches=batches,
        webhooks=webhooks,
    )


def batch_body(db: Database, results: ResultCache, batch_id: str) -> BatchView | None:
    """A `batch.completed` webhook's body: the batch's view, or None when the batch is gone."""
    batch = get_batch(db, batch_id)
    return batch_view(db, batch, results, iso) if batch is not None else None
