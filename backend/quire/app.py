"""The Litestar application factory."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from litestar import Litestar, Request, Response
from litestar.config.response_cache import ResponseCacheConfig
from litestar.exceptions import HTTPException
from litestar.openapi import OpenAPIConfig
from litestar.plugins.htmx import HTMXPlugin
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsPlugin
from litestar.response import Template
from litestar.static_files import create_static_files_router
from litestar.template.config import TemplateConfig

from quire import __version__
from quire.logs import configure_logging
from quire.settings import get_settings
from quire.web.api import JobsController, max_request_bytes
from quire.web.health import healthz, readyz
from quire.web.pages import PagesController
from quire.web.problems import http_exception_to_problem, unexpected_to_problem

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"
STATIC = ROOT / "static"
API_PREFIXES = ("/ai-jobs", "/uploads", "/healthz", "/readyz", "/schema")


def filesize(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"


def _wants_html(request: Request[Any, Any, Any]) -> bool:
    return not request.url.path.startswith(API_PREFIXES) and "text/html" in request.headers.get("accept", "")


def on_http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    """Pages get an HTML error page; the API and programs get problem+json."""
    if _wants_html(request) and exc.status_code < 500:
        title = {404: "Not found"}.get(exc.status_code, "That did not work")
        template = Template("pages/error.html", context={"title": title, "detail": exc.detail})
        return template.to_asgi_response(request.app, request)  # type: ignore[return-value]
    return http_exception_to_problem(request, exc)


def _templates(engine: JinjaTemplateEngine) -> None:
    engine.engine.filters["filesize"] = filesize


def create_app() -> Litestar:
    settings = get_settings()
    configure_logging()
    # Importing the broker here means a web process publishes to the configured Redis.
    import quire.queue.actors  # noqa: F401

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    if not (STATIC / "vendor" / "htmx.min.js").exists():
        log.warning("static assets are not built: run `make install` (npm ci and the frontend build)")
    STATIC.mkdir(exist_ok=True)
    return Litestar(
        route_handlers=[
            PagesController,
            JobsController,
            healthz,
            readyz,
            create_static_files_router(path="/static", directories=[STATIC], include_in_schema=False),
        ],
        plugins=[HTMXPlugin(), ProblemDetailsPlugin(ProblemDetailsConfig(enable_for_all_http_exceptions=True))],
        template_config=TemplateConfig(directory=TEMPLATES, engine=JinjaTemplateEngine, engine_callback=_templates),
        exception_handlers={HTTPException: on_http_error, Exception: unexpected_to_problem},
        openapi_config=OpenAPIConfig(title="Quire", version=__version__, path="/schema"),
        response_cache_config=ResponseCacheConfig(),
        request_max_body_size=max_request_bytes(),
        debug=False,
    )
