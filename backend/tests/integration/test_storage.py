"""Storage through the public surface, on the data directory and on a real S3-compatible server:
downloads streamed or presigned behind the same check, checksums checked when served, uploads
streamed (refused or abandoned ones leave nothing), and a bucket that goes away and comes back."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from backend.tests.conftest import S3Server, storage_env
from backend.tests.integration.conftest import running_stack
from backend.tests.integration.stack import Stack, document
from quire.queue.embedded_redis import EmbeddedRedis


@pytest.fixture(scope="module", params=["local", "s3"])
def files_stack(
    request: pytest.FixtureRequest, redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    root = tmp_path_factory.mktemp(f"files-{request.param}")
    env = {**storage_env(request.param, request), "QUIRE_MAX_UPLOAD_MB": "2"}
    with running_stack("sqlite", redis_server, root, **env) as stack:
        yield stack


@pytest.fixture
def flaky_s3(tmp_path: Path) -> Iterator[S3Server]:
    """An S3 server of the test's own, to stop and start again."""
    server = S3Server().start()
    yield server
    server.stop()


def no_upload_left(stack: Stack, before: list[str]) -> None:
    assert stack.stored("uploads") == before
    spool = stack.data_dir / "spool"
    assert not spool.exists() or list(spool.iterdir()) == []


def test_a_damaged_artifact_is_never_served_as_whole(files_stack: Stack) -> None:
    # Given a completed job whose stored summary was changed behind Quire's back
    view = files_stack.wait(files_stack.submit(document()))
    artifact = view["artifact"]
    key = next(k for k in files_stack.stored(f"artifacts/{view['job_id']}") if k.endswith(artifact["name"]))
    good = files_stack.http.get(artifact["url"])
    assert hashlib.sha256(good.content).hexdigest() == artifact["sha256"]
    files_stack.overwrite(key, good.content.replace(b"{", b"[", 1))
    # When it is downloaded, then the transfer is cut short: no client takes it for the real file
    with pytest.raises(httpx.RemoteProtocolError):
        files_stack.http.get(artifact["url"])


def test_a_worker_does_not_read_an_input_that_changed_after_it_was_accepted(files_stack: Stack) -> None:
    # Given an upload whose stored copy was changed behind Quire's back before any job used it
    uploaded = files_stack.http.post("/uploads", files={"file": ("a.txt", document(), "text/plain")}).json()
    files_stack.overwrite(uploaded["input_ref"], document())
    # When a job is run on it
    body = {"workflow": "document_summary", "input_ref": uploaded["input_ref"], "limits": {"max_attempts": 1}}
    accepted = files_stack.http.post("/ai-jobs", json=body)
    assert accepted.status_code == 202, accepted.text
    view = files_stack.wait(accepted.json()["job_id"])
    # Then the worker refuses it as a storage fault (retried while attempts remain), and makes nothing of it
    assert view["status"] == "dead_letter", view["events"]
    assert view["error"]["code"] == "upstream_unavailable"
    assert "not the one that was uploaded" in (view["events"][-1].get("detail") or ""), view["events"]
    assert view["artifacts"] == []


def test_an_upload_over_the_limit_without_a_length_is_refused_and_leaves_nothing(files_stack: Stack) -> None:
    # Given a body sent chunked (no Content-Length to refuse it from), far past the 2 MB limit
    # (how much of it the server reads is measured in tests/unit/test_upload_stream.py)
    def body() -> Iterator[bytes]:
        yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n\r\n'
        for _ in range(200):  # 12.8 MB
            yield b"plain words " * 5461 + b"....."
        yield b"\r\n--b--\r\n"

    headers = {"Content-Type": "multipart/form-data; boundary=b"}
    before = files_stack.stored("uploads")
    try:
        response = files_stack.http.post("/uploads", content=body(), headers=headers)
        assert response.status_code == 413, response.text
        assert response.json()["code"] == "payload_too_large"
    except httpx.WriteError:
        pass  # the server answered and closed while the client was still sending
    no_upload_left(files_stack, before)


