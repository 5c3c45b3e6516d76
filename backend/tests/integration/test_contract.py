"""DESIGN's contract table, driven through the HTTP API against real `quire worker` processes."""

from __future__ import annotations

import base64
import hashlib
import time
from datetime import datetime

import httpx

from backend.tests.integration.stack import Stack, document, event_types


def _seconds(view: dict[str, str], start: str, end: str) -> float:
    parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    return (parse(view[end]) - parse(view[start])).total_seconds()


def test_success_completes_with_a_downloadable_checksummed_artifact(shared_stack: Stack) -> None:
    # Given a plain document
    job_id = shared_stack.submit(document())
    # When a worker runs it
    view = shared_stack.wait(job_id)
    # Then it completed on the first attempt with its artifacts recorded
    assert (view["status"], view["attempt"], view["error"], view["errors"]) == ("completed", 1, None, [])
    assert event_types(view) == ["queued", "running", "completed"]
    assert {a["name"] for a in view["artifacts"]} == {"document_summary.json", "document_summary.md"}
    assert view["artifact"]["name"] == "document_summary.json"
    # And every artifact downloads as an attachment whose bytes match the recorded sha256
    for artifact in view["artifacts"]:
        response = shared_stack.http.get(artifact["url"])
        assert response.status_code == 200
        digest = hashlib.sha256(response.content).hexdigest()
        assert digest == artifact["sha256"]
        assert len(response.content) == artifact["size"]
        assert response.headers["content-disposition"].startswith("attachment")
        assert response.headers["etag"] == f'"{digest}"'
        assert response.headers["repr-digest"] == f"sha-256=:{base64.b64encode(bytes.fromhex(digest)).decode()}:"
    summary = shared_stack.http.get(view["artifact"]["url"]).json()
    assert summary["provenance"]["input_sha256"] == view["input"]["sha256"]
    assert summary["result"]["word_count"] > 10


def test_slow_attempts_time_out_and_dead_letter(shared_stack: Stack) -> None:
    # Given a workflow that blocks in one 0.2 s call, with a 0.01 s timeout and two attempts
    job_id = shared_stack.submit(document("slow:0.2"), timeout_s=0.01, max_attempts=2)
    view = shared_stack.wait(job_id)
    # Then both attempts timed out, the job is dead-lettered, and the whole job took under 2 s
    assert (view["status"], view["attempt"]) == ("dead_letter", 2)
    assert [e["code"] for e in view["errors"]] == ["timeout", "timeout"]
    assert view["error"]["code"] == "timeout"
    assert event_types(view) == ["queued", "running", "queued", "running", "dead_letter"]
    assert _seconds(view, "created_at", "updated_at") < 2.0
    # And the abandoned attempts, finishing later, change nothing
    time.sleep(0.5)
    assert shared_stack.job(job_id)["events"] == view["events"]
    assert shared_stack.job(job_id)["artifacts"] == []


def test_malformed_output_dead_letters_without_retry(shared_stack: Stack) -> None:
    view = shared_stack.wait(shared_stack.submit(document("malformed")))
    assert (view["status"], view["attempt"]) == ("dead_letter", 1)
    assert view["error"]["code"] == "malformed_output"
    assert event_types(view) == ["queued", "running", "dead_letter"]


def test_rejected_and_invalid_input_dead_letter_at_once(shared_stack: Stack) -> None:
    rejected = shared_stack.wait(shared_stack.submit(document("rejected")))
    assert (rejected["status"], rejected["attempt"], rejected["error"]["code"]) == (
        "dead_letter",
        1,
        "upstream_rejected",
    )
    fake_pdf = shared_stack.http.post(
        "/ai-jobs",
        data={"workflow": "document_summary"},
        files={"file": ("broken.pdf", b"%PDF-1.7\n% truncated", "application/pdf")},
    )
    invalid = shared_stack.wait(fake_pdf.json()["job_id"])
    assert (invalid["status"], invalid["attempt"], invalid["error"]["code"]) == ("dead_letter", 1, "invalid_input")


def test_user_polling_sees_queued_then_running_then_completed(shared_stack: Stack) -> None:
    response = shared_stack.http.post(
        "/ai-jobs",
        data={"workflow": "document_summary"},
        files={"file": ("doc.txt", document("slow:1"), "text/plain")},
    )
    seen = [response.json()["status"]]
    status_url = response.json()["status_url"]
    assert response.headers["location"] == status_url
    while seen[-1] != "completed":
        status = shared_stack.http.get(status_url).json()["status"]
        if status != seen[-1]:
            seen.append(status)
        time.sleep(0.05)
    assert seen == ["queued", "running", "completed"]


