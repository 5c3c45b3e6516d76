"""Nobody sees another person's documents, and the usual web attacks and bad inputs get a clear
answer while the server stays up."""

from __future__ import annotations

import io
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import redis

from backend.tests.conftest import make_database
from backend.tests.documents import docx_bytes
from backend.tests.integration.conftest import fresh_redis_url, running_stack
from backend.tests.integration.stack import PASSWORD, Stack, document, event_types, http_client, memory_kb
from quire.queue.embedded_redis import EmbeddedRedis, free_port


def browser_session(stack: Stack, email: str, password: str = PASSWORD) -> httpx.Client:
    """A client signed in through the login form, as a browser is (session cookie + CSRF cookie)."""
    client = http_client(stack.base_url, timeout=30)
    client.get("/login")
    response = client.post("/login", data={"email": email, "password": password, "_csrf_token": csrf(client)})
    assert response.status_code == 303, response.text
    return client


def csrf(client: httpx.Client) -> str:
    return str(client.cookies["quire_csrf"])


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def people(
    request: pytest.FixtureRequest, redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, object]]:
    """Alice owns a finished job; Bob and an admin have accounts of their own."""
    root = tmp_path_factory.mktemp(f"people-{request.param}")
    database = make_database(request.param, root)
    stack = Stack(root, database, fresh_redis_url(redis_server), QUIRE_LOGIN_ATTEMPTS_PER_MINUTE="1000")
    stack.start_web(owner="alice@example.com")
    stack.start_worker()
    bob_token = stack.create_user("bob@example.com")
    admin_token = stack.create_user("admin@example.com", admin=True)
    upload = stack.http.post("/uploads", files={"file": ("alice.txt", document(), "text/plain")}).json()
    job_id = stack.submit(document())
    stack.wait(job_id)
    yield {"stack": stack, "bob": bob_token, "admin": admin_token, "job": job_id, "upload": upload}
    stack.stop()
    database.drop()


def test_another_persons_job_and_upload_are_404_by_token(people: dict[str, object]) -> None:
    stack, job, upload = people["stack"], people["job"], people["upload"]
    assert isinstance(stack, Stack)
    bob = stack.client(str(people["bob"]))
    artifact = f"/ai-jobs/{job}/artifacts/document_summary.json"
    for method, path in [
        ("GET", f"/ai-jobs/{job}"),
        ("GET", artifact),
        ("POST", f"/ai-jobs/{job}/cancel"),
        ("POST", f"/ai-jobs/{job}/replay"),
        ("DELETE", f"/ai-jobs/{job}"),
        ("GET", f"/{upload['input_ref']}"),  # type: ignore[index]
    ]:
        response = bob.request(method, path)
        assert response.status_code == 404, (method, path, response.status_code)
        assert response.json()["code"] == "not_found"
    assert job not in str(bob.get("/ai-jobs", params={"limit": 100}).json())
    # Using Alice's upload in a job of Bob's is as if it did not exist.
    reuse = bob.post("/ai-jobs", json={"workflow": "document_summary", "input_ref": upload["input_ref"]})  # type: ignore[index]
    assert (reuse.status_code, reuse.json()["code"]) == (422, "unknown_input")
    # Alice's job is untouched, and an admin can see it.
    assert stack.job(str(job))["status"] == "completed"
    admin = stack.client(str(people["admin"]))
    assert admin.get(f"/ai-jobs/{job}").status_code == 200
    assert admin.get(artifact).status_code == 200


def test_another_persons_job_is_404_in_the_browser(people: dict[str, object]) -> None:
    stack, job = people["stack"], people["job"]
    assert isinstance(stack, Stack)
    bob = browser_session(stack, "bob@example.com")
    token = {"_csrf_token": csrf(bob)}
    for method, path, data in [
        ("GET", f"/jobs/{job}", None),
        ("GET", f"/jobs/{job}/status", None),
        ("GET", f"/jobs/{job}/preview/1", None),
        ("GET", f"/jobs/{job}/preview/image", None),
        ("GET", f"/ai-jobs/{job}", None),
        ("GET", f"/ai-jobs/{job}/artifacts/document_summary.md", None),
        ("POST", f"/jobs/{job}/cancel", token),
        ("POST", f"/jobs/{job}/replay", token),
        ("POST", f"/jobs/{job}/delete", token),
    ]:
        response = bob.request(method, path, data=data)
        assert response.status_code == 404, (method, path, response.status_code)
    assert str(job) not in bob.get("/jobs").text
    admin = browser_session(stack, "admin@example.com")
    assert admin.get(f"/jobs/{job}").status_code == 200
    assert stack.job(str(job))["status"] == "completed"