def test_an_abandoned_upload_leaves_nothing(files_stack: Stack) -> None:
    # Given a client that sends half of a document and goes away
    half = b"plain words " * 50_000
    head = b'--b\r\nContent-Disposition: form-data; name="file"; filename="half.txt"\r\n\r\n'
    request = (
        f"POST /uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {files_stack.token}\r\n"
        f"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: {len(head) + 2 * len(half)}\r\n\r\n"
    ).encode()
    before = files_stack.stored("uploads")
    with socket.create_connection(("127.0.0.1", files_stack.port)) as conn:
        conn.sendall(request + head + half)
        time.sleep(0.5)
    # Then, once the server has noticed, no object, spool file or upload is left
    time.sleep(1.0)
    no_upload_left(files_stack, before)
    # And the next upload is stored as usual
    stored = files_stack.http.post("/uploads", files={"file": ("a.txt", document(), "text/plain")})
    assert stored.status_code == 201, stored.text
    assert files_stack.stored(stored.json()["input_ref"]) == [stored.json()["input_ref"]]


def test_presigned_downloads_follow_the_same_check(
    redis_server: EmbeddedRedis, s3_server: S3Server, tmp_path: Path
) -> None:
    env = {**s3_server.env(), "QUIRE_S3_PRESIGNED_DOWNLOADS": "true"}
    with running_stack("sqlite", redis_server, tmp_path, **env) as stack:
        view = stack.wait(stack.submit(document()))
        bob = stack.client(stack.create_user("bob@example.com"))
        for artifact in view["artifacts"]:
            # The owner is sent to a short-lived URL of the bucket, which serves the right bytes
            answer = stack.http.get(artifact["url"])
            assert answer.status_code == 307, answer.text
            assert answer.headers["location"].startswith(s3_server.endpoint)
            assert answer.headers["cache-control"] == "no-store"
            fetched = httpx.get(answer.headers["location"])
            assert hashlib.sha256(fetched.content).hexdigest() == artifact["sha256"]
            assert fetched.headers["content-disposition"].startswith("attachment")
            # Someone else gets no URL: the artifact does not exist for them
            assert bob.get(artifact["url"]).status_code == 404


def test_a_bucket_that_is_down_refuses_uploads_with_503_and_keeps_jobs_going(
    redis_server: EmbeddedRedis, flaky_s3: S3Server, tmp_path: Path
) -> None:
    # Retries far enough apart, and enough of them, to outlast the outage on a busy machine.
    patient = {"QUIRE_DEFAULT_MAX_ATTEMPTS": "50", "QUIRE_MAX_MAX_ATTEMPTS": "50", "QUIRE_RETRY_BASE_S": "0.5",
               "QUIRE_RETRY_MAX_S": "1"}  # fmt: skip
    with running_stack("sqlite", redis_server, tmp_path, **flaky_s3.env(), **patient) as stack:
        # Given a finished job, and a job whose attempt is running when the bucket goes away
        finished = stack.submit(document())
        stack.wait(finished)
        running = stack.submit(document("slow:1.5"))
        stack.wait(running, {"running"})
        flaky_s3.stop()
        # When the finished one is deleted meanwhile, the person is told to come back and it stays whole
        deleting = stack.http.delete(f"/ai-jobs/{finished}")
        assert deleting.status_code == 503, deleting.text
        assert deleting.json()["code"] == "storage_unavailable"
        assert stack.http.get(f"/ai-jobs/{finished}").json()["status"] == "completed"
        # When someone uploads meanwhile
        refused = stack.http.post(
            "/ai-jobs", data={"workflow": "document_summary"}, files={"file": ("a.txt", document(), "text/plain")}
        )
        upload = stack.http.post("/uploads", files={"file": ("a.txt", document(), "text/plain")})
        ready = stack.http.get("/readyz")
        # Then they are told to come back, and no job was made
        for answer in (refused, upload):
            assert answer.status_code == 503, answer.text
            assert answer.json()["code"] == "storage_unavailable"
            assert int(answer.headers["retry-after"]) > 0
        assert ready.status_code == 503
        assert ready.json()["checks"]["storage"] is False
        assert [j["job_id"] for j in stack.http.get("/ai-jobs").json()["items"]] == [running, finished]
        # And the attempt that could not write its artifacts is retried until the bucket is back
        time.sleep(2.5)
        flaky_s3.start()
        view = stack.wait(running, timeout=60)
        assert view["status"] == "completed", view["events"]
        assert "upstream_unavailable" in {e["code"] for e in view["errors"]}
        for artifact in view["artifacts"]:
            assert hashlib.sha256(stack.http.get(artifact["url"]).content).hexdigest() == artifact["sha256"]
        # And once the bucket is back the delete goes through, with the finished job's objects
        assert stack.http.delete(f"/ai-jobs/{finished}").status_code == 204
        assert stack.http.get(f"/ai-jobs/{finished}").status_code == 404
        assert not [key for key in stack.stored("artifacts") if finished in key]
        # Nothing of the refused uploads reached the bucket; the completed job's input is the only one
        assert len(stack.stored("uploads")) == 1
        assert stack.http.get("/readyz").status_code == 200


