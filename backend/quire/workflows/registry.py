"""The registry of workflows: name -> version, schemas, the business function and its report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from quire.documents.extract import Document
from quire.workflows.models import ModelProvider


@dataclass(frozen=True)
class Workflow:
    name: str
    version: str
    title: str
    description: str
    prompt_version: str
    output_schema: type[BaseModel]
    run: Callable[[Document, ModelProvider], BaseModel]
    report: Callable[[Any], str]


def _load() -> dict[str, Workflow]:
    from quire.workflows import document_summary

    return {wf.name: wf for wf in (document_summary.WORKFLOW,)}


WORKFLOWS: dict[str, Workflow] = _load()


def get_workflow(name: str) -> Workflow:
    """The workflow called `name`; KeyError when there is none."""
    return WORKFLOWS[name]
