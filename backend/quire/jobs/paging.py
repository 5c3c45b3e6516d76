"""Keyset paging over jobs, newest first on (created_at, id): one cursor codec for every list."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime

from sqlalchemy import ColumnElement, tuple_
from sqlmodel import col

from quire.jobs.models import Job


class InvalidCursor(ValueError):
    """A cursor that no list of Quire's made; the caller should start again without it."""


def encode_cursor(job: Job) -> str:
    return base64.urlsafe_b64encode(f"{job.created_at.isoformat()}|{job.id}".encode()).decode()


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        created, job_id = base64.urlsafe_b64decode(cursor.encode()).decode().split("|", 1)
        return datetime.fromisoformat(created), job_id
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise InvalidCursor("The cursor is not valid; start again without it.") from exc


# Newest first; (created_at, id) is unique, so a page boundary never splits or repeats a job.
NEWEST_FIRST = (col(Job.created_at).desc(), col(Job.id).desc())


def older_than(cursor: str) -> ColumnElement[bool]:
    """The jobs after the one `cursor` names, in NEWEST_FIRST order."""
    created, job_id = decode_cursor(cursor)
    return tuple_(col(Job.created_at), col(Job.id)) < tuple_(created, job_id)
