"""The dead-letter alert: a webhook called when one fingerprint (error code x workflow version)
dead-letters `threshold` jobs within a window. It fires once per crossing: the alert is raised
in `alert_state` and re-arms only after the count falls back under the threshold."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import delete, func
from sqlalchemy import select as sa_select
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from quire.db import Database
from quire.jobs.models import AlertState, EventType, Job, JobEvent, utcnow
from quire.jobs.store import iso
from quire.settings import Settings

log = logging.getLogger(__name__)


def dead_letters_in_window(db: Database, window_s: float) -> dict[str, dict[str, Any]]:
    since = utcnow() - timedelta(seconds=window_s)
    with db.session() as session:
        rows = session.execute(
            sa_select(col(JobEvent.error), col(Job.workflow), col(Job.workflow_version), func.count())
            .join(Job, col(Job.id) == col(JobEvent.job_id))
            .where(col(JobEvent.type) == EventType.DEAD_LETTER, col(JobEvent.at) >= since)
            .group_by(col(JobEvent.error), col(Job.workflow), col(Job.workflow_version))
        ).all()
    return {
        f"{error}:{workflow}@{version}": {"error": error, "workflow": workflow, "workflow_version": version, "count": n}
        for error, workflow, version, n in rows
    }


def check_dead_letter_alerts(db: Database, settings: Settings) -> list[str]:
    """Raise (and send) alerts for fingerprints over the threshold; re-arm those back under it."""
    if not settings.alert_webhook_url:
        return []
    counts = dead_letters_in_window(db, settings.alert_window_s)
    with db.session() as session:
        raised = {row.fingerprint for row in session.exec(select(AlertState)).all()}
    calm = [fp for fp in raised if counts.get(fp, {}).get("count", 0) < settings.alert_threshold]
    if calm:
        with db.session() as session:
            session.execute(delete(AlertState).where(col(AlertState.fingerprint).in_(calm)))
    fired = []
    for fingerprint, group in counts.items():
        if group["count"] < settings.alert_threshold or fingerprint in raised:
            continue
        try:
            with db.session() as session:  # the primary key makes one worker the sender
                session.add(AlertState(fingerprint=fingerprint, count=group["count"]))
        except IntegrityError:
            continue
        if _send(settings, fingerprint, group):
            fired.append(fingerprint)
        else:
            with db.session() as session:  # not delivered: try again on the next pass
                session.execute(delete(AlertState).where(col(AlertState.fingerprint) == fingerprint))
    return fired


def _send(settings: Settings, fingerprint: str, group: dict[str, Any]) -> bool:
    payload = {
        "alert": "dead_letters",
        "fingerprint": fingerprint,
        **group,
        "threshold": settings.alert_threshold,
        "window_s": settings.alert_window_s,
        "at": iso(utcnow()),
    }
    try:
        response = httpx.post(str(settings.alert_webhook_url), json=payload, timeout=5)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        log.warning("dead-letter alert for %s not delivered: %s", fingerprint, exc)
        return False
    log.warning("dead-letter alert sent: %s has %d dead letters", fingerprint, group["count"])
    return True
