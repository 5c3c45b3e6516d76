"""Admission control: refuse while the oldest ready job waited too long, and never admit on a stale read."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend.tests.unit.test_states import force, make_job
from quire.db import Database
from quire.jobs import service
from quire.jobs.models import utcnow


def test_refuses_while_the_oldest_ready_job_waited_too_long(db: Database) -> None:
    admission = service.Admission(db, max_queue_age_s=10)
    admission.admit()  # an empty queue admits
    job = make_job(db)
    force(db, job.id, available_at=utcnow() - timedelta(seconds=30))
    admission.last_age = None
    with pytest.raises(service.Overloaded) as refused:
        admission.admit()
    assert 1 <= refused.value.retry_after_s <= 300
    # A refusal is never remembered: once the job is gone, the next submission is admitted.
    force(db, job.id, status="completed")
    admission.admit()


def test_a_recent_read_admits_only_while_its_bound_holds(db: Database) -> None:
    admission = service.Admission(db, max_queue_age_s=10)
    job = make_job(db)
    force(db, job.id, available_at=utcnow() - timedelta(seconds=30))
    # A read from 0.5 s ago that found the oldest job 2 s old bounds its age now by 2.5 s: admitted
    # without looking again, though the job in the database is older.
    admission.last_age = (service.time.monotonic() - 0.5, 2.0)
    admission.admit()
    # A read whose bound reaches the limit is checked again, and the database says refuse.
    admission.last_age = (service.time.monotonic() - 0.5, 9.8)
    with pytest.raises(service.Overloaded):
        admission.admit()
    # So is a read older than the recheck interval.
    admission.last_age = (service.time.monotonic() - service.ADMISSION_RECHECK_S, 0.0)
    with pytest.raises(service.Overloaded):
        admission.admit()
