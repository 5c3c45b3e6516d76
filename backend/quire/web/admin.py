"""Operator pages under /admin: overview, dead letters by fingerprint, job search and history,
replay (one job, or a whole group at a chosen rate, recorded for workers to carry out), cancel and
purge. Admins only; for anyone else every /admin path is a 404."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Annotated, Any

import msgspec
from anyio import to_thread
from litestar import Controller, Request, get, post
from litestar.connection import ASGIConnection
from litestar.exceptions import ClientException, NotFoundException
from litestar.handlers import BaseRouteHandler
from litestar.params import FromPath, Parameter
from litestar.response import Redirect, Stream, Template

from quire.accounts.service import Principal
from quire.db import moment
from quire.jobs import operations, replays, service, store
from quire.jobs.models import JobStatus
from quire.jobs.paging import InvalidCursor
from quire.web.api import artifact_file
from quire.web.deps import DbDep, QuireDep, SettingsDep, StorageDep
from quire.web.links import OperatorJobOut, operator_out
from quire.web.presenters import ERROR_LABELS, EVENT_LABELS, STATUS_LABELS
from quire.workflows.registry import WORKFLOWS

AdminRequest = Request[Principal, Any, Any]
# Errors caused by the document itself: no replay can change the outcome.
REJECTED_ERRORS = frozenset({"invalid_input"})
Text = Annotated[str | None, Parameter(required=False, max_length=200)]


def admins_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    user = connection.scope.get("user")
    if not (isinstance(user, Principal) and user.is_admin):
        raise NotFoundException()


def _date(value: str | None) -> datetime | None:
    """A search's date (UTC unless it says otherwise), or None for an empty field; a page that says so for anything
    else, rather than a search that quietly leaves the date out."""
    if not value:
        return None
    try:
        return moment(value)
    except ValueError as exc:
        raise ClientException(f"{value[:40]!r} is not a date: write it as YYYY-MM-DD.") from exc


class AdminController(Controller):
    path = "/admin"
    guards = [admins_only]
    include_in_schema = False

    @get("/", sync_to_thread=True)
    def overview(self, settings: SettingsDep, db: DbDep) -> Template:
        figures = operations.overview(db, heartbeat_window_s=settings.lease_seconds)
        return Template("admin/overview.html", context={"o": figures, "status_labels": STATUS_LABELS})

    @get("/dead-letters", sync_to_thread=True)
    def dead_letters(self, db: DbDep) -> Template:
        """System failures (a replay can finish them once the cause is fixed) apart from rejected
        documents (`invalid_input`: the file itself is the problem, so no replay is offered)."""
        groups = operations.dead_letter_groups(db)
        failures = [g for g in groups if g.fingerprint.error not in REJECTED_ERRORS]
        rejected = [g for g in groups if g.fingerprint.error in REJECTED_ERRORS]
        context = {"failures": failures, "rejected": rejected, "replays": replays.recent(db)}
        return Template("admin/dead_letters.html", context=context)

    @post("/dead-letters/replay", status_code=200)
    async def replay_group(self, db: DbDep, request: AdminRequest) -> Template | Redirect:
        form = await _form(request)
        error, workflow, version = form.get("error", ""), form.get("workflow", ""), form.get("workflow_version", "")
        try:
            rate = max(0.1, min(100.0, float(form.get("rate") or "1")))
        except ValueError:
            rate = 1.0
        if error in REJECTED_ERRORS:
            raise NotFoundException("Rejected documents cannot be replayed.")
        if form.get("confirm") != "yes":
            count = await to_thread.run_sync(replays.group_size, db, error, workflow or None, version or None)
            context = {"count": count, "error": error, "workflow": workflow, "version": version, "rate": rate}
            return Template("admin/confirm_replay.html", context=context)
        # Recorded, not run here: workers carry it out, and it survives restarts of this process.
        replay = await to_thread.run_sync(
            replays.start, db, error, workflow or None, version or None, rate, request.user.email
        )
        return Redirect(f"/admin/dead-letters#replay-{replay.id}", status_code=303)

    @post("/replays/{replay_id:str}/stop", sync_to_thread=True, status_code=303)
    def stop_replay(self, db: DbDep, replay_id: FromPath[str]) -> Redirect:
        replays.stop(db, replay_id)
        return Redirect(f"/admin/dead-letters#replay-{replay_id}", status_code=303)

    @get("/jobs", sync_to_thread=True)
    def jobs(
        self,
        db: DbDep,
        job_id: Text = None,
        email: Text = None,
        workflow: Text = None,
        status: Text = None,
        error: Text = None,
        created_from: Text = None,
        created_to: Text = None,
        cursor: Text = None,
    ) -> Template:
        flt = operations.JobFilter(
            job_id=job_id or None,
            email=email or None,
            workflow=workflow or None,
            status=JobStatus(status) if status in set(JobStatus) else None,
            error=error or None,
            created_from=_date(created_from),
            created_to=_date(created_to),
        )
        try:
            items, next_cursor = operations.search(db, flt, cursor=cursor)
        except InvalidCursor as exc:
            raise ClientException(str(exc)) from exc
        query = {k: v for k, v in {
            "job_id": job_id, "email": email, "workflow": workflow, "status": status, "error": error,
            "created_from": created_from, "created_to": created_to,
        }.items() if v}  # fmt: skip
        context = {
            "items": items,
            "next_cursor": next_cursor,
            "query": query,
            "status_labels": STATUS_LABELS,
            # Chosen from lists, by the names people read: a typed code name found nothing unless exact.
            "workflows": list(WORKFLOWS.values()),
            "error_labels": ERROR_LABELS,
        }
        return Template("admin/jobs.html", context=context)

    @get("/jobs/{job_id:str}", sync_to_thread=True)
    def job(self, job_id: FromPath[str], quire: QuireDep) -> Template:
        view = store.view_of(quire.settings, quire.db, job_id, recent=quire.recent_views)
        if view is None:
            raise NotFoundException("No such job.")
        context = {
            **msgspec.structs.asdict(
                operator_out(view, operations.history(quire.db, job_id), store.evidence_of(quire.db, job_id))
            ),
            "event_labels": EVENT_LABELS,
            "status_labels": STATUS_LABELS,
        }
        return Template("admin/job.html", context=context)

    @get("/jobs/{job_id:str}/detail", sync_to_thread=True, include_in_schema=True)
    def job_detail(self, job_id: FromPath[str], quire: QuireDep) -> OperatorJobOut:
        """The operator's view of a job as JSON: the owner's view, the history with the operator
        detail, and the evidence files. The one JSON route under /admin, so the one in /schema
        (admins only: for anyone else it is a 404 like the rest of /admin)."""
        view = store.view_of(quire.settings, quire.db, job_id, recent=quire.recent_views)
        if view is None:
            raise NotFoundException("No such job.")
        return operator_out(view, operations.history(quire.db, job_id), store.evidence_of(quire.db, job_id))

    @get("/jobs/{job_id:str}/evidence/{name:str}", sync_to_thread=True)
    def evidence(
        self,
        settings: SettingsDep,
        storage: StorageDep,
        db: DbDep,
        job_id: FromPath[str],
        name: Annotated[str, Parameter(max_length=128)],
    ) -> Stream | Redirect:
        """An operator-only file of a job: the raw answer of a malformed attempt."""
        return artifact_file(settings, storage, store.get_artifact(db, job_id, name, operator=True))

    @post("/jobs/{job_id:str}/replay", sync_to_thread=True, status_code=303)
    def replay(self, job_id: FromPath[str], quire: QuireDep) -> Redirect:
        with contextlib.suppress(service.NotAllowed):  # the page shows where the job is
            service.replay(quire.settings, quire.db, quire.dispatcher, job_id)
        return Redirect(f"/admin/jobs/{job_id}", status_code=303)

    @post("/jobs/{job_id:str}/cancel", sync_to_thread=True, status_code=303)
    def cancel(self, job_id: FromPath[str], quire: QuireDep) -> Redirect:
        with contextlib.suppress(service.NotAllowed):
            service.cancel(quire.settings, quire.db, quire.dispatcher, job_id)
        return Redirect(f"/admin/jobs/{job_id}", status_code=303)

    @post("/jobs/{job_id:str}/purge", status_code=200)
    async def purge(self, request: AdminRequest, job_id: FromPath[str], quire: QuireDep) -> Template | Redirect:
        if (await _form(request)).get("confirm") != "yes":
            return Template("admin/confirm_purge.html", context={"job_id": job_id})
        await to_thread.run_sync(service.delete, quire.settings, quire.storage, quire.db, quire.dispatcher, job_id)
        return Redirect("/admin/jobs", status_code=303)


async def _form(request: AdminRequest) -> dict[str, str]:
    form = await request.form()
    return {key: str(value) for key, value in form.items()}
