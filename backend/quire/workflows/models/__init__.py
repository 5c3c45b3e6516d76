"""Model providers: where a workflow's structured answer comes from."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from quire.documents.extract import Document
from quire.errors import MalformedOutput, Problem

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Task:
    """What a workflow asks a model for: a name the local provider knows, and instructions for an LLM."""

    name: str
    instructions: str
    prompt_version: str


class ModelProvider(Protocol):
    name: str
    model_name: str
    # The kinds and counts of personal details replaced before the document left the machine, for
    # the job's provenance; None when nothing was redacted (a provider that sends nothing anywhere).
    redacted: dict[str, int] | None

    def answer(self, task: Task, document: Document, schema: type[BaseModel]) -> dict[str, Any]:
        """The raw structured answer; the workflow validates it."""
        ...


def ask(model: ModelProvider, task: Task, document: Document, schema: type[T]) -> T:
    """Ask a model and validate its answer against the workflow's output schema."""
    raw = model.answer(task, document, schema)
    try:
        return schema.model_validate(raw)
    except ValidationError as exc:
        raise MalformedOutput(
            f"The model's answer did not match the {schema.__name__} schema ({exc.error_count()} problems).",
            raw_answer=json.dumps(raw, indent=2, ensure_ascii=False, default=str),
            problems=validation_problems(exc),
        ) from exc


def validation_problems(exc: ValidationError) -> list[Problem]:
    """The validator's findings as (field path, message) pairs, for the operator detail."""
    return [{"path": ".".join(str(part) for part in error["loc"]), "message": error["msg"]} for error in exc.errors()]
