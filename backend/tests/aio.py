"""Running a coroutine from a synchronous test, whatever the calling thread already runs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


def run_async(func: Callable[..., Awaitable[T]], *args: Any) -> T:
    """`func(*args)` on a fresh event loop in a thread of its own.

    `anyio.run` and `asyncio.run` refuse to start in a thread whose loop is running, and a test
    process that has driven a browser through Playwright's sync API has one in its main thread.
    Exceptions come back as they were raised, so `pytest.raises` sees them.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, func, *args).result()
