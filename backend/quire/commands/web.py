"""`quire web`: the web app and JSON API under uvicorn."""

from __future__ import annotations

import os
import socket

import click
import uvicorn

from quire.processors import SIBLINGS, forget
from quire.settings import Settings
from quire.web.server import HeaderDeadlineProtocol


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option(
    "--workers", default=None, type=click.IntRange(1, 64), help="processes on the port [default: QUIRE_WEB_WORKERS]"
)
@click.pass_obj
def web(settings: Settings, host: str, port: int, workers: int | None) -> None:
    """Serve the web app and JSON API."""
    proxies = settings.forwarded_allow_ips.strip()
    workers = workers or settings.web_workers or default_web_workers()
    # What each process needs to claim a processor of its own among its siblings (`create_app`).
    siblings = f"web-{socket.gethostname()}-{os.getpid()}"  # containers on one machine may share pids
    os.environ[SIBLINGS] = f"{siblings}:{workers}"
    try:
        _serve(settings, host, port, workers, proxies)
    finally:
        os.environ.pop(SIBLINGS, None)
        forget(siblings)


def _serve(settings: Settings, host: str, port: int, workers: int, proxies: str) -> None:
    uvicorn.run(
        "quire.app:create_app",
        factory=True,
        host=host,
        port=port,
        # uvicorn's own multi-process mode: one socket, bound here, shared by `workers` processes it
        # starts and restarts. Sessions, rate limits, live updates and metrics all live in Redis or
        # the shared metrics directory, so any process can answer any request.
        workers=workers,
        log_config=None,  # uvicorn's lines go through Quire's logging pipeline like every other
        access_log=settings.access_log,
        http=HeaderDeadlineProtocol,
        timeout_keep_alive=settings.keep_alive_s,
        # uvicorn trusts X-Forwarded-For from loopback unless told otherwise; a client on the same
        # host could then pick its own address. Only the proxies named in the setting are believed.
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies or "",
    )


def default_web_workers() -> int:
    """One web process per CPU this process may use, at most 8: a request spends most of its time
    in Python, so one process keeps about one core busy."""
    return max(1, min(8, len(os.sched_getaffinity(0))))
