"""The `openai` provider: any OpenAI-compatible chat completions endpoint, with JSON-schema output.

The request builder and the response reader are pure functions; `OpenAIProvider` only moves bytes.
Failures map to Quire's error codes (docs/architecture.md): 429 -> rate_limited (Retry-After
honoured), 5xx and network errors -> upstream_unavailable, other 4xx and refusals ->
upstream_rejected, unreadable answers -> malformed_output, a timeout -> timeout. The API key is
sent in a header and never appears in a message, a log line or the job record.

Before a document is sent, the personal details named by `QUIRE_REDACT` are replaced by
placeholders (see `redaction`), and the placeholders in the answer are restored before the
workflow validates it; `redacted` then holds the kinds and counts for the job's provenance.
"""

from __future__ import annotations

import json
from copy import deepcopy
from dataclasses import replace
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import BaseModel

from quire.db import utcnow
from quire.documents.extract import Document
from quire.errors import (
    ErrorCode,
    JobFailure,
    MalformedOutput,
    Problem,
    RateLimited,
    UpstreamRejected,
    UpstreamUnavailable,
)
from quire.settings import Settings
from quire.workflows.models import Task
from quire.workflows.models.redaction import Redaction


class ProviderTimeout(JobFailure):
    code = ErrorCode.TIMEOUT


def strict_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the strict form structured outputs require: every property
    required (optional ones nullable already) and no additional properties."""
    document = deepcopy(schema.model_json_schema())

    def tighten(node: Any) -> None:
        if isinstance(node, list):
            for value in node:
                tighten(value)
            return
        if not isinstance(node, dict):
            return
        if node.get("type") == "object" and "properties" in node:
            node["required"] = list(node["properties"])
            node["additionalProperties"] = False
        node.pop("default", None)
        node.pop("title", None)
        for key, value in node.items():
            if key in ("properties", "$defs"):
                # Mappings of names to schemas: the names stay, each schema is tightened.
                for schema_node in value.values():
                    tighten(schema_node)
            else:
                tighten(value)

    tighten(document)
    return document


def build_request(
    task: Task, document: Document, schema: type[BaseModel], model: str, max_chars: int
) -> dict[str, Any]:
    text = document.text[:max_chars]
    return {
        "model": model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": f"{task.instructions} Answer only with JSON that matches the schema."},
            {"role": "user", "content": f"Document ({document.filename}):\n\n{text}"},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": task.name, "schema": strict_schema(schema), "strict": True},
        },
    }


def leading_text(text: str, limit: int) -> str:
    """At most `limit` characters from the start of `text`, cut at a line break where one is near,
    so that no email, phone number, IBAN or card number is cut in two (half of one is not
    recognised, so it would not be redacted)."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit + 1)
    return text[:cut] if cut >= limit // 2 else text[:limit]


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: either a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - utcnow()).total_seconds())
    except (TypeError, ValueError):
        return None


def read_response(status: int, headers: httpx.Headers, body: bytes) -> dict[str, Any]:
    """The structured answer in a provider response, or the failure it stands for."""
    if status == 429:
        raise RateLimited(retry_after_s=retry_after_seconds(headers.get("retry-after")))
    if status >= 500:
        raise UpstreamUnavailable(f"The model provider answered with an error ({status}).", status)
    if status >= 400:
        raise UpstreamRejected(f"The model provider refused the request ({status}).", status)
    try:
        message = json.loads(body)["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise MalformedOutput("The model provider's response could not be read.") from exc
    if message.get("refusal"):
        raise UpstreamRejected("The model declined to process this document.")
    content = message.get("content") or ""
    try:
        answer = json.loads(content)
    except ValueError as exc:
        problem: Problem = {"path": "", "message": f"not JSON: {exc}"}
        raise MalformedOutput("The model's answer was not valid JSON.", raw_answer=content, problems=[problem]) from exc
    if not isinstance(answer, dict):
        problem = {"path": "", "message": f"a JSON {type(answer).__name__}, not an object"}
        raise MalformedOutput("The model's answer was not a JSON object.", raw_answer=content, problems=[problem])
    return answer


class OpenAIProvider:
    name = "openai"

    def __init__(self, settings: Settings, timeout_s: float) -> None:
        self.model_name = settings.openai_model
        self._url = settings.openai_base_url.rstrip("/") + "/chat/completions"
        self._key = settings.openai_api_key
        self._max_chars = settings.openai_max_input_chars
        self._redact = tuple(settings.redact)
        self._phone_regions = tuple(settings.redact_phone_regions)
        # Kinds and counts of what this provider redacted; None when redaction is off.
        self.redacted: dict[str, int] | None = None
        # Both limits sit inside the attempt's own timeout.
        self._timeout = httpx.Timeout(timeout_s, connect=min(5.0, timeout_s))

    def answer(self, task: Task, document: Document, schema: type[BaseModel]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self._key.get_secret_value()}"} if self._key else {}
        redaction = Redaction(self._redact, self._phone_regions)
        # Cut before redacting (only what is sent is scanned) and after (a placeholder may be
        # longer than its value, and the request builder must not cut into the text beyond).
        text = leading_text(redaction.redact(leading_text(document.text, self._max_chars)), self._max_chars)
        sent = replace(document, text=text, filename=redaction.redact(document.filename))
        request = build_request(task, sent, schema, self.model_name, self._max_chars)
        try:
            response = httpx.post(self._url, json=request, headers=headers, timeout=self._timeout)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout("The model provider did not answer in time.") from exc
        except httpx.TransportError as exc:
            raise UpstreamUnavailable("The model provider could not be reached.") from exc
        answer = read_response(response.status_code, response.headers, response.content)
        if self._redact:
            self.redacted = redaction.report()
        restored: dict[str, Any] = redaction.restore(answer)
        return restored
