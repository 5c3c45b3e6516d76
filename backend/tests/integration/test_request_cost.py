"""What a polled job view costs the web process: one worker-thread trip and one database session
for who asks and what the job says together (`web/auth.py`, AUTHENTICATES_ITSELF), with the
same answers as the authentication middleware gives every other route."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio.to_thread
import litestar.utils.sync
import pytest
from litestar.testing import TestClient
from sqlalchemy import event

from backend.tests.conftest import ScratchDatabase
from backend.tests.integration.conftest import fresh_redis_url
from quire.bootstrap import Quire
from quire.db import Database
from quire.queue.embedded_redis import EmbeddedRedis
from quire.settings import Settings

PASSWORD = "a long enough password"


@pytest.fixture
def app_quire(
    database: ScratchDatabase, redis_server: EmbeddedRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Quire]:
    """What the web app in this process runs on: a migrated database, a fresh Redis and data directory."""
    from quire.bootstrap import bootstrap
    from quire.migrations import upgrade

    monkeypatch.setenv("QUIRE_DATABASE_URL", database.url)
    monkeypatch.setenv("QUIRE_REDIS_URL", fresh_redis_url(redis_server))
    monkeypatch.setenv("QUIRE_DATA_DIR", str(tmp_path / "data"))
    upgrade(database.url)
    quire = bootstrap(Settings())
    yield quire
    quire.db.dispose()


@pytest.fixture
def app_env(app_quire: Quire) -> dict[str, str]:
    """An account, its token and a job."""
    from quire.accounts import service as accounts
    from quire.jobs import service

    owner = accounts.create_user(app_quire.db, "owner@example.com", PASSWORD)
    _, token = accounts.create_token(app_quire.db, owner.user_id, "test")
    upload = service.store_upload(
        app_quire.settings,
        app_quire.storage,
        app_quire.db,
        "a.txt",
        io.BytesIO(b"A document with a sentence."),
        owner.user_id,
    )
    job_id = service.submit(
        app_quire.settings,
        app_quire.db,
        app_quire.dispatcher,
        "document_summary",
        upload,
        service.Limits(),
        owner.user_id,
    ).job.id
    return {"token": token, "job_id": job_id, "owner_id": owner.user_id}


def counted(monkeypatch: pytest.MonkeyPatch, db: Database) -> dict[str, int]:
    """Count worker-thread trips (Quire's own, through anyio, and Litestar's for a sync handler)
    and database connections checked out of the pool."""
    counts = {"trips": 0, "sessions": 0}

    def counting(run: Callable[..., Any]) -> Callable[..., Any]:
        async def counted_run(*args: Any, **kwargs: Any) -> Any:
            counts["trips"] += 1
            return await run(*args, **kwargs)

        return counted_run

    def checkout(*_: Any) -> None:
        counts["sessions"] += 1

    monkeypatch.setattr(anyio.to_thread, "run_sync", counting(anyio.to_thread.run_sync))
    # Where Litestar's sync handlers go to a thread; if it moves, the counts below fail loudly.
    monkeypatch.setattr(litestar.utils.sync, "sync_to_thread", counting(litestar.utils.sync.sync_to_thread))
    event.listen(db.engine, "checkout", checkout)
    return counts


@pytest.mark.parametrize("path", ["/ai-jobs/{job_id}", "/jobs/{job_id}/status"])
def test_a_polled_view_is_one_thread_trip_and_one_session(
    app_quire: Quire, app_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    from quire.app import create_app

    with TestClient(create_app(app_quire)) as client:
        url = path.format(job_id=app_env["job_id"])
        bearer = {"Authorization": f"Bearer {app_env['token']}"}
        assert client.get(url, headers=bearer).status_code == 200  # warm: the view is cached
        counts = counted(monkeypatch, app_quire.db)
        # When the owner asks for the job
        answer = client.get(url, headers=bearer)
        # Then it is answered from one thread trip and one database session
        assert answer.status_code == 200
        assert counts == {"trips": 1, "sessions": 1}
        # And a route the middleware authenticates takes one more of each
        assert client.get("/ai-jobs?limit=1", headers=bearer).status_code == 200
        assert counts == {"trips": 3, "sessions": 3}


def test_a_submitted_job_takes_one_transaction_beside_the_lookups_of_who_asks_and_their_upload(
    app_quire: Quire, app_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from quire.accounts import service as accounts
    from quire.app import create_app
    from quire.jobs import store

    # Given an account with a default webhook URL, which a job without a callback_url of its own takes
    accounts.set_default_webhook_url(app_quire.db, app_env["owner_id"], "https://hooks.example.com/quire")
    with TestClient(create_app(app_quire)) as client:
        bearer = {"Authorization": f"Bearer {app_env['token']}"}
        upload = client.post("/uploads", headers=bearer, files={"file": ("b.txt", b"Some words.", "text/plain")})
        job = {"workflow": "document_summary", "input_ref": upload.json()["input_ref"]}
        assert client.post("/ai-jobs", headers=bearer, json=job).status_code == 202  # warm: admission has read
        counts = counted(monkeypatch, app_quire.db)
        # When the owner submits a job on their upload
        answer = client.post("/ai-jobs", headers=bearer, json=job)
        # Then the middleware's authentication, the upload's lookup, and the job's acceptance with the
        # account's default URL read in its transaction are a session each, in two thread trips
        assert answer.status_code == 202
        assert counts == {"trips": 2, "sessions": 3}
        job_record = store.get_job(app_quire.db, answer.json()["job_id"])
        assert job_record is not None
        assert job_record.callback_url == "https://hooks.example.com/quire"


# Each polled route beside a route of the same kind (API or page) that the middleware guards.
beside_a_guarded_route = pytest.mark.parametrize(
    ("path", "guarded_path"),
    [("/ai-jobs/{job_id}", "/ai-jobs/{job_id}/webhooks"), ("/jobs/{job_id}/status", "/jobs/{job_id}")],
)


@beside_a_guarded_route
def test_a_route_that_authenticates_itself_answers_as_the_middleware_does(
    app_quire: Quire, app_env: dict[str, str], path: str, guarded_path: str
) -> None:
    from quire.accounts import service as accounts
    from quire.app import create_app

    url, guarded_url = path.format(job_id=app_env["job_id"]), guarded_path.format(job_id=app_env["job_id"])
    with TestClient(create_app(app_quire)) as client:
        for headers in [
            {},
            {"Authorization": "Bearer not-a-token"},
            {"Authorization": "Bearer " + app_env["token"][:-2] + "xx"},
            {"Accept": "text/html"},
            {"Cookie": "quire_session=never-issued"},
        ]:
            # Given the same credentials, or none
            guarded = client.get(guarded_url, headers=headers, follow_redirects=False)
            here = client.get(url, headers=headers, follow_redirects=False)
            # Then both refuse them the same way: 401 with the same problem, or to the login page
            assert guarded.status_code in (401, 303)
            assert here.status_code == guarded.status_code, headers
            if guarded.status_code == 401:
                assert here.json() == guarded.json()
            else:
                assert here.headers["location"].split("?")[0] == guarded.headers["location"].split("?")[0] == "/login"
        # And another person's job does not exist for them
        other = accounts.create_user(app_quire.db, "other@example.com", PASSWORD)
        _, token = accounts.create_token(app_quire.db, other.user_id, "test")
        assert client.get(url, headers={"Authorization": f"Bearer {token}"}).status_code == 404


@beside_a_guarded_route
def test_revoked_tokens_and_old_sessions_stop_working_here_too(
    app_quire: Quire, app_env: dict[str, str], path: str, guarded_path: str
) -> None:
    from quire.accounts import service as accounts
    from quire.app import create_app

    url, guarded_url = path.format(job_id=app_env["job_id"]), guarded_path.format(job_id=app_env["job_id"])
    owner = app_env["owner_id"]
    with TestClient(create_app(app_quire)) as browser, TestClient(create_app(app_quire)) as program:
        # Given a browser signed in through the login form, and a second token of the owner's
        browser.get("/login")
        form = {"email": "owner@example.com", "password": PASSWORD, "_csrf_token": browser.cookies["quire_csrf"]}
        assert browser.post("/login", data=form, follow_redirects=False).status_code == 303
        token, secret = accounts.create_token(app_quire.db, owner, "second")
        bearer = {"Authorization": f"Bearer {secret}"}
        # Then both see the job
        assert browser.get(url).status_code == 200
        assert program.get(url, headers=bearer).status_code == 200
        # When the token is revoked and the password changed elsewhere
        assert accounts.revoke_token(app_quire.db, owner, token.id)
        accounts.change_password(app_quire.db, owner, PASSWORD, "another long enough password")
        # Then neither works any more, here as on a route the middleware guards
        for client, headers in [(program, bearer), (browser, {"Accept": "text/html"}), (browser, {})]:
            here = client.get(url, headers=headers, follow_redirects=False)
            guarded = client.get(guarded_url, headers=headers, follow_redirects=False)
            assert here.status_code == guarded.status_code, headers
            assert here.status_code in (401, 303), headers
