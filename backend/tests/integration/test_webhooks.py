"""Signed webhooks against real receivers on 127.0.0.1, real `quire web` and `quire worker` processes."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from backend.tests.integration.conftest import running_stack
from backend.tests.integration.receiver import WebhookReceiver
from backend.tests.integration.stack import Stack, document
from quire.queue.embedded_redis import EmbeddedRedis

OWNER = "owner@example.com"


@pytest.fixture(scope="module")
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as server:
        yield server


def _secret(stack: Stack) -> str:
    """Rotate the owner's signing secret with the CLI and return the new one."""
    printed = stack.quire("webhooks", "secret", OWNER)
    assert printed.returncode == 0, printed.stderr
    secret = printed.stdout.strip()
    assert secret.startswith("whsec_")
    return secret


def _seconds(start: str, end: str) -> float:
    parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def _deliveries(stack: Stack, job_id: str) -> list[dict[str, Any]]:
    response = stack.http.get(f"/ai-jobs/{job_id}/webhooks")
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def _settled(stack: Stack, job_id: str, timeout: float = 20) -> list[dict[str, Any]]:
    """The job's deliveries once none is pending any more."""
    deadline = time.monotonic() + timeout
    while True:
        items = _deliveries(stack, job_id)
        if items and all(d["status"] != "pending" for d in items):
            return items
        if time.monotonic() > deadline:
            raise AssertionError(f"deliveries of {job_id} still pending: {items}")
        time.sleep(0.05)


def test_a_completed_job_posts_its_view_signed_with_the_account_secret(
    shared_stack: Stack, receiver: WebhookReceiver
) -> None:
    # Given the account's signing secret and a job with a callback URL
    secret = _secret(shared_stack)
    url = receiver.url("ok")
    job_id = shared_stack.submit(document(), callback_url=url)
    view = shared_stack.wait(job_id)
    # When the job completes, one POST arrives
    [call] = receiver.wait_for(url)
    # Then its Standard Webhooks signature verifies with the secret, over the exact body
    payload = Webhook(secret).verify(call.body, call.headers)
    assert call.headers["webhook-id"].startswith("msg_")
    assert call.headers["webhook-signature"].startswith("v1,")
    assert abs(int(call.headers["webhook-timestamp"]) - time.time()) < 60
    # And the body is the job's view as the API shows it, with the event's type and time
    assert payload["type"] == "job.completed"
    datetime.fromisoformat(payload["timestamp"].replace("Z", "+00:00"))
    assert payload["job_id"] == job_id
    assert payload["status"] == "completed"
    assert payload["artifact"]["url"] == view["artifact"]["url"]
    assert {k: payload[k] for k in view} == {**view, "updated_at": payload["updated_at"]}
    # And a body changed by one byte does not verify
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(call.body.replace(b"completed", b"completes"), call.headers)
    # And the API shows the delivery with its one attempt
    [delivery] = _settled(shared_stack, job_id)
    assert delivery["delivery_id"] == call.headers["webhook-id"]
    assert (delivery["event"], delivery["url"], delivery["status"]) == ("job.completed", url, "delivered")
    assert [(a["attempt"], a["status_code"], a["error"]) for a in delivery["attempts"]] == [(1, 200, None)]


