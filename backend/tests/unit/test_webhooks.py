"""Webhooks in one process on a real database: signatures, targets, the outbox and the sender.

The sender posts to a real receiver on 127.0.0.1; the queue is the in-memory one, so what is
published, and when, can be read directly. The worker processes' path is in the integration tests.
"""

from __future__ import annotations

import base64
import ipaddress
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import partial

import pytest
from standardwebhooks.webhooks import Webhook

from backend.tests.integration.receiver import WebhookReceiver
from backend.tests.unit.test_states import WORKER, force, make_job
from quire.accounts import service as accounts
from quire.bootstrap import batch_body
from quire.db import Database
from quire.documents.storage import Storage
from quire.errors import ErrorCode
from quire.jobs import service, states
from quire.jobs.batches import BatchCompletion
from quire.jobs.models import Batch, JobStatus, Upload, utcnow
from quire.jobs.results import ResultCache
from quire.jobs.states import AttemptRef
from quire.queue.dispatch import Dispatcher, InMemoryQueue
from quire.settings import Settings
from quire.webhooks import deliveries
from quire.webhooks.models import WebhookEvent
from quire.webhooks.outbox import WebhookOutbox
from quire.webhooks.sender import WebhookSender, post
from quire.webhooks.signing import signed_headers
from quire.webhooks.targets import Target, TargetRefused, TargetUnresolved, check_url, refuse_private, resolve


def test_signatures_match_the_standard_webhooks_test_vector() -> None:
    # The test vector the Standard Webhooks libraries are checked against (their test suites).
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    at = datetime.fromtimestamp(1614265330, UTC)
    headers = signed_headers(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", at, '{"test": 2432232314}')
    assert headers == {
        "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp": "1614265330",
        "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    }


def test_account_secrets_are_whsec_and_32_random_bytes() -> None:
    secret = accounts.new_webhook_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    assert secret != accounts.new_webhook_secret()


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "127.8.8.8", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
     "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00:ec2::254", "::ffff:127.0.0.1",
     "::ffff:10.0.0.1", "ff02::1"],
)  # fmt: skip
def test_internal_addresses_are_refused(settings: Settings, address: str) -> None:
    with pytest.raises(TargetRefused):
        refuse_private(settings, ipaddress.ip_address(address), allow_private=False)
    refuse_private(settings, ipaddress.ip_address(address), allow_private=True)


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_are_allowed(settings: Settings, address: str) -> None:
    refuse_private(settings, ipaddress.ip_address(address), allow_private=False)


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/", "example.com/hook", "http://", "https://user:pw@example.com/", "http://example.com:0/",
     "http://example.com:99999/", "https://example.com/" + "x" * 2048],
)  # fmt: skip
def test_callback_urls_must_be_http_with_a_host(settings: Settings, url: str) -> None:
    with pytest.raises(TargetRefused):
        check_url(settings, url)


def test_names_are_checked_after_resolution(settings: Settings) -> None:
    # localhost passes the check of the URL as written, and is refused once resolved
    assert check_url(settings, "http://localhost:8080/hook") == "http://localhost:8080/hook"
    with pytest.raises(TargetRefused, match="loopback"):
        resolve(settings, "http://localhost:8080/hook", allow_private=False)
    target = resolve(settings, "http://localhost:8080/hook", allow_private=True)
    assert target.address.is_loopback
    assert (target.host, target.port) == ("localhost", 8080)


@pytest.fixture
def settings() -> Settings:
    # The receivers listen on this machine; the in-memory queue ignores delays, so retries are due
    # at once (no backoff).
    return Settings(
        webhook_allow_private=True,
        republish_after_seconds=0,
        webhook_timeout_s=2,
        webhook_max_attempts=3,
        webhook_retry_max_s=0,
    )


@pytest.fixture
def outbox(settings: Settings, db: Database) -> WebhookOutbox:
    return WebhookOutbox(db, settings, InMemoryQueue())


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as server:
        yield server


def _queue(outbox: WebhookOutbox) -> InMemoryQueue:
    assert isinstance(outbox.queue, InMemoryQueue)
    return outbox.queue


def _deliver_all(outbox: WebhookOutbox, sender: WebhookSender) -> None:
    """Run every published message as the `send_webhook` actor would, retries included."""
    queue = _queue(outbox)
    while queue.messages:
        sender.send(queue.take().job_id)


def _finished_batch(db: Database, owner: str, url: str | None) -> Batch:
    batch = Batch(owner_id=owner, workflow="document_summary", sealed_at=utcnow(), callback_url=url)
    with db.session() as session:
        session.add(batch)
    return batch


def _record_completed(db: Database, outbox: WebhookOutbox, batch: Batch) -> Callable[[], object] | None:
    with db.session() as session:
        return outbox.record_batch_completed(session, batch)