def test_retention_waits_for_an_unreachable_bucket_and_never_loses_track(
    redis_server: EmbeddedRedis, flaky_s3: S3Server, tmp_path: Path
) -> None:
    env = {**flaky_s3.env(), "QUIRE_RETENTION_DAYS": str(3 / 86400)}
    with running_stack("sqlite", redis_server, tmp_path, **env) as stack:
        # Given a finished job, and the bucket gone before its files are due to go
        view = stack.wait(stack.submit(document()))
        flaky_s3.stop()
        # When retention passes run meanwhile, then the record still says the files are there
        time.sleep(4)
        assert stack.job(view["job_id"])["artifact"]["deleted_at"] is None
        # And once the bucket is back the files go, with the tombstone on the record
        flaky_s3.start()
        deadline = time.monotonic() + 20
        while (after := stack.job(view["job_id"]))["artifact"]["deleted_at"] is None:
            assert time.monotonic() < deadline, "retention never ran"
            time.sleep(0.3)
        assert stack.stored(f"artifacts/{view['job_id']}") == []
        assert stack.stored("uploads") == []
        assert stack.http.get(view["artifact"]["url"]).status_code == 410
        assert after["artifact"]["sha256"] == view["artifact"]["sha256"]


@pytest.mark.serial  # freezes a worker mid-attempt: a busy machine may not have started it yet
@pytest.mark.parametrize("kind", ["local", "s3"])
def test_a_fenced_out_attempt_leaves_no_objects_behind(
    kind: str, request: pytest.FixtureRequest, redis_server: EmbeddedRedis, tmp_path: Path
) -> None:
    env = storage_env(kind, request)
    with running_stack("sqlite", redis_server, tmp_path, worker=False, **env) as stack:
        # Given a worker whose attempt is under way when the worker freezes (a long pause, say)
        first = stack.start_worker(threads=1)
        data = document("slow:1.5")
        job_id = stack.submit(data)
        stack.wait(job_id, {"running"})
        deadline = time.monotonic() + 10
        while stack.workflow_calls(data) < 1:
            assert time.monotonic() < deadline, "the attempt never started"
            time.sleep(0.02)
        os.killpg(first.pid, signal.SIGSTOP)
        try:
            # When its lease runs out and another worker takes the job over and completes it
            stack.start_worker(threads=1)
            view = stack.wait(job_id, timeout=60)  # seconds when the machine is idle
        finally:
            # And the first worker wakes up, finishes its attempt and writes its artifacts
            os.killpg(first.pid, signal.SIGCONT)
        assert (view["status"], view["attempt"]) == ("completed", 2), view["events"]
        deadline = time.monotonic() + 30
        while "result discarded" not in stack.logs("worker"):
            assert time.monotonic() < deadline, "the first attempt never finished"
            time.sleep(0.05)
        # Then nothing of the first attempt is left in storage: only the published attempt's objects
        stored = stack.stored(f"artifacts/{job_id}")
        assert stored, "the completed attempt's artifacts are missing"
        assert {key.split("/")[2].split("-")[1] for key in stored} == {"2"}, stored
        assert sorted(key.removeprefix(f"artifacts/{job_id}/").split("/", 1)[1] for key in stored) == sorted(
            artifact["name"] for artifact in view["artifacts"]
        )
        assert stack.job(job_id)["attempt"] == 2
