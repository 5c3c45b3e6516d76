"""The operator side: admin pages, group replay at a rate, purge, retention, logs, metrics,
the alert webhook and graceful shutdown, each against real processes."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.tests.conftest import make_database
from backend.tests.integration.conftest import fresh_redis_url
from backend.tests.integration.stack import Stack, document, event_types
from backend.tests.integration.test_security import browser_session, csrf
from quire.queue.embedded_redis import EmbeddedRedis


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.fixture
def ops_stack(redis_server: EmbeddedRedis, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Stack]:
    env: dict[str, str] = getattr(request, "param", {})
    database = make_database("sqlite", tmp_path)
    stack = Stack(tmp_path, database, fresh_redis_url(redis_server), QUIRE_LOG_JSON="true", **env)
    stack.start_web(owner="operator@example.com")
    yield stack
    stack.stop()
    database.drop()


def test_operator_pages_are_for_admins_only(ops_stack: Stack) -> None:
    ops_stack.start_worker()
    ops_stack.create_user("admin@example.com", admin=True)
    crashed = ops_stack.submit(document("crash"), max_attempts=1)
    ops_stack.wait(crashed)
    user = browser_session(ops_stack, "operator@example.com")
    for path in ["/admin/", "/admin/dead-letters", "/admin/jobs", f"/admin/jobs/{crashed}"]:
        assert user.get(path).status_code == 404, path
    assert (
        user.post(f"/admin/jobs/{crashed}/purge", data={"_csrf_token": csrf(user), "confirm": "yes"}).status_code == 404
    )
    admin = browser_session(ops_stack, "admin@example.com")
    overview = admin.get("/admin/")
    assert overview.status_code == 200
    assert 'data-count="dead_letter">1<' in overview.text
    assert "data-worker=" in overview.text  # the worker is alive and named
    groups = admin.get("/admin/dead-letters").text
    assert 'data-fingerprint="internal_error:document_summary@1"' in groups
    history = admin.get(f"/admin/jobs/{crashed}").text
    assert "FakeCrash: the fake provider crashed on purpose" in history  # operators see the exception
    assert "FakeCrash" not in str(ops_stack.job(crashed))  # the owner's payload never does
    found = admin.get("/admin/jobs", params={"email": "operator@example.com", "status": "dead_letter"}).text
    assert crashed in found
    assert crashed not in admin.get("/admin/jobs", params={"status": "completed"}).text


def test_a_malformed_answer_leaves_evidence_for_operators_only(ops_stack: Stack) -> None:
    # Given a model whose answer does not match the workflow's schema
    ops_stack.start_worker()
    ops_stack.create_user("admin@example.com", admin=True)
    job_id = ops_stack.submit(document("malformed"))
    # When the job runs, it dead-letters at once (no retry for a malformed answer)
    view = ops_stack.wait(job_id)
    assert view["status"] == "dead_letter"
    assert event_types(view) == ["queued", "running", "dead_letter"]
    # Then its owner sees the plain error and no trace of the answer, in the API and on the page
    assert view["error"]["code"] == "malformed_output"
    assert view["artifacts"] == []
    assert view["artifact"] is None
    assert "unexpected" not in str(view)
    assert "Field required" not in str(view)
    evidence_name = "raw-answer-attempt-1.json"
    assert ops_stack.http.get(f"/ai-jobs/{job_id}/artifacts/{evidence_name}").status_code == 404
    owner = browser_session(ops_stack, "operator@example.com")
    assert "Field required" not in owner.get(f"/jobs/{job_id}").text
    assert owner.get(f"/admin/jobs/{job_id}/evidence/{evidence_name}").status_code == 404
    # And an admin sees the validator's findings (field paths and messages) and the raw answer
    admin = browser_session(ops_stack, "admin@example.com")
    page = admin.get(f"/admin/jobs/{job_id}").text
    assert "validation: title: Field required; summary: Field required" in page
    assert f'data-evidence="{evidence_name}"' in page
    raw = admin.get(f"/admin/jobs/{job_id}/evidence/{evidence_name}")
    assert raw.status_code == 200
    assert raw.json() == {"unexpected": "shape"}
    assert raw.headers["content-disposition"].startswith("attachment")
    # The same as JSON for operators' tools; for the owner it does not exist
    detail = admin.get(f"/admin/jobs/{job_id}/detail").json()
    [evidence] = detail["evidence"]
    assert evidence["url"] == f"/admin/jobs/{job_id}/evidence/{evidence_name}"
    assert "validation: title: Field required" in (detail["history"][-1]["operator_detail"] or "")
    assert owner.get(f"/admin/jobs/{job_id}/detail").status_code == 404
    # Even for an admin the owner's routes do not serve it: it is not a result of the job
    admin_api = ops_stack.client(ops_stack.create_user("admin2@example.com", admin=True))
    assert evidence_name not in admin_api.get(f"/ai-jobs/{job_id}").text
    assert admin_api.get(f"/ai-jobs/{job_id}/artifacts/{evidence_name}").status_code == 404


@pytest.mark.serial  # measures the spacing of replays, which a busy machine stretches
def test_group_replay_asks_first_and_keeps_the_rate(ops_stack: Stack) -> None:
    ops_stack.start_worker()
    ops_stack.create_user("admin@example.com", admin=True)
    ids = [ops_stack.submit(document("rejected")) for _ in range(5)]
    for job_id in ids:
        ops_stack.wait(job_id)
    admin = browser_session(ops_stack, "admin@example.com")
    form = {"error": "upstream_rejected", "workflow": "document_summary", "workflow_version": "1", "rate": "4"}
    confirm = admin.post("/admin/dead-letters/replay", data={**form, "_csrf_token": csrf(admin)})
    assert "Replay 5 jobs?" in confirm.text
    assert all(ops_stack.job(i)["status"] == "dead_letter" for i in ids)  # nothing happened yet
    # The CLI does the same synchronously; measure the spacing of the replays it makes.
    result = ops_stack.quire("jobs", "replay", "--error", "upstream_rejected", "--rate", "4")
    assert result.returncode == 0, result.stderr
    assert "replayed 5 jobs" in result.stdout
    replayed = sorted(_at(e["at"]) for i in ids for e in ops_stack.job(i)["events"] if e["type"] == "replayed")
    gaps = [(b - a).total_seconds() for a, b in pairwise(replayed)]
    assert len(gaps) == 4
    assert all(0.2 <= g <= 0.6 for g in gaps), gaps
    done = admin.post("/admin/dead-letters/replay", data={**form, "confirm": "yes", "_csrf_token": csrf(admin)})
    assert done.status_code == 303


def test_a_group_replay_survives_restarts_and_replays_each_job_once(ops_stack: Stack) -> None:
    # Given a dead-letter group of ten jobs whose provider still refuses them
    worker = ops_stack.start_worker()
    ops_stack.create_user("admin@example.com", admin=True)
    ids = [ops_stack.submit(document("rejected")) for _ in range(10)]
    for job_id in ids:
        ops_stack.wait(job_id)

    def replayed_events() -> list[datetime]:
        return sorted(_at(e["at"]) for i in ids for e in ops_stack.job(i)["events"] if e["type"] == "replayed")

    # When an admin replays the group at 2 jobs a second
    admin = browser_session(ops_stack, "admin@example.com")
    form = {"error": "upstream_rejected", "workflow": "document_summary", "workflow_version": "1", "rate": "2"}
    started = admin.post("/admin/dead-letters/replay", data={**form, "confirm": "yes", "_csrf_token": csrf(admin)})
    assert started.status_code == 303
    assert started.headers["location"].startswith("/admin/dead-letters#replay-")
    deadline = time.monotonic() + 30
    while len(replayed_events()) < 2:
        assert time.monotonic() < deadline, "no worker took the replay on"
        time.sleep(0.1)
    # ... and midway both the web process and the worker carrying the replay out are killed
    assert len(replayed_events()) < len(ids)
    assert ops_stack.web is not None
    ops_stack.kill(ops_stack.web)
    ops_stack.kill(worker)
    ops_stack.start()
    # Then another worker goes on from where it stopped, and the admin page shows the progress
    admin = browser_session(ops_stack, "admin@example.com")
    deadline = time.monotonic() + 60
    while 'data-replay-state="done"' not in (page := admin.get("/admin/dead-letters").text):
        assert time.monotonic() < deadline, page
        time.sleep(0.3)
    assert 'data-replayed="10"' in page
    assert "10 of 10 replayed" in page
    # And every job of the group was replayed exactly once (each failed again, and was not replayed again)
    assert [[e["type"] for e in ops_stack.job(i)["events"]].count("replayed") for i in ids] == [1] * len(ids)
    assert all(ops_stack.wait(i)["status"] == "dead_letter" for i in ids)
    # At the rate asked for: nine gaps of at least half a second, give or take the clock's grain
    replayed = replayed_events()
    assert (replayed[-1] - replayed[0]).total_seconds() >= 9 * 0.5 * 0.9


def test_purge_removes_records_and_files(ops_stack: Stack) -> None:
    ops_stack.start_worker()
    job_id = ops_stack.submit(document())
    view = ops_stack.wait(job_id)
    files = ops_stack.data_dir / "files"
    assert (files / "artifacts" / job_id).exists()
    input_file = files / "uploads"
    assert any(input_file.iterdir())
    result = ops_stack.quire("jobs", "purge", "--older-than", "0s")
    assert "purged 1 jobs" in result.stdout, result.stdout + result.stderr
    assert ops_stack.http.get(f"/ai-jobs/{job_id}").status_code == 404
    assert ops_stack.http.get(view["artifact"]["url"]).status_code == 404
    assert not (files / "artifacts" / job_id).exists()
    assert not any(input_file.iterdir())
    stats = json.loads(ops_stack.quire("jobs", "stats").stdout)
    assert stats["total"] == 0


@pytest.mark.parametrize("ops_stack", [{"QUIRE_RETENTION_DAYS": str(2 / 86400)}], indirect=True)
def test_retention_deletes_old_files_and_keeps_a_tombstone(ops_stack: Stack) -> None:
    ops_stack.start_worker()
    ops_stack.create_user("admin@example.com", admin=True)
    old = ops_stack.submit(document())
    malformed = ops_stack.submit(document("malformed"))
    view = ops_stack.wait(old)
    assert ops_stack.wait(malformed)["status"] == "dead_letter"
    deadline = time.monotonic() + 20
    while (after := ops_stack.job(old))["artifact"]["deleted_at"] is None:
        assert time.monotonic() < deadline, "retention never ran"
        time.sleep(0.3)
    assert not (ops_stack.data_dir / "files" / "artifacts" / old).exists()
    # A malformed answer kept for operators goes with the rest of its job's files
    admin = browser_session(ops_stack, "admin@example.com")
    while (evidence := admin.get(f"/admin/jobs/{malformed}/detail").json()["evidence"])[0]["deleted_at"] is None:
        assert time.monotonic() < deadline, "retention never reached the malformed job"
        time.sleep(0.3)
    assert not (ops_stack.data_dir / "files" / "artifacts" / malformed).exists()
    assert admin.get(evidence[0]["url"]).status_code == 410
    assert ops_stack.http.get(view["artifact"]["url"]).status_code == 410
    # The record keeps what the files were.
    assert after["status"] == "completed"
    assert after["artifact"]["sha256"] == view["artifact"]["sha256"]
    assert after["artifact"]["size"] == view["artifact"]["size"]
    assert after["input"] == view["input"]
    # A fresh job is untouched until it, too, is older than the cutoff.
    fresh = ops_stack.wait(ops_stack.submit(document()))
    assert fresh["artifact"]["deleted_at"] is None
    assert ops_stack.http.get(fresh["artifact"]["url"]).status_code == 200


@pytest.mark.parametrize("ops_stack", [{"QUIRE_ACCESS_LOG": "true"}], indirect=True)
def test_the_access_log_when_asked_for(ops_stack: Stack) -> None:
    # When a request is served with the access log on
    assert ops_stack.http.get("/healthz", headers={"X-Request-ID": "req-access-01"}).status_code == 200
    # Then it has its line, in Quire's JSON pipeline, with the request's id
    lines = [json.loads(line) for line in ops_stack.logs("web").splitlines() if line.startswith("{")]
    access = [line for line in lines if line.get("logger") == "uvicorn.access"]
    assert any("GET /healthz HTTP/1.1" in line["event"] and line["request_id"] == "req-access-01" for line in access)


@pytest.mark.parametrize("ops_stack", [{"QUIRE_LOG_LEVEL": "debug"}], indirect=True)
def test_log_lines_of_a_job_carry_its_id_and_attempt(ops_stack: Stack) -> None:
    ops_stack.start_worker()
    response = ops_stack.http.post(
        "/ai-jobs",
        data={"workflow": "document_summary", "max_attempts": "3"},
        files={"file": ("a.txt", document("flaky:1"), "text/plain")},
        headers={"X-Request-ID": "req-test-0001"},
    )
    assert response.headers["x-request-id"] == "req-test-0001"
    job_id = response.json()["job_id"]
    assert ops_stack.wait(job_id)["attempt"] == 2

    def json_lines(name: str) -> list[dict[str, Any]]:
        lines = []
        for line in (ops_stack.root / f"{name}.log").read_text().splitlines():
            if line.startswith("{"):
                lines.append(json.loads(line))
        return lines

    mine = [line for line in json_lines("worker") if line.get("job_id") == job_id]
    assert len(mine) >= 4
    assert all({"attempt", "worker_id", "workflow", "timestamp", "level"} <= set(line) for line in mine)
    assert {line["attempt"] for line in mine} == {1, 2}
    assert any(line["event"] == "attempt failed" and line["error"] == "upstream_unavailable" for line in mine)
    assert [line["attempt"] for line in mine if line["event"] == "attempt completed"] == [2]
    web = [line for line in json_lines("web") if line.get("request_id") == "req-test-0001"]
    assert any(line.get("event") == "job accepted" and line.get("job_id") == job_id for line in web)


def test_metrics_expose_the_families_after_mixed_jobs(ops_stack: Stack) -> None:
    ops_stack.start_worker()
    for mode in ("success", "flaky:1", "rejected", "crash"):
        ops_stack.wait(ops_stack.submit(document(mode), max_attempts=2))
    text = httpx.get(f"{ops_stack.base_url}/metrics").text
    for family in (
        "quire_jobs{",
        "quire_queue_depth",
        "quire_oldest_queued_age_seconds",
        "quire_workers_alive",
        "quire_transitions_total{",
        "quire_retries_total{",
        "quire_dead_letters_total{",
        "quire_attempt_duration_seconds_bucket{",
        "quire_upload_bytes_total",
        "quire_lease_recoveries_total",
    ):
        assert family in text, family
    assert 'quire_jobs{state="completed"} 2.0' in text
    assert 'quire_dead_letters_total{error="upstream_rejected",workflow="document_summary"} 1.0' in text
    assert 'quire_retries_total{error="upstream_unavailable"} 1.0' in text
    assert "job_id" not in text  # labels stay low-cardinality


class WebhookReceiver:
    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                receiver.posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(204)
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"


def test_alert_webhook_fires_once_per_threshold_crossing(redis_server: EmbeddedRedis, tmp_path: Path) -> None:
    receiver = WebhookReceiver()
    database = make_database("sqlite", tmp_path)
    stack = Stack(
        tmp_path,
        database,
        fresh_redis_url(redis_server),
        QUIRE_ALERT_WEBHOOK_URL=receiver.url,
        QUIRE_ALERT_THRESHOLD="3",
        QUIRE_ALERT_WINDOW_S="4",
    )
    try:
        stack.start()
        for _ in range(5):
            stack.wait(stack.submit(document("rejected")))
        time.sleep(1.5)
        assert len(receiver.posts) == 1, receiver.posts
        alert = receiver.posts[0]
        assert alert["fingerprint"] == "upstream_rejected:document_summary@1"
        assert alert["count"] >= 3
        assert alert["threshold"] == 3
        # Once the window has passed quietly the alert re-arms, and the next crossing fires again.
        time.sleep(4.5)
        for _ in range(3):
            stack.wait(stack.submit(document("rejected")))
        deadline = time.monotonic() + 5
        while len(receiver.posts) < 2:
            assert time.monotonic() < deadline, receiver.posts
            time.sleep(0.2)
        time.sleep(1)
        assert len(receiver.posts) == 2
    finally:
        stack.stop()
        database.drop()
        receiver.httpd.shutdown()


@pytest.mark.parametrize("ops_stack", [{"QUIRE_SHUTDOWN_GRACE_S": "5"}], indirect=True)
def test_sigterm_lets_a_running_attempt_finish(ops_stack: Stack) -> None:
    worker = ops_stack.start_worker()
    job_id = ops_stack.submit(document("slow:1.5"))
    ops_stack.wait(job_id, {"running"})
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=20) == 0
    view = ops_stack.job(job_id)
    assert (view["status"], view["attempt"]) == ("completed", 1)


@pytest.mark.serial  # the hand-over must beat the lease; a busy machine can let recovery win
@pytest.mark.parametrize("ops_stack", [{"QUIRE_SHUTDOWN_GRACE_S": "0.5"}], indirect=True)
def test_sigterm_releases_an_unfinished_attempt_to_another_worker(ops_stack: Stack) -> None:
    first = ops_stack.start_worker()
    # Long enough that the first attempt is still running when the second worker is ready, even on a
    # busy machine where starting a worker takes seconds.
    job_id = ops_stack.submit(document("slow:10"))
    ops_stack.wait(job_id, {"running"})
    ops_stack.start_worker()
    released_at = time.monotonic()
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=20) == 0
    view = ops_stack.wait(job_id, timeout=30)
    assert (view["status"], view["attempt"]) == ("completed", 2)
    assert event_types(view) == ["queued", "running", "requeued_after_restart", "running", "completed"]
    requeued = next(e for e in view["events"] if e["type"] == "requeued_after_restart")
    assert "error" not in requeued  # a clean hand-over, not a failure
    # Taken over at once, not after the lease (2 s in tests) ran out.
    second_start = [e for e in view["events"] if e["type"] == "running"][1]
    assert (_at(second_start["at"]) - _at(requeued["at"])).total_seconds() < 1.5
    assert time.monotonic() - released_at < 25