def test_a_batch_completed_event_is_recorded_sent_signed_and_sent_once(
    db: Database, outbox: WebhookOutbox, receiver: WebhookReceiver
) -> None:
    # Given an account and a finished batch's delivery, recorded in the transaction that marks it
    owner = accounts.create_user(db, "batch@example.com", "correct horse battery").user_id
    url = receiver.url("ok")
    batch = _finished_batch(db, owner, url)
    publish = _record_completed(db, outbox, batch)
    assert publish is not None
    assert _queue(outbox).messages == []  # nothing is sent before that transaction commits
    publish()
    # When the published message is delivered, twice (at-least-once delivery)
    message = _queue(outbox).take()
    view = {"batch_id": batch.id, "status": "completed", "total": 2}
    sender = WebhookSender(
        db, outbox.settings, outbox, render_job=lambda _job_id: None, render_batch=lambda _batch_id: view
    )
    sender.send(message.job_id)
    sender.send(message.job_id)
    # Then exactly one POST went out, the batch's view with the event's type, signed
    [call] = receiver.at(url)
    secret = accounts.webhook_secret(db, owner)
    assert secret is not None
    payload = Webhook(secret).verify(call.body, call.headers)
    assert {k: payload[k] for k in view} == view
    assert payload["type"] == "batch.completed"
    [delivery] = deliveries.deliveries_of(db, batch.id)
    assert (delivery.status, delivery.event, len(delivery.attempts)) == ("delivered", "batch.completed", 1)


def test_the_account_default_is_used_for_a_batch_without_a_callback(db: Database, outbox: WebhookOutbox) -> None:
    owner = accounts.create_user(db, "default@example.com", "correct horse battery").user_id
    batch = _finished_batch(db, owner, None)
    assert _record_completed(db, outbox, batch) is None  # no URL anywhere: nothing
    accounts.set_default_webhook_url(db, owner, "https://hooks.example.com/quire")
    assert _record_completed(db, outbox, batch) is not None
    assert [d.url for d in deliveries.deliveries_of(db, batch.id)] == ["https://hooks.example.com/quire"]


def test_a_batch_delivery_whose_batch_is_gone_is_given_up(db: Database, outbox: WebhookOutbox) -> None:
    owner = accounts.create_user(db, "gone@example.com", "correct horse battery").user_id
    batch = _finished_batch(db, owner, "https://hooks.example.com/quire")
    publish = _record_completed(db, outbox, batch)
    assert publish is not None
    publish()
    sender = WebhookSender(
        db, outbox.settings, outbox, render_job=lambda _job_id: None, render_batch=lambda _batch_id: None
    )
    sender.send(_queue(outbox).take().job_id)
    [delivery] = deliveries.deliveries_of(db, batch.id)
    assert delivery.status == "failed"
    assert delivery.attempts[-1].error == "The batch no longer exists."


def test_a_job_webhook_is_recorded_by_the_transition_and_survives_a_lost_publish(
    settings: Settings, db: Database, outbox: WebhookOutbox, receiver: WebhookReceiver
) -> None:
    # Given a running job with a callback URL
    owner = accounts.create_user(db, "jobs@example.com", "correct horse battery").user_id
    job = make_job(db, JobStatus.RUNNING, attempt=1)
    url = receiver.url("flaky")
    force(db, job.id, callback_url=url, owner_id=owner)
    # When it completes but its process dies before any after-commit hook ran
    assert states.complete(settings, db, AttemptRef(job.id, 1, WORKER), [], {}) is not None
    # Then the delivery is in the record, though no message went out
    [delivery] = deliveries.deliveries_of(db, job.id)
    assert (delivery.event, delivery.status, delivery.attempts) == ("job.completed", "pending", ())
    assert _queue(outbox).messages == []
    # And recovery publishes it, once: a message Redis still holds is not sent twice
    assert outbox.republish_lost() == 1
    assert _queue(outbox).reclaims == 0
    assert outbox.republish_lost() == 0
    # (but, overdue and still held, it may be held by a dead worker: the queue is asked to give it back)
    assert _queue(outbox).reclaims == 1
    # And the sender delivers it after the receiver's two 500s, with the job's view as the body
    sender = WebhookSender(
        db,
        outbox.settings,
        outbox,
        render_job=lambda job_id: {"job_id": job_id, "status": "completed"},
        render_batch=lambda _id: None,
    )
    _deliver_all(outbox, sender)
    assert [c.status for c in receiver.at(url)] == [500, 500, 200]
    assert json.loads(receiver.at(url)[-1].body) | {"timestamp": None} == {
        "type": "job.completed", "timestamp": None, "job_id": job.id, "status": "completed"
    }  # fmt: skip
    [delivery] = deliveries.deliveries_of(db, job.id)
    assert delivery.status == "delivered"
    assert [a.status_code for a in delivery.attempts] == [500, 500, 200]


