"""The registry of workflows: name -> version, schemas, the business function and its report."""

from __future__ import annotations

from quire.workflows import Workflow, document_summary, invoice_summary

WORKFLOWS: dict[str, Workflow] = {wf.name: wf for wf in (document_summary.WORKFLOW, invoice_summary.WORKFLOW)}


def get_workflow(name: str) -> Workflow:
    """The workflow called `name`; KeyError when there is none."""
    return WORKFLOWS[name]