def test_retry_exhaustion_records_every_attempt(shared_stack: Stack) -> None:
    view = shared_stack.wait(shared_stack.submit(document("always_fail"), max_attempts=3))
    assert (view["status"], view["attempt"], view["max_attempts"]) == ("dead_letter", 3, 3)
    assert [e["code"] for e in view["errors"]] == ["upstream_unavailable"] * 3
    assert [e["attempt"] for e in view["errors"]] == [1, 2, 3]
    assert event_types(view) == ["queued", "running", "queued", "running", "queued", "running", "dead_letter"]
    retries = [e for e in view["events"] if e["type"] == "queued" and e["attempt"] > 0]
    assert all(e["error"] == "upstream_unavailable" and "Retrying in" in e["detail"] for e in retries)


def test_flaky_provider_completes_on_the_third_attempt(shared_stack: Stack) -> None:
    data = document("flaky:2")
    view = shared_stack.wait(shared_stack.submit(data, max_attempts=3))
    assert (view["status"], view["attempt"]) == ("completed", 3)
    assert [e["code"] for e in view["errors"]] == ["upstream_unavailable"] * 2
    assert view["error"] is None
    assert shared_stack.workflow_calls(data) == 3


def test_poison_pill_dead_letters_while_other_jobs_complete(shared_stack: Stack) -> None:
    poison = shared_stack.submit(document("crash"), max_attempts=3)
    healthy = [shared_stack.submit(document()) for _ in range(5)]
    view = shared_stack.wait(poison)
    assert (view["status"], view["attempt"]) == ("dead_letter", 3)
    assert [e["code"] for e in view["errors"]] == ["internal_error"] * 3
    # The payload names the failure without exception types or stack traces.
    assert "FakeCrash" not in str(view)
    assert "Traceback" not in str(view)
    for job_id in healthy:
        assert shared_stack.wait(job_id)["status"] == "completed"
    shared_stack.wait(shared_stack.submit(document()))


def test_duplicate_message_for_a_completed_job_runs_nothing(shared_stack: Stack) -> None:
    from dramatiq.message import Message

    from quire.queue.broker import QUEUE, create_broker

    data = document()
    job_id = shared_stack.submit(data)
    before = shared_stack.wait(job_id)
    assert shared_stack.workflow_calls(data) == 1
    # When the same job id is delivered again, as at-least-once delivery allows
    broker = create_broker(shared_stack.redis_url)
    duplicate = Message(queue_name=QUEUE, actor_name="process_job", args=(job_id,), kwargs={}, options={})
    broker.enqueue(duplicate)
    deadline = time.monotonic() + 10
    while broker.messages_present([duplicate.message_id])[0]:
        assert time.monotonic() < deadline, "the duplicate message was never consumed"
        time.sleep(0.05)
    # Then the worker consumed it and changed nothing
    assert shared_stack.workflow_calls(data) == 1
    assert shared_stack.job(job_id) == before


def test_idempotency_key_returns_the_same_job(shared_stack: Stack) -> None:
    upload = shared_stack.http.post("/uploads", files={"file": ("a.md", document(), "text/markdown")})
    assert upload.status_code == 201
    ref = upload.json()["input_ref"]
    assert upload.json()["content_type"] == "text/markdown"
    body = {"workflow": "document_summary", "input_ref": ref, "limits": {"max_attempts": 2}}
    headers = {"Idempotency-Key": f"key-{time.time_ns()}"}
    first = shared_stack.http.post("/ai-jobs", json=body, headers=headers)
    second = shared_stack.http.post("/ai-jobs", json=body, headers=headers)
    assert first.status_code == second.status_code == 202
    # The repeat names the same job and tells its state now: a worker may have picked it up in between.
    assert second.json()["job_id"] == first.json()["job_id"]
    assert second.json()["status_url"] == first.json()["status_url"] == second.headers["location"]
    assert second.json()["status"] in {"queued", "running", "completed"}
    changed = shared_stack.http.post("/ai-jobs", json={**body, "limits": {"max_attempts": 3}}, headers=headers)
    assert changed.status_code == 409
    assert changed.headers["content-type"].startswith("application/problem+json")
    assert changed.json()["code"] == "idempotency_conflict"
    listed = shared_stack.http.get("/ai-jobs", params={"limit": 100}).json()["items"]
    assert sum(1 for item in listed if item["job_id"] == first.json()["job_id"]) == 1


def test_a_repeated_multipart_submission_keeps_one_stored_file(shared_stack: Stack) -> None:
    # Given a job submitted with its file and an Idempotency-Key
    data = document(f"unique {time.time_ns()}")
    headers = {"Idempotency-Key": f"key-{time.time_ns()}"}

    def post(max_attempts: str) -> httpx.Response:
        return shared_stack.http.post(
            "/ai-jobs",
            data={"workflow": "document_summary", "max_attempts": max_attempts},
            files={"file": ("a.txt", data, "text/plain")},
            headers=headers,
        )

    first = post("2")
    assert first.status_code == 202
    before = shared_stack.stored("uploads")
    # When the client sends it again (a retry after a lost answer), and once more with other fields
    repeat, conflict = post("2"), post("3")
    # Then the repeat names the same job, the conflict is refused, and neither left a file behind
    assert repeat.status_code == 202
    assert repeat.json()["job_id"] == first.json()["job_id"]
    assert conflict.status_code == 409
    assert shared_stack.stored("uploads") == before


