"""The `document_summary` workflow: title, summary, key points and keywords of a document."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from quire.documents.extract import Document
from quire.workflows import Workflow
from quire.workflows.models import ModelProvider, Task, ask

VERSION = "1"
TASK = Task(
    name="document_summary",
    prompt_version="1",
    instructions=(
        "Summarise the document. Give its title, a summary of at most five sentences, up to five key "
        "points, up to eight keywords, its ISO 639-1 language code, and its word and page counts."
    ),
)


class DocumentSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(max_length=300)
    summary: str
    key_points: list[str] = Field(max_length=10)
    keywords: list[str] = Field(max_length=20)
    language: str = Field(max_length=8)
    word_count: int = Field(ge=0)
    page_count: int | None = Field(default=None, ge=0)


def summarize_document(document: Document, model: ModelProvider) -> DocumentSummary:
    return ask(model, TASK, document, DocumentSummary)


def report(result: DocumentSummary) -> str:
    lines = [f"# {result.title}", "", result.summary, ""]
    if result.key_points:
        lines += ["## Key points", "", *[f"- {point}" for point in result.key_points], ""]
    if result.keywords:
        lines += ["## Keywords", "", ", ".join(result.keywords), ""]
    pages = f", {result.page_count} pages" if result.page_count is not None else ""
    lines.append(f"_{result.word_count} words{pages}, language: {result.language}_")
    return "\n".join(lines) + "\n"


WORKFLOW = Workflow(
    name="document_summary",
    version=VERSION,
    title="Document summary",
    description="A short summary, key points and keywords of any document.",
    prompt_version=TASK.prompt_version,
    output_schema=DocumentSummary,
    run=summarize_document,
    report=report,
)