def test_a_finished_batch_posts_its_view_once_and_lists_the_delivery(
    shared_stack: Stack, receiver: WebhookReceiver
) -> None:
    # Given a batch of two documents with a callback URL (its jobs have none of their own)
    secret = _secret(shared_stack)
    url = receiver.url("batch")
    response = shared_stack.http.post(
        "/batches",
        data={"workflow": "document_summary", "callback_url": url},
        files=[("file", ("a.txt", document(), "text/plain")), ("file", ("b.txt", document("slow:0.5"), "text/plain"))],
    )
    assert response.status_code == 202, response.text
    batch_id = response.json()["batch_id"]
    # When both have finished, one signed POST arrives with the batch's view
    [call] = receiver.wait_for(url)
    payload = Webhook(secret).verify(call.body, call.headers)
    assert (payload["type"], payload["batch_id"], payload["status"]) == ("batch.completed", batch_id, "completed")
    assert (payload["total"], payload["done"], payload["counts"]["completed"]) == (2, 2, 2)
    # And the batch's deliveries list it as delivered, once; the jobs have none
    deadline = time.monotonic() + 20
    while (listed := shared_stack.http.get(f"/batches/{batch_id}/webhooks").json()["items"])[0]["status"] == "pending":
        assert time.monotonic() < deadline, listed
        time.sleep(0.05)
    [delivery] = listed
    assert (delivery["event"], delivery["status"], delivery["delivery_id"]) == (
        "batch.completed",
        "delivered",
        call.headers["webhook-id"],
    )
    assert all(_deliveries(shared_stack, job["job_id"]) == [] for job in response.json()["jobs"])
    time.sleep(0.5)
    assert len(receiver.at(url)) == 1


def test_a_failing_receiver_gets_exactly_one_successful_delivery_after_retries(
    shared_stack: Stack, receiver: WebhookReceiver
) -> None:
    # Given a receiver that answers 500 twice, then 200; and a job that dead-letters
    url = receiver.url("flaky")
    job_id = shared_stack.submit(document("rejected"), callback_url=url)
    assert shared_stack.wait(job_id)["status"] == "dead_letter"
    # When the delivery is retried
    calls = receiver.wait_for(url, 3)
    [delivery] = _settled(shared_stack, job_id)
    time.sleep(0.5)
    # Then the receiver saw three tries of the same message and exactly one 200
    calls = receiver.at(url)
    assert [c.status for c in calls] == [500, 500, 200]
    assert len({c.headers["webhook-id"] for c in calls}) == 1
    assert {json.loads(c.body)["type"] for c in calls} == {"job.dead_letter"}
    assert len({c.body for c in calls}) == 1  # every retry sends the same bytes
    # And the record shows each attempt, and the metrics count them
    assert delivery["status"] == "delivered"
    assert [(a["attempt"], a["status_code"]) for a in delivery["attempts"]] == [(1, 500), (2, 500), (3, 200)]
    metrics = shared_stack.http.get("/metrics").text
    retries = re.search(r'^quire_webhook_attempts_total\{outcome="retry"\} (\S+)$', metrics, re.M)
    assert retries is not None, metrics
    assert float(retries.group(1)) >= 2


def test_a_hanging_receiver_times_out_without_slowing_other_jobs(
    shared_stack: Stack, receiver: WebhookReceiver
) -> None:
    # Given more receivers that never answer than a worker process has threads (4 for jobs, 2 for webhooks)
    hanging = [shared_stack.submit(document(), callback_url=receiver.url("hang")) for _ in range(6)]
    for job_id in hanging:
        shared_stack.wait(job_id)
    # When other jobs are submitted while those deliveries hang
    others = [shared_stack.submit(document()) for _ in range(4)]
    views = [shared_stack.wait(job_id) for job_id in others]
    # Then each completes at once: none waits out a webhook's 1.5 s timeout for a thread
    assert all(v["status"] == "completed" for v in views)
    assert max(_seconds(v["created_at"], v["updated_at"]) for v in views) < 1.2
    # And each hanging delivery times out and, after its 3 attempts, is given up
    delivery = _settled(shared_stack, hanging[0], timeout=30)[0]
    assert delivery["status"] == "failed"
    assert [a["error"] for a in delivery["attempts"]] == ["No answer within 1.5 s."] * 3
    assert all(1400 <= a["duration_ms"] < 3000 for a in delivery["attempts"])