def test_signed_out_requests_are_refused(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    anonymous = stack.client(None)
    response = anonymous.get("/ai-jobs")
    assert (response.status_code, response.json()["code"]) == (401, "unauthorized")
    page = anonymous.get("/jobs", headers={"Accept": "text/html"})
    assert (page.status_code, page.headers["location"]) == (303, "/login?next=%2Fjobs")
    assert stack.client("qt_not-a-real-token").get("/ai-jobs").status_code == 401


def test_csrf_is_required_for_cookie_requests(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    alice = browser_session(stack, "alice@example.com")
    job = stack.submit(document("slow:5"))
    stack.wait(job, {"running"})
    # A form post or htmx request without the token is refused...
    assert alice.post(f"/jobs/{job}/cancel").status_code == 403
    assert alice.post(f"/jobs/{job}/cancel", headers={"HX-Request": "true"}).status_code == 403
    assert alice.post(f"/ai-jobs/{job}/cancel").status_code == 403
    assert stack.job(job)["status"] == "running"
    # ...and works with it, as a form field or as the header htmx sends.
    htmx = alice.post(f"/jobs/{job}/cancel", headers={"HX-Request": "true", "x-csrftoken": csrf(alice)})
    assert htmx.status_code == 286
    assert stack.job(job)["status"] == "cancelled"
    form = alice.post(f"/jobs/{job}/replay", data={"_csrf_token": csrf(alice)})
    assert form.status_code == 303
    assert stack.job(job)["status"] in {"queued", "running"}


def test_security_headers_on_every_kind_of_response(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    alice = browser_session(stack, "alice@example.com")
    responses = [
        alice.get("/"),
        alice.get("/jobs"),
        alice.get(f"/jobs/{people['job']}"),
        alice.get("/settings"),
        alice.get("/login"),
        alice.get("/no-such-page"),
        stack.http.get(f"/ai-jobs/{people['job']}"),
        stack.http.get(f"/ai-jobs/{people['job']}/artifacts/document_summary.json"),
        alice.get("/static/quire.css"),
    ]
    for response in responses:
        csp = response.headers.get("content-security-policy", "")
        assert "script-src 'self'" in csp, response.url
        assert "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "same-origin"


def test_session_id_is_rotated_at_login(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    client = http_client(stack.base_url)
    client.cookies.set("quire_session", "attacker-chosen-session-id", domain="127.0.0.1")
    client.get("/login")
    response = client.post(
        "/login", data={"email": "alice@example.com", "password": PASSWORD, "_csrf_token": csrf(client)}
    )
    assert response.status_code == 303
    issued = client.cookies["quire_session"]
    assert issued != "attacker-chosen-session-id"
    assert client.get("/jobs").status_code == 200
    # The fixed id is worth nothing to the attacker.
    attacker = http_client(stack.base_url, cookies={"quire_session": "attacker-chosen-session-id"})
    assert attacker.get("/jobs", headers={"Accept": "text/html"}).status_code == 303
    # Logging in again from a signed-in session moves it to yet another id.
    client.post("/login", data={"email": "alice@example.com", "password": PASSWORD, "_csrf_token": csrf(client)})
    assert client.cookies["quire_session"] != issued
    old = http_client(stack.base_url, cookies={"quire_session": issued})
    assert old.get("/jobs", headers={"Accept": "text/html"}).status_code == 303


def test_revoked_token_stops_working_at_once(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    alice = browser_session(stack, "alice@example.com")
    created = alice.post("/settings/tokens", data={"name": "script", "_csrf_token": csrf(alice)})
    # Redirect after POST: the secret is shown once, on the page the browser is sent to.
    assert (created.status_code, created.headers["location"]) == (303, "/settings")
    page = alice.get("/settings")
    secret = page.text.split("data-new-token>")[1].split("<")[0]
    reloaded = alice.get("/settings").text
    assert secret not in reloaded
    assert reloaded.count("data-token-id=") == page.text.count("data-token-id=")  # no second token
    assert stack.client(secret).get("/ai-jobs").status_code == 200
    token_id = page.text.split('data-token-id="')[1].split('"')[0]
    revoked = alice.post(f"/settings/tokens/{token_id}/revoke", data={"_csrf_token": csrf(alice)})
    assert revoked.status_code == 303
    assert "The token was revoked" in alice.get("/settings").text
    assert stack.client(secret).get("/ai-jobs").status_code == 401
    # A second revoke (a double click, another tab) says it changed nothing
    alice.post(f"/settings/tokens/{token_id}/revoke", data={"_csrf_token": csrf(alice)})
    assert "already revoked" in alice.get("/settings").text


@pytest.fixture(scope="module")
def limits_stack(redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Low limits on one web process; tests that need a worker start one."""
    root = tmp_path_factory.mktemp("limits")
    database = make_database("sqlite", root)
    stack = Stack(
        root,
        database,
        fresh_redis_url(redis_server),
        QUIRE_MAX_UPLOAD_MB="1",
        QUIRE_LOGIN_ATTEMPTS_PER_MINUTE="5",
        QUIRE_ACCOUNT_LOGIN_ATTEMPTS_PER_MINUTE="3",
        QUIRE_SUBMISSIONS_PER_MINUTE="8",
    )
    stack.start_web()
    yield stack
    stack.stop()
    database.drop()


@pytest.fixture
def strict_stack(limits_stack: Stack) -> Stack:
    """The low-limits stack with its Redis emptied: every test starts with no attempts counted."""
    redis.Redis.from_url(limits_stack.redis_url).flushdb()
    return limits_stack


def test_bad_uploads_get_clear_answers_and_the_server_stays_up(strict_stack: Stack) -> None:
    strict_stack.start_worker()
    http = strict_stack.http
    other = strict_stack.client(strict_stack.create_user("other@example.com"))
    running = other.post(
        "/ai-jobs", data={"workflow": "document_summary"}, files={"file": ("a.txt", document("slow:2"), "text/plain")}
    ).json()["job_id"]
    web_pid = strict_stack.processes[0].pid
    big = b"x" * (5 * 1024 * 1024)
    before = memory_kb(web_pid)
    for _ in range(10):
        response = http.post("/uploads", files={"file": ("big.txt", big, "text/plain")})
        assert response.status_code == 413
        assert response.json()["code"] == "payload_too_large"
    assert memory_kb(web_pid) - before < 20 * 1024, "memory grew while refusing oversized uploads"
    wrong = http.post("/uploads", files={"file": ("a.pdf", b"\x7fELF\x02\x01\x01binary\x00", "application/pdf")})
    assert (wrong.status_code, wrong.json()["code"]) == (415, "unsupported_media_type")
    empty = http.post("/uploads", files={"file": ("empty.txt", b"", "text/plain")})
    assert empty.status_code == 422
    for hostile in ("../../etc/passwd", "..\\..\\windows\\win.ini", "/abs/path/notes.md", "\x00evil.txt"):
        stored = http.post("/uploads", files={"file": (hostile, b"plain text", "text/plain")})
        assert stored.status_code == 201, hostile
        name = stored.json()["filename"]
        assert "/" not in name
        assert "\\" not in name
        assert ".." not in name
        assert "\x00" not in name
    assert not list(Path("/etc").glob("passwd.*quire*"))
    broken = http.post("/ai-jobs", content=b"--x\r\nbroken", headers={"content-type": "multipart/form-data"})
    assert broken.status_code in (400, 422)
    bad_json = http.post("/ai-jobs", content=b'{"workflow":', headers={"content-type": "application/json"})
    assert bad_json.status_code == 422
    # The server is still up and the other person's job still completes.
    assert http.get("/healthz").status_code == 200
    deadline = time.monotonic() + 30
    while other.get(f"/ai-jobs/{running}").json()["status"] != "completed":
        assert time.monotonic() < deadline, "the other person's job did not complete"
        time.sleep(0.1)


def test_login_and_submission_are_rate_limited(strict_stack: Stack) -> None:
    client = http_client(strict_stack.base_url)
    client.get("/login")
    statuses = [
        client.post(
            "/login", data={"email": f"user{i}@example.com", "password": "wrong", "_csrf_token": csrf(client)}
        ).status_code
        for i in range(7)
    ]
    assert statuses[:5] == [401] * 5
    assert statuses[5] == 429
    throttled = client.post("/login", data={"email": "x", "password": "y", "_csrf_token": csrf(client)})
    assert int(throttled.headers["retry-after"]) >= 1
    answers = [
        strict_stack.http.post(
            "/ai-jobs", data={"workflow": "document_summary"}, files={"file": ("a.txt", document(), "text/plain")}
        )
        for _ in range(10)
    ]
    assert [a.status_code for a in answers[:8]] == [202] * 8
    assert answers[8].status_code == 429
    assert answers[8].json()["code"] == "rate_limited"
    assert int(answers[8].headers["retry-after"]) >= 1


def test_schemathesis_finds_no_server_errors(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    if stack.database.backend != "sqlite":
        return  # one fuzzing run is enough; the API is the same on both databases
    result = subprocess.run(
        [
            sys.executable, "-m", "schemathesis.cli", "run", f"{stack.base_url}/schema/openapi.json",
            "--checks", "not_a_server_error", "--header", f"Authorization: Bearer {stack.token}",
            "--max-examples", "15", "--phases", "examples,coverage,fuzzing", "--workers", "1",
            "--suppress-health-check", "all",
        ],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    assert "passed" in result.stdout, result.stdout[-3000:]
    print(result.stdout[-1500:])
    started = time.monotonic()
    assert stack.http.get("/healthz").status_code == 200
    assert time.monotonic() - started < 5


# Accounts and sign-in: sign-up, sessions, CSRF, passwords, tokens, sign-in limits.


def _form_post(client: httpx.Client, path: str, **fields: str) -> httpx.Response:
    return client.post(path, data={**fields, "_csrf_token": csrf(client)})


def test_signup_does_not_tell_who_has_an_account(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)

    def signup(email: str) -> tuple[httpx.Response, str]:
        client = http_client(stack.base_url, timeout=30)
        client.get("/signup")
        response = _form_post(client, "/signup", email=email, password="a long enough password")
        landing = client.get(response.headers["location"]) if response.status_code == 303 else response
        return response, landing.text

    # Given Alice's account, when someone signs up with her email in any letter case, or a new one
    answers = []
    for email in ("ALICE@Example.com", "alice@EXAMPLE.com", "Alice@example.com"):
        answers.append(signup(email))
        answers.append(signup(f"new-{secrets.token_hex(4)}@example.com"))
    # Then every answer is the same redirect to the same sign-in page, with no session for anyone
    # (the same time is shown in tests/unit/test_accounts.py: a taken email's password is hashed too)
    for response, page in answers:
        assert (response.status_code, response.headers["location"]) == (303, "/login?signed_up=true")
        assert "quire_session" not in response.headers.get("set-cookie", "")
        assert "If this email already had an account" in page
        assert "already exists" not in page
    # Alice's password still works; nothing about her account changed
    browser_session(stack, "alice@example.com")


def test_csrf_tokens_are_bound_to_the_session(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    job = stack.submit(document("slow:60"))  # still active after four sign-ins on a busy machine
    alice = browser_session(stack, "alice@example.com")
    before_logout = csrf(alice)
    assert _form_post(alice, "/logout").status_code == 303
    assert csrf(alice) != before_logout, "sign-out issues a new CSRF token"
    # Signed in again, the token from before the sign-out is worth nothing, as cookie and field.
    again = browser_session(stack, "alice@example.com")
    assert csrf(again) != before_logout
    again.cookies.set("quire_csrf", before_logout, domain="127.0.0.1")
    stale = again.post(f"/jobs/{job}/cancel", data={"_csrf_token": before_logout}, headers={"HX-Request": "true"})
    assert stale.status_code == 403
    # Bob's cookie and token pair does not work with Alice's session either.
    alice = browser_session(stack, "alice@example.com")
    bob = browser_session(stack, "bob@example.com")
    alice.cookies.set("quire_csrf", csrf(bob), domain="127.0.0.1")
    crossed = alice.post(f"/jobs/{job}/cancel", data={"_csrf_token": csrf(bob)}, headers={"HX-Request": "true"})
    assert crossed.status_code == 403
    assert stack.job(job)["status"] in {"queued", "running"}
    # A page loaded after the mix-up carries a token that works again.
    alice.cookies.delete("quire_csrf")
    alice.get("/")
    fresh = alice.post(f"/jobs/{job}/cancel", headers={"HX-Request": "true", "x-csrftoken": csrf(alice)})
    assert fresh.status_code == 286
    assert stack.job(job)["status"] == "cancelled"


def test_password_change_signs_out_other_sessions_and_can_revoke_tokens(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    email = f"carol-{secrets.token_hex(4)}@example.com"
    token = stack.create_user(email)
    here, elsewhere = browser_session(stack, email), browser_session(stack, email)
    changed = _form_post(here, "/settings/password", current_password=PASSWORD, new_password="another long password")
    # Done, the browser is sent back to the settings page, which says so once: a reload does not post again
    assert (changed.status_code, changed.headers["location"]) == (303, "/settings"), changed.text
    assert "signed out" in here.get("/settings").text
    assert "signed out" not in here.get("/settings").text
    assert here.get("/settings/password").headers["location"] == "/settings"
    # The other browser is signed out; this one stays signed in; tokens still work unless revoked.
    assert elsewhere.get("/jobs", headers={"Accept": "text/html"}).status_code == 303
    assert here.get("/jobs").status_code == 200
    assert stack.client(token).get("/ai-jobs").status_code == 200
    revoked = _form_post(
        here, "/settings/password", current_password="another long password", new_password=PASSWORD, revoke_tokens="yes"
    )
    assert revoked.status_code == 303
    assert "1 API token revoked" in here.get("/settings").text
    assert stack.client(token).get("/ai-jobs").status_code == 401
    assert here.get("/settings").status_code == 200


def test_an_api_token_cannot_manage_tokens(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    bob = stack.client(str(people["bob"]))
    minted = bob.post("/settings/tokens", data={"name": "backdoor"})
    assert minted.status_code == 403
    assert "qt_" not in minted.text
    browser = browser_session(stack, "bob@example.com")
    listing = browser.get("/settings").text
    assert "backdoor" not in listing
    token_id = listing.split('data-token-id="')[1].split('"')[0]
    assert bob.post(f"/settings/tokens/{token_id}/revoke").status_code == 403
    assert (
        bob.post("/settings/password", data={"current_password": PASSWORD, "new_password": "x" * 12}).status_code == 403
    )
    assert bob.get("/ai-jobs").status_code == 200, "the token itself still works"


def test_logout_deletes_the_session_cookie(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    alice = browser_session(stack, "alice@example.com")
    session_id = alice.cookies["quire_session"]
    response = _form_post(alice, "/logout")
    assert response.status_code == 303
    cleared = [c for c in response.headers.get_list("set-cookie") if c.startswith("quire_session=")]
    assert len(cleared) == 1
    assert "max-age=0" in cleared[0].lower()
    assert "quire_session" not in alice.cookies
    replayed = http_client(stack.base_url, cookies={"quire_session": session_id})
    assert replayed.get("/jobs", headers={"Accept": "text/html"}).status_code == 303


def _attempt_login(client: httpx.Client, email: str, password: str, forwarded_for: str) -> httpx.Response:
    data = {"email": email, "password": password, "_csrf_token": csrf(client)}
    return client.post("/login", data=data, headers={"X-Forwarded-For": forwarded_for})


def test_login_is_limited_per_account(strict_stack: Stack) -> None:
    client = http_client(strict_stack.base_url)
    client.get("/login")
    # QUIRE_ACCOUNT_LOGIN_ATTEMPTS_PER_MINUTE=3: after 3 failures the account is refused for the
    # rest of the minute, in any letter case and even with the right password.
    wrong = [_attempt_login(client, "owner@example.com", "wrong", "203.0.113.1").status_code for _ in range(3)]
    assert wrong == [401] * 3
    locked = _attempt_login(client, "OWNER@example.com", PASSWORD, "203.0.113.1")
    assert locked.status_code == 429
    assert int(locked.headers["retry-after"]) >= 1
    assert "this account" in locked.text
    # Another account from the same address is not locked.
    assert _attempt_login(client, "other@example.com", "wrong", "203.0.113.1").status_code == 401


def test_parallel_guesses_get_no_more_password_checks_than_the_limit(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    email = f"target-{secrets.token_hex(4)}@example.com"  # with no account: counted all the same
    clients = [http_client(stack.base_url, timeout=60) for _ in range(40)]
    for client in clients:
        client.get("/login")

    def guess(client: httpx.Client) -> int:
        return _form_post(client, "/login", email=email, password=f"guess {secrets.token_hex(4)}").status_code

    # Given the per-account limit of 5, when 40 wrong guesses arrive at once
    with ThreadPoolExecutor(max_workers=40) as pool:
        statuses = list(pool.map(guess, clients))
    # Then at most 5 were checked against the password; the rest were refused unchecked
    assert statuses.count(401) <= 5, statuses
    assert statuses.count(401) + statuses.count(429) == 40, statuses
    assert _form_post(clients[0], "/login", email=email, password=PASSWORD).status_code == 429


def test_password_change_shares_the_sign_in_limit(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    email = f"dave-{secrets.token_hex(4)}@example.com"
    stack.create_user(email)
    browser = browser_session(stack, email)  # a right password does not use the budget
    # Given a stolen session, when the current password is guessed on the settings page
    wrong = [
        _form_post(browser, "/settings/password", current_password=f"guess {n}", new_password="x" * 16).status_code
        for n in range(5)
    ]
    assert wrong == [422] * 5
    # Then the sixth try is refused, even with the right password, and so is signing in
    refused = _form_post(browser, "/settings/password", current_password=PASSWORD, new_password="x" * 16)
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 1
    assert "Too many" in refused.text
    other = http_client(stack.base_url, timeout=30)
    other.get("/login")
    assert _form_post(other, "/login", email=email, password=PASSWORD).status_code == 429


def test_with_redis_down_sign_in_is_unavailable_and_sign_out_still_signs_out(
    tmp_path: Path, redis_server: EmbeddedRedis
) -> None:
    own_redis = EmbeddedRedis(tmp_path / "redis", persistent=False).start()
    database = make_database("sqlite", tmp_path)
    stack = Stack(tmp_path, database, f"redis://127.0.0.1:{own_redis.port}/0")
    try:
        stack.start_web()
        signed_in = browser_session(stack, "owner@example.com")
        signing_in = http_client(stack.base_url, timeout=30)
        signing_in.get("/login")
        # Given Redis stops
        own_redis.stop()
        # When someone signs in, they are told the service is unavailable, with no session
        data = {"email": "owner@example.com", "password": PASSWORD, "_csrf_token": csrf(signing_in)}
        response = signing_in.post("/login", data=data)
        assert response.status_code == 503
        assert "unavailable" in response.text
        assert "quire_session" not in response.headers.get("set-cookie", "")
        # and when a signed-in person signs out, the browser's session cookie is deleted anyway
        out = _form_post(signed_in, "/logout")
        assert (out.status_code, out.headers["location"]) == (303, "/login")
        cleared = [c for c in out.headers.get_list("set-cookie") if c.startswith("quire_session=")]
        assert len(cleared) == 1
        assert "max-age=0" in cleared[0].lower()
        assert "quire_session" not in signed_in.cookies
    finally:
        stack.stop()
        own_redis.stop()
        database.drop()


# Uploads: quotas, rates, expiry and file names.


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def quota_stack(
    request: pytest.FixtureRequest, redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """Low upload limits; each test uploads as people of its own."""
    root = tmp_path_factory.mktemp(f"quota-{request.param}")
    with running_stack(
        request.param,
        redis_server,
        root,
        worker=False,
        QUIRE_MAX_UPLOAD_MB="1",
        QUIRE_UPLOADS_PER_MINUTE="4",
        QUIRE_UPLOAD_MB_PER_MINUTE="1",
        QUIRE_STORAGE_QUOTA_MB="1.2",
        QUIRE_LOGIN_ATTEMPTS_PER_MINUTE="1000",  # each test signs people up and in
    ) as stack:
        yield stack


def _person(stack: Stack, name: str) -> httpx.Client:
    """Someone new, signed up and signed in through the browser's forms (quicker than the CLI)."""
    email = f"{name}-{secrets.token_hex(4)}@example.com"
    client = http_client(stack.base_url, timeout=60)
    client.get("/signup")
    assert _form_post(client, "/signup", email=email, password=PASSWORD).status_code == 303
    client.get("/login")
    assert _form_post(client, "/login", email=email, password=PASSWORD).status_code == 303
    client.headers["x-csrftoken"] = csrf(client)
    return client


def _same_person(stack: Stack, person: httpx.Client) -> httpx.Client:
    """Another connection in the same browser session."""
    return http_client(stack.base_url, timeout=60, cookies=person.cookies, headers=person.headers)


def _upload(client: httpx.Client, size: int) -> httpx.Response:
    body = b"quota test line\n" * (size // 16)
    return client.post("/uploads", files={"file": ("a.txt", body, "text/plain")})


def test_uploads_are_limited_per_person(quota_stack: Stack) -> None:
    upload = _upload
    before = _stored_uploads(quota_stack)
    # Count: 4 uploads a minute, then 429 with Retry-After and a plain sentence.
    many = _person(quota_stack, "many")
    assert [upload(many, 100).status_code for _ in range(4)] == [201] * 4
    refused = upload(many, 100)
    assert (refused.status_code, refused.json()["code"]) == (429, "rate_limited")
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert "Try again in" in refused.json()["detail"]
    # The same limit holds for a job submitted with its file.
    submitted = many.post("/ai-jobs", data={"workflow": "document_summary"}, files={"file": ("a.txt", document())})
    assert submitted.status_code == 429
    # Bytes: 1 MB a minute; the upload that crosses it is taken, the next is refused.
    heavy = _person(quota_stack, "heavy")
    assert [upload(heavy, 400_000).status_code for _ in range(3)] == [201, 201, 201]
    assert upload(heavy, 100).status_code == 429
    # Stored bytes: 1.2 MB in all; an upload that would go past it is refused whole (413).
    hoarder = _person(quota_stack, "hoarder")
    assert upload(hoarder, 700_000).status_code == 201
    over = upload(hoarder, 700_000)
    assert (over.status_code, over.json()["code"]) == (413, "storage_quota_exceeded")
    assert "quota" in over.json()["detail"]
    assert _stored_uploads(quota_stack) == before + 4 + 3 + 1, "nothing of a refused upload is kept"


def _stored_uploads(stack: Stack) -> int:
    folder = stack.data_dir / "files" / "uploads"
    return len(list(folder.iterdir())) if folder.exists() else 0


def test_an_upload_that_cannot_fit_is_refused_before_its_body_is_read(quota_stack: Stack) -> None:
    # Given someone with 700 KB of their 1.2 MB quota stored
    person = _person(quota_stack, "early")
    assert _upload(person, 700_000).status_code == 201
    cookies = "; ".join(f"{name}={value}" for name, value in person.cookies.items())
    # When they start an upload that declares 800 KB, and send none of it
    head = (
        b"POST /uploads HTTP/1.1\r\nHost: quire\r\nContent-Type: multipart/form-data; boundary=b\r\n"
        + f"Content-Length: 800000\r\nCookie: {cookies}\r\nX-CSRFToken: {csrf(person)}\r\n".encode()
        + b"Connection: close\r\n\r\n"
    )
    received, waited = _drip(quota_stack, head, [], pause=0)
    # Then the answer is 413 at once, not after waiting for the body
    assert received.startswith(b"HTTP/1.1 413"), received
    assert b"storage_quota_exceeded" in received
    assert waited < 5


def test_parallel_uploads_cannot_pass_the_limits_together(quota_stack: Stack) -> None:
    # Given a limit of 4 uploads a minute and 1 MB a minute, when 40 small uploads arrive at once
    person = _person(quota_stack, "burst")
    clients = [_same_person(quota_stack, person) for _ in range(40)]
    with ThreadPoolExecutor(max_workers=40) as pool:
        statuses = [r.status_code for r in pool.map(lambda client: _upload(client, 100), clients)]
    # Then only 4 are taken
    assert statuses.count(201) == 4, statuses
    assert statuses.count(429) == 36, statuses
    # and when 10 uploads of 300 KB arrive at once, they stay under the 1.2 MB stored quota together
    person = _person(quota_stack, "hoard")
    clients = [_same_person(quota_stack, person) for _ in range(10)]
    with ThreadPoolExecutor(max_workers=10) as pool:
        answers = list(pool.map(lambda client: _upload(client, 300_000), clients))
    taken = [a.json()["size"] for a in answers if a.status_code == 201]
    assert 1 <= len(taken) <= 4, [a.status_code for a in answers]
    assert sum(taken) <= 1.2 * 1_048_576
    assert {a.status_code for a in answers} <= {201, 413, 429}


def test_unused_uploads_expire(redis_server: EmbeddedRedis, tmp_path: Path) -> None:
    database = make_database("sqlite", tmp_path)
    stack = Stack(tmp_path, database, fresh_redis_url(redis_server), QUIRE_UPLOAD_EXPIRY_HOURS="0.0005")  # 1.8 s
    try:
        stack.start()
        unused = stack.http.post("/uploads", files={"file": ("unused.txt", document(), "text/plain")}).json()
        # The used upload comes with its job in one request, so it cannot expire before the job names it.
        job = stack.submit(document())
        stack.wait(job)
        deadline = time.monotonic() + 20
        while stack.http.get(f"/{unused['input_ref']}").status_code != 404:
            assert time.monotonic() < deadline, "an unused upload was not deleted"
            time.sleep(0.2)
        assert not (stack.data_dir / "files" / unused["input_ref"]).exists()
        time.sleep(2)  # more passes of retention; the job's input stays
        assert _stored_uploads(stack) == 1
        assert stack.http.get(f"/ai-jobs/{job}").json()["status"] == "completed"
    finally:
        stack.stop()
        database.drop()


def test_long_file_names_get_a_clear_answer(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    huge = stack.http.post("/uploads", files={"file": ("n" * 5000 + ".txt", b"plain text", "text/plain")})
    assert (huge.status_code, huge.json()["code"]) == (422, "invalid_request")
    assert "shorter name" in huge.json()["detail"]
    # The same answer, as a page, for the browser's upload form.
    browser = browser_session(stack, "alice@example.com")
    page = browser.post(
        "/jobs",
        data={"workflow": "document_summary", "_csrf_token": csrf(browser)},
        files={"file": ("n" * 5000 + ".txt", b"plain text", "text/plain")},
        headers={"Accept": "text/html"},
    )
    assert page.status_code == 422
    assert "text/html" in page.headers["content-type"]
    assert "shorter name" in page.text
    assert "Request Entity Too Large" not in page.text
    long = stack.http.post("/uploads", files={"file": ("n" * 2000 + ".txt", b"plain text", "text/plain")})
    assert long.status_code == 201
    assert len(long.json()["filename"]) <= 200


# Production mode and the server: secret key, metrics, API docs, slow clients, proxies.


def test_production_refuses_weak_secret_keys(tmp_path: Path) -> None:
    # A missing key, and one long enough but patterned; which keys are weak is tested in unit/test_secret_key.py.
    for weak in ("", "a" * 64):
        env = {**_clean_env(tmp_path), "QUIRE_ENV": "production", "QUIRE_SECRET_KEY": weak}
        run = subprocess.run(
            [sys.executable, "-m", "quire", "web", "--port", str(free_port())],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert run.returncode != 0, weak
        assert "QUIRE_SECRET_KEY" in run.stderr
        assert "secrets.token_urlsafe" in run.stderr, run.stderr
        assert "Traceback" not in run.stderr


def _clean_env(tmp_path: Path) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("QUIRE_")} | {"QUIRE_DATA_DIR": str(tmp_path)}


METRICS_TOKEN = secrets.token_urlsafe(24)


@pytest.fixture(scope="module")
def production(redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    root = tmp_path_factory.mktemp("production")
    database = make_database("sqlite", root)
    stack = Stack(
        root,
        database,
        fresh_redis_url(redis_server),
        QUIRE_ENV="production",
        QUIRE_SECRET_KEY=secrets.token_urlsafe(48),
        QUIRE_METRICS_TOKEN=METRICS_TOKEN,
        QUIRE_HEADER_TIMEOUT_S="1",
        QUIRE_BODY_TIMEOUT_S="1",
    )
    stack.start_web()
    yield stack
    stack.stop()
    database.drop()


def test_metrics_and_api_docs_are_closed_in_production(production: Stack) -> None:
    anonymous = http_client(production.base_url)
    assert anonymous.get("/metrics").status_code == 401
    assert anonymous.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    scraped = anonymous.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert scraped.status_code == 200
    assert "quire_" in scraped.text
    for page in ("/schema/swagger", "/schema/redoc", "/schema/elements", "/schema/rapidoc"):
        assert anonymous.get(page).status_code == 404, page
    assert anonymous.get("/schema/openapi.json").json()["info"]["title"] == "Quire"


def test_metrics_are_off_in_production_without_a_token(redis_server: EmbeddedRedis, tmp_path: Path) -> None:
    database = make_database("sqlite", tmp_path)
    stack = Stack(tmp_path, database, fresh_redis_url(redis_server), QUIRE_ENV="production",
                  QUIRE_SECRET_KEY=secrets.token_urlsafe(32))  # fmt: skip
    try:
        # An empty QUIRE_METRICS_TOKEN counts as none, and no token turns /metrics off (404).
        for token in ("", None):
            stack.stop()
            stack.env.pop("QUIRE_METRICS_TOKEN", None)
            if token is not None:
                stack.env["QUIRE_METRICS_TOKEN"] = token
            stack.start_web()
            anonymous = http_client(stack.base_url)
            assert anonymous.get("/metrics").status_code == 404, token
            assert anonymous.get("/metrics", headers={"Authorization": "Bearer"}).status_code == 404, token
    finally:
        stack.stop()
        database.drop()


def _raw(production: Stack, request: bytes) -> tuple[bytes, float]:
    """Send bytes and wait (at most 10 s) for the server to answer or hang up."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", production.port), timeout=10) as sock:
        sock.sendall(request)
        received = b""
        try:
            while chunk := sock.recv(4096):
                received += chunk
        except TimeoutError:
            pytest.fail(f"the server held a stalled connection for 10 s: {received!r}")
        except ConnectionResetError:
            pass
    return received, time.monotonic() - started


def test_slow_clients_are_cut_off(production: Stack) -> None:
    # Headers that never finish (slowloris): answered 408 and closed after QUIRE_HEADER_TIMEOUT_S.
    received, waited = _raw(production, b"GET /healthz HTTP/1.1\r\nHost: quire\r\nX-Slow: 1")
    assert received.startswith(b"HTTP/1.1 408"), received
    assert waited < 5
    # A body that stops halfway: 408 after QUIRE_BODY_TIMEOUT_S.
    head = (
        b"POST /uploads HTTP/1.1\r\nHost: quire\r\n"
        + f"Authorization: Bearer {production.token}\r\n".encode()
        + b"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\n"
    )
    received, waited = _raw(production, head)
    assert received.startswith(b"HTTP/1.1 408"), received
    assert waited < 5
    assert httpx.get(f"{production.base_url}/healthz").status_code == 200


def _drip(production: Stack, first: bytes, chunks: list[bytes], pause: float) -> tuple[bytes, float]:
    """Send `first`, then each chunk after `pause`; read until the server hangs up (at most 15 s)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", production.port), timeout=15) as sock:
        sock.sendall(first)
        for chunk in chunks:
            time.sleep(pause)
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
        received = b""
        try:
            while data := sock.recv(65536):
                received += data
        except TimeoutError:
            pytest.fail(f"the server held the connection for 15 s: {received[:300]!r}")
        except ConnectionResetError:
            pass
    return received, time.monotonic() - started


def _upload_request(production: Stack, body: bytes, close: bool = True) -> tuple[bytes, bytes]:
    """The head and body of a multipart upload of `body` as a text file."""
    part = (
        b'--b\r\nContent-Disposition: form-data; name="file"; filename="steady.txt"\r\n'
        b"Content-Type: text/plain\r\n\r\n" + body + b"\r\n--b--\r\n"
    )
    head = (
        b"POST /uploads HTTP/1.1\r\nHost: quire\r\n"
        + f"Authorization: Bearer {production.token}\r\n".encode()
        + b"Content-Type: multipart/form-data; boundary=b\r\n"
        + f"Content-Length: {len(part)}\r\n".encode()
        + (b"Connection: close\r\n" if close else b"")
        + b"\r\n"
    )
    return head, part


def test_a_steady_body_outlasts_the_header_deadline_even_behind_a_pipelined_request(production: Stack) -> None:
    # Given a header deadline of 1 s, a request answered at once, and pipelined behind it an upload
    # of 200 KB whose body takes about 2.4 s, steadily (each piece well within the body timeout)
    head, part = _upload_request(production, b"steady line of text\n" * 10_000)
    first = b"GET /healthz HTTP/1.1\r\nHost: quire\r\n\r\n" + head
    pieces = [part[i : i + len(part) // 8 + 1] for i in range(0, len(part), len(part) // 8 + 1)]
    received, _ = _drip(production, first, pieces, pause=0.3)
    # Then both are answered in full: no 408 lands inside the upload's answer
    assert received.startswith(b"HTTP/1.1 200"), received[:300]
    assert b"HTTP/1.1 408" not in received, received
    assert received.count(b"HTTP/1.1 ") == 2, received
    assert b"HTTP/1.1 201" in received, received


def test_a_stalled_second_keep_alive_request_gets_408(production: Stack) -> None:
    first = b"GET /healthz HTTP/1.1\r\nHost: quire\r\n\r\nGET /healthz HTTP/1.1\r\nHost: qu"
    received, waited = _drip(production, first, [], pause=0)
    assert received.startswith(b"HTTP/1.1 200"), received
    assert received.count(b"HTTP/1.1 ") == 2
    assert b"HTTP/1.1 408" in received
    assert waited < 5


def test_a_body_that_drips_in_is_cut_off_at_its_overall_deadline(production: Stack) -> None:
    # Given a body of 2 KB and a body timeout of 1 s, when a byte comes every 0.2 s (each read is
    # in time, but the whole body would take 7 minutes)
    head, part = _upload_request(production, b"x" * 2000)
    received, waited = _drip(production, head, [part[i : i + 1] for i in range(40)], pause=0.2)
    # Then the server answers 408 once the whole body's deadline has passed
    assert received.startswith(b"HTTP/1.1 408"), received
    assert waited < 6


def test_forwarded_addresses_are_not_believed_by_default(strict_stack: Stack) -> None:
    client = http_client(strict_stack.base_url)
    client.get("/login")
    # Each attempt claims another address in X-Forwarded-For (and another account, so that the
    # per-account limit stays out of it); the limit of 5 a minute still counts the real peer.
    answers = [_attempt_login(client, f"user{n}@example.com", "wrong", f"203.0.113.{n}").status_code for n in range(6)]
    assert answers == [401] * 5 + [429]


# Input: strict limits, encoded redirects, documents past the parsers' limits.


def test_limits_are_strictly_typed(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    upload = people["upload"]
    ref = upload["input_ref"]  # type: ignore[index]
    for raw in ("true", "Infinity", "NaN", '"30"', "1e999", "[30]"):
        body = f'{{"workflow": "document_summary", "input_ref": "{ref}", "limits": {{"timeout_s": {raw}}}}}'
        response = stack.http.post("/ai-jobs", content=body, headers={"content-type": "application/json"})
        assert (response.status_code, response.json()["code"]) == (422, "invalid_request"), raw
    for raw in ("true", '"3"', "2.5"):
        body = f'{{"workflow": "document_summary", "input_ref": "{ref}", "limits": {{"max_attempts": {raw}}}}}'
        response = stack.http.post("/ai-jobs", content=body, headers={"content-type": "application/json"})
        assert response.status_code == 422, raw
    for value in ("true", "inf", "nan", "1e999", "thirty"):
        response = stack.http.post(
            "/ai-jobs",
            data={"workflow": "document_summary", "timeout_s": value},
            files={"file": ("a.txt", document(), "text/plain")},
        )
        assert (response.status_code, response.json()["code"]) == (422, "invalid_request"), value
    # Plain numbers still work, in JSON and in a form.
    ok = stack.http.post(
        "/ai-jobs", json={"workflow": "document_summary", "input_ref": ref, "limits": {"timeout_s": 30}}
    )
    assert ok.status_code == 202
    assert stack.submit(document(), timeout_s="30", max_attempts="2")


def test_admin_replay_group_takes_hostile_values_as_plain_text(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    admin = browser_session(stack, "admin@example.com")
    response = _form_post(
        admin, "/admin/dead-letters/replay", error="timeout&status=completed#x", workflow="a b", confirm="yes"
    )
    # The redirect names the recorded replay, and nothing the form sent
    assert response.status_code == 303
    assert re.fullmatch(r"/admin/dead-letters#replay-[0-9a-f]{32}", response.headers["location"])
    page = admin.get("/admin/dead-letters").text
    assert "<code>timeout&amp;status=completed#x</code>" in page


def _pdf(objects: list[bytes]) -> bytes:
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    return out + f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()


def pdf_beyond_parser_limits() -> bytes:
    """A page holding an array of 100,001 numbers: past pypdf's own limit on array sizes."""
    junk = b"[" + b"0 " * 100_001 + b"]"
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] /Junk " + junk + b" >>",
        ]
    )


def docx_with_entity_expansion() -> bytes:
    """A Word document whose text is a billion-laughs entity: past libxml2's amplification limit."""
    entities = '<!ENTITY lol0 "lol">' + "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
    source = zipfile.ZipFile(io.BytesIO(docx_bytes(["placeholder text"])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as bomb:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                xml = data.decode()
                xml = xml[xml.index("<w:document") :].replace("placeholder text", "&lol9;")
                data = f'<?xml version="1.0"?><!DOCTYPE d [{entities}]>{xml}'.encode()
            bomb.writestr(item, data)
    return out.getvalue()


def test_documents_past_parser_limits_fail_once_as_invalid_input(people: dict[str, object]) -> None:
    stack = people["stack"]
    assert isinstance(stack, Stack)
    for name, data in (("bomb.pdf", pdf_beyond_parser_limits()), ("bomb.docx", docx_with_entity_expansion())):
        response = stack.http.post("/ai-jobs", data={"workflow": "document_summary"}, files={"file": (name, data)})
        assert response.status_code == 202, response.text
        view = stack.wait(response.json()["job_id"])
        assert view["status"] == "dead_letter", name
        assert view["error"]["code"] == "invalid_input", (name, view["error"])
        assert "refuses to read" in view["events"][-1]["detail"], view["events"][-1]
        assert event_types(view) == ["queued", "running", "dead_letter"], name
