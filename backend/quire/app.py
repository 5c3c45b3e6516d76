"""The Litestar application factory."""

from __future__ import annotations

from litestar import Litestar
from litestar.exceptions import HTTPException
from litestar.openapi import OpenAPIConfig
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsPlugin

from quire import __version__
from quire.logs import configure_logging
from quire.settings import get_settings
from quire.web.api import JobsController, max_request_bytes
from quire.web.health import healthz, readyz
from quire.web.problems import http_exception_to_problem, unexpected_to_problem


def create_app() -> Litestar:
    settings = get_settings()
    configure_logging()
    # Importing the broker here means a web process publishes to the configured Redis.
    import quire.queue.actors  # noqa: F401

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return Litestar(
        route_handlers=[JobsController, healthz, readyz],
        plugins=[ProblemDetailsPlugin(ProblemDetailsConfig(enable_for_all_http_exceptions=True))],
        exception_handlers={HTTPException: http_exception_to_problem, Exception: unexpected_to_problem},
        openapi_config=OpenAPIConfig(title="Quire", version=__version__, path="/schema"),
        request_max_body_size=max_request_bytes(),
        debug=False,
    )
