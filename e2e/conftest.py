"""Browser tests: pytest-playwright in Debian's Chromium against a real stack (web, worker, Redis, SQLite)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from backend.tests.conftest import make_database
from backend.tests.integration.stack import PASSWORD, Stack
from quire.queue.embedded_redis import EmbeddedRedis

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "test-results" / "screenshots"

# A compressed polling schedule keeps browser tests quick; the cadence test uses its own.
E2E_POLLING = {
    "QUIRE_POLL_FAST_S": "0.25",
    "QUIRE_POLL_FAST_FOR_S": "3",
    "QUIRE_POLL_SLOW_S": "0.5",
    "QUIRE_POLL_STOP_AFTER_S": "60",
}


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError("Debian's chromium is not installed: run `make browser` (apt-get install chromium)")
    return found


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    # Debian's Chromium, never a downloaded one; quiet flags because this machine has no network.
    return {
        **browser_type_launch_args,
        "executable_path": chromium_path(),
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


@pytest.fixture(scope="session")
def e2e_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path_factory.mktemp("e2e-redis"), persistent=False).start()
    yield server
    server.stop()


def start_stack(root: Path, redis_server: EmbeddedRedis, db_index: int, **env: str) -> tuple[Stack, Any]:
    database = make_database("sqlite", root)
    stack = Stack(root, database, f"redis://127.0.0.1:{redis_server.port}/{db_index}", **env)
    stack.start()
    return stack, database


@pytest.fixture(scope="session")
def live(e2e_redis: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack, database = start_stack(
        tmp_path_factory.mktemp("e2e-stack"), e2e_redis, 0, QUIRE_RETRY_BASE_S="0.3", QUIRE_RETRY_MAX_S="0.6",
        **E2E_POLLING,
    )  # fmt: skip
    yield stack
    stack.stop()
    database.drop()


@pytest.fixture(scope="session")
def base_url(live: Stack) -> str:
    return live.base_url


def sign_in(page: Page, base_url: str, email: str = "owner@example.com", password: str = PASSWORD) -> None:
    page.goto(f"{base_url}/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base_url}/")


@pytest.fixture(scope="session")
def signed_in_state(browser: Browser, live: Stack, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Sign in once through the real login form and reuse the stored session in every test."""
    context = browser.new_context()
    sign_in(context.new_page(), live.base_url)
    path = str(tmp_path_factory.mktemp("auth") / "state.json")
    context.storage_state(path=path)
    context.close()
    return path


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any], signed_in_state: str) -> dict[str, Any]:
    return {**browser_context_args, "storage_state": signed_in_state}


def screenshot(page: Page, name: str) -> Path:
    """Save a full-page screenshot of a state under test-results/screenshots/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


@pytest.fixture(autouse=True)
def no_csp_violations(page: Page) -> Iterator[None]:
    """Every browser test also proves the page runs under its CSP: no script or style was blocked."""
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)
    yield
    assert violations == [], violations