def test_redirects_are_not_followed_and_gone_ends_the_delivery(shared_stack: Stack, receiver: WebhookReceiver) -> None:
    redirect, gone = receiver.url("redirect"), receiver.url("gone")
    redirected = shared_stack.submit(document(), callback_url=redirect)
    ended = shared_stack.submit(document(), callback_url=gone)
    # A 302 is a failed attempt, retried up to the limit; its target is never asked
    [delivery] = _settled(shared_stack, redirected)
    assert [a["status_code"] for a in delivery["attempts"]] == [302, 302, 302]
    assert delivery["status"] == "failed"
    assert not [r for r in receiver.received if r.path == "/ok"]
    # 410 Gone: the receiver wants no more, so there is no retry
    [delivery] = _settled(shared_stack, ended)
    assert [a["status_code"] for a in delivery["attempts"]] == [410]
    assert delivery["status"] == "failed"


def test_rotating_the_secret_changes_signatures_and_a_replay_resends_the_same_message(
    shared_stack: Stack, receiver: WebhookReceiver
) -> None:
    # Given a delivered webhook
    url = receiver.url("ok")
    job_id = shared_stack.submit(document(), callback_url=url)
    [first] = receiver.wait_for(url)
    [delivery] = _settled(shared_stack, job_id)
    # When the secret is rotated with the CLI and the delivery is replayed through the API
    new = _secret(shared_stack)
    response = shared_stack.http.post(f"/webhook-deliveries/{delivery['delivery_id']}/replay")
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "pending"
    [_, again] = receiver.wait_for(url, 2)
    # Then the same message (id and body) arrives, signed with the new secret, which the old
    # signature does not match
    assert again.headers["webhook-id"] == first.headers["webhook-id"]
    assert again.body == first.body
    Webhook(new).verify(again.body, again.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(new).verify(first.body, {**first.headers, "webhook-timestamp": again.headers["webhook-timestamp"]})
    assert again.headers["webhook-signature"] != first.headers["webhook-signature"]
    assert len(_settled(shared_stack, job_id)[0]["attempts"]) == 2


def test_private_targets_are_refused_without_the_setting(
    redis_server: EmbeddedRedis, tmp_path: Path, receiver: WebhookReceiver
) -> None:
    with running_stack("sqlite", redis_server, tmp_path, QUIRE_WEBHOOK_ALLOW_PRIVATE="false") as stack:
        # A URL that is not http(s), carries a password, is too long, or names a literal loopback,
        # private, link-local (metadata) or mapped address is refused at once
        hosts = ["127.0.0.1", "10.0.0.8", "169.254.169.254", "[::1]", "[::ffff:127.0.0.1]", "[fd00:ec2::254]"]
        bad = [f"http://{host}:{receiver.port}/x" for host in hosts]
        bad += ["ftp://example.com/x", "http://user:pw@example.com/", "https://" + "a" * 2050 + ".com/", "/x"]
        for url in bad:
            response = stack.http.post(
                "/ai-jobs",
                data={"workflow": "document_summary", "callback_url": url},
                files={"file": ("a.txt", document())},
            )
            assert response.status_code == 422, url
            assert response.json()["code"] == "invalid_callback_url", response.text
        # The JSON body's callback_url is checked the same way
        upload = stack.http.post("/uploads", files={"file": ("a.txt", document())}).json()
        job = {"workflow": "document_summary", "input_ref": upload["input_ref"]}
        response = stack.http.post("/ai-jobs", json={**job, "callback_url": bad[0]})
        assert (response.status_code, response.json()["code"]) == (422, "invalid_callback_url")
        # A name is checked after it is resolved, when the webhook is sent: localhost is loopback
        url = receiver.url("ok", host="localhost")
        response = stack.http.post("/ai-jobs", json={**job, "callback_url": url})
        assert response.status_code == 202, response.text
        job_id = response.json()["job_id"]
        [delivery] = _settled(stack, job_id)
        assert delivery["status"] == "failed"
        [attempt] = delivery["attempts"]
        assert attempt["status_code"] is None
        assert "loopback, private or reserved" in attempt["error"]
        assert receiver.at(url) == []
        # And another person's job's deliveries, and their replay, are a 404
        stranger = stack.client(stack.create_user("stranger@example.com"))
        assert stranger.get(f"/ai-jobs/{job_id}/webhooks").status_code == 404
        assert stranger.post(f"/webhook-deliveries/{delivery['delivery_id']}/replay").status_code == 404