def test_a_host_that_cannot_be_looked_up_is_tried_again_not_given_up(
    settings: Settings, db: Database, outbox: WebhookOutbox
) -> None:
    # Given a completed job whose callback host does not resolve (a name server down, a host being set up)
    owner = accounts.create_user(db, "lookup@example.com", "correct horse battery").user_id
    job = make_job(db, JobStatus.RUNNING, attempt=1)
    force(db, job.id, callback_url="https://hooks.example.invalid/quire", owner_id=owner)
    assert states.complete(settings, db, AttemptRef(job.id, 1, WORKER), [], {}) is not None
    assert outbox.republish_lost() == 1
    # When the sender makes its first attempt
    sender = WebhookSender(
        db, outbox.settings, outbox, render_job=lambda job_id: {"job_id": job_id}, render_batch=lambda _id: None
    )
    sender.send(_queue(outbox).take().job_id)
    # Then the delivery waits for its next attempt, as after a refused connection, and the retry is queued
    [delivery] = deliveries.deliveries_of(db, job.id)
    assert (delivery.status, len(delivery.attempts)) == ("pending", 1)
    assert delivery.last_error == "The host 'hooks.example.invalid' could not be resolved."
    assert delivery.next_attempt_at is not None
    assert len(_queue(outbox).messages) == 1


def test_a_host_name_no_lookup_can_ever_resolve_is_refused_for_good(settings: Settings) -> None:
    with pytest.raises(TargetRefused) as refused:
        resolve(settings, "https://" + "a" * 64 + ".example/hook")  # a label longer than DNS allows
    assert not isinstance(refused.value, TargetUnresolved)
    with pytest.raises(TargetUnresolved):
        resolve(settings, "https://hooks.example.invalid/hook")


def test_the_dispatchers_hook_sends_a_terminal_jobs_webhook_and_nothing_for_others(
    settings: Settings, db: Database, outbox: WebhookOutbox
) -> None:
    dispatcher = Dispatcher(InMemoryQueue())
    dispatcher.on_commit(outbox.after_transition)
    with_url, without = make_job(db, JobStatus.RUNNING, attempt=1), make_job(db, JobStatus.RUNNING, attempt=1)
    force(db, with_url.id, callback_url="https://hooks.example.com/x")
    for job in (with_url, without):
        ref = AttemptRef(job.id, 1, WORKER)
        dispatcher.record(job.id, partial(states.dead_letter, settings, db, ref, ErrorCode.INVALID_INPUT, "bad"))
    [message] = _queue(outbox).messages
    assert [d.delivery_id for d in deliveries.deliveries_of(db, with_url.id)] == [message.job_id]
    assert deliveries.deliveries_of(db, with_url.id)[0].event == WebhookEvent.JOB_DEAD_LETTER
    assert deliveries.deliveries_of(db, without.id) == []


def test_the_post_goes_to_the_checked_address_with_the_name_in_host(receiver: WebhookReceiver) -> None:
    # Given a target whose name could not even be resolved again, checked to 127.0.0.1
    url = receiver.url("ok").replace("127.0.0.1", "hooks.example.invalid")
    target = Target(url, "http", "hooks.example.invalid", receiver.port, ipaddress.ip_address("127.0.0.1"))
    # When it is posted to, the connection goes to the checked address: no second lookup
    answer = post(target, "{}", {"webhook-id": "msg_1"}, timeout_s=5)
    assert (answer.status_code, answer.error, answer.ok) == (200, None, True)
    [call] = receiver.at(url)
    # And the receiver sees the URL's own host name, and the body as signed
    assert call.headers["Host"] == f"hooks.example.invalid:{receiver.port}"
    assert (call.body, call.headers["webhook-id"], call.headers["Content-Type"]) == (b"{}", "msg_1", "application/json")


def test_a_finished_batch_sends_its_view_as_batch_completed(
    settings: Settings, db: Database, storage: Storage, outbox: WebhookOutbox, receiver: WebhookReceiver
) -> None:
    # Given a batch with a callback URL, its completion hook wired to the outbox as the bootstrap does
    owner = accounts.create_user(db, "batches@example.com", "correct horse battery").user_id
    url = receiver.url("batch")
    dispatcher = Dispatcher(InMemoryQueue())
    completion = BatchCompletion(db)
    dispatcher.on_commit(completion)
    completion.on_completed(outbox.record_batch_completed)
    batch = Batch(owner_id=owner, workflow="document_summary", sealed_at=utcnow(), callback_url=url)
    with db.session() as session:
        session.add(batch)
    upload = Upload(owner_id=owner, filename="a.txt", size=1, sha256="0" * 64, content_type="text/plain")
    job_id = service.submit(
        settings, db, dispatcher, "document_summary", upload, service.Limits(), owner, batch_id=batch.id
    ).job.id
    # When its last job ends
    service.cancel(settings, db, dispatcher, job_id)
    # Then one signed batch.completed arrives with the batch's view
    _deliver_all(
        outbox,
        WebhookSender(
            db,
            outbox.settings,
            outbox,
            render_job=lambda _job_id: None,
            render_batch=partial(batch_body, db, ResultCache(storage)),
        ),
    )
    [call] = receiver.at(url)
    secret = accounts.webhook_secret(db, owner)
    assert secret is not None
    payload = Webhook(secret).verify(call.body, call.headers)
    assert (payload["type"], payload["batch_id"], payload["status"], payload["total"]) == (
        "batch.completed",
        batch.id,
        "completed",
        1,
    )
    assert payload["counts"]["cancelled"] == 1
