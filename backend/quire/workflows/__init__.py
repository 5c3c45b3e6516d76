"""Workflows: plain business functions `(document, model) -> validated result`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from quire.documents.extract import Document
    from quire.workflows.models import ModelProvider


@dataclass(frozen=True)
class Workflow:
    """A named, versioned business function with its output schema and readable report."""

    name: str
    version: str
    title: str
    description: str
    prompt_version: str
    output_schema: type[BaseModel]
    run: Callable[[Document, ModelProvider], BaseModel]
    report: Callable[[Any], str]
