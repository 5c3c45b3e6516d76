"""One cursor codec: a cursor round-trips, and anything else is refused the same way everywhere."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend.tests.unit.test_states import force, make_job
from quire.db import Database
from quire.jobs import operations, store
from quire.jobs.models import utcnow
from quire.jobs.paging import InvalidCursor, decode_cursor, encode_cursor
from quire.settings import Settings


@pytest.mark.parametrize("cursor", ["not base64!", "bm90IGEgY3Vyc29y", "", "fA=="])
def test_a_cursor_quire_did_not_make_is_refused(cursor: str) -> None:
    with pytest.raises(InvalidCursor):
        decode_cursor(cursor)


def test_both_lists_page_the_same_way_and_refuse_the_same_cursor(settings: Settings, db: Database) -> None:
    jobs = [make_job(db) for _ in range(3)]
    for age, job in enumerate(jobs):
        force(db, job.id, owner_id=None, created_at=utcnow() - timedelta(minutes=age))
    first = store.list_jobs(settings, db, None, every_owner=True, limit=2)
    items, cursor = operations.search(db, operations.JobFilter(), limit=2)
    assert first.next_cursor == cursor
    assert [i.job_id for i in first.items] == [i.job_id for i in items] == [jobs[0].id, jobs[1].id]
    assert [i.job_id for i in store.list_jobs(settings, db, None, every_owner=True, cursor=cursor).items] == [
        jobs[2].id
    ]
    assert decode_cursor(cursor or "")[1] == jobs[1].id
    assert encode_cursor(store.get_job(db, jobs[1].id)) == cursor  # type: ignore[arg-type]
    with pytest.raises(InvalidCursor):
        store.list_jobs(settings, db, None, every_owner=True, cursor="garbage")
    with pytest.raises(InvalidCursor):
        operations.search(db, operations.JobFilter(), cursor="garbage")