def test_cancel_fences_the_running_attempt_and_replay_runs_again(shared_stack: Stack) -> None:
    data = document("slow:1")
    job_id = shared_stack.submit(data)
    shared_stack.wait(job_id, {"running"})
    cancelled = shared_stack.http.post(f"/ai-jobs/{job_id}/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["error"]["code"] == "cancelled"
    time.sleep(1.3)  # the attempt's own call finishes meanwhile
    view = shared_stack.job(job_id)
    assert (view["status"], view["artifacts"]) == ("cancelled", [])
    again = shared_stack.http.post(f"/ai-jobs/{job_id}/cancel")
    assert (again.status_code, again.json()["code"]) == (409, "invalid_state")
    replayed = shared_stack.http.post(f"/ai-jobs/{job_id}/replay")
    assert replayed.status_code == 202
    done = shared_stack.wait(job_id)
    assert (done["status"], done["attempt"]) == ("completed", 2)
    assert event_types(done) == ["queued", "running", "cancelled", "replayed", "running", "completed"]


def test_list_is_paginated_newest_first(shared_stack: Stack) -> None:
    ids = [shared_stack.submit(document("rejected")) for _ in range(5)]
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = shared_stack.http.get("/ai-jobs", params=params).json()
        seen += [item["job_id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen[:5] == list(reversed(ids))
    assert len(seen) == len(set(seen))
    for job_id in ids:
        shared_stack.wait(job_id)
    dead = shared_stack.http.get("/ai-jobs", params={"status": "dead_letter", "limit": 100}).json()["items"]
    assert set(ids) <= {item["job_id"] for item in dead}
    assert all(item["status"] == "dead_letter" for item in dead)


def test_delete_removes_record_and_files(shared_stack: Stack) -> None:
    job_id = shared_stack.submit(document())
    view = shared_stack.wait(job_id)
    assert any(key.endswith(".json") for key in shared_stack.stored(f"artifacts/{job_id}"))
    assert shared_stack.http.delete(f"/ai-jobs/{job_id}").status_code == 204
    assert shared_stack.http.get(f"/ai-jobs/{job_id}").status_code == 404
    assert shared_stack.http.get(view["artifact"]["url"]).status_code == 404
    assert shared_stack.stored(f"artifacts/{job_id}") == []
    assert shared_stack.http.delete(f"/ai-jobs/{job_id}").status_code == 404


def test_bad_requests_get_problem_details(shared_stack: Stack) -> None:
    http = shared_stack.http

    def problem(response: object, status: int, code: str) -> None:
        assert response.status_code == status, response.text  # type: ignore[attr-defined]
        assert response.headers["content-type"].startswith("application/problem+json")  # type: ignore[attr-defined]
        body = response.json()  # type: ignore[attr-defined]
        assert body["code"] == code
        assert body["status"] == status
        assert "Traceback" not in response.text  # type: ignore[attr-defined]

    problem(http.get("/ai-jobs/does-not-exist"), 404, "not_found")
    problem(http.post("/ai-jobs", data={"workflow": "nope"}, files={"file": ("a.txt", b"hi", "text/plain")}),
            422, "unknown_workflow")  # fmt: skip
    problem(http.post("/ai-jobs", json={"workflow": "document_summary", "input_ref": "uploads/none"}),
            422, "unknown_input")  # fmt: skip
    problem(http.post("/ai-jobs", content=b"{not json", headers={"content-type": "application/json"}),
            422, "invalid_request")  # fmt: skip
    problem(http.post("/ai-jobs", data={"workflow": "document_summary", "max_attempts": "0"},
                      files={"file": ("a.txt", b"hello there", "text/plain")}), 422, "invalid_request")  # fmt: skip
    problem(http.post("/uploads", files={"file": ("a.bin", b"\x00\x01\x02binary", "application/octet-stream")}),
            415, "unsupported_media_type")  # fmt: skip
    problem(http.post("/uploads", files={"file": ("empty.txt", b"", "text/plain")}), 422, "invalid_input")
    problem(http.post("/ai-jobs/does-not-exist/replay"), 404, "not_found")


def test_limits_are_clamped_to_the_configured_maximum(shared_stack: Stack) -> None:
    job_id = shared_stack.submit(document(), max_attempts=1000)
    assert shared_stack.job(job_id)["max_attempts"] == 10


def test_health_readiness_and_schema(shared_stack: Stack) -> None:
    assert shared_stack.http.get("/healthz").json() == {"status": "ok"}
    ready = shared_stack.http.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"database": True, "redis": True, "storage": True}
    schema = shared_stack.http.get("/schema/openapi.json").json()
    assert {"/ai-jobs", "/ai-jobs/{job_id}", "/uploads"} <= set(schema["paths"])
