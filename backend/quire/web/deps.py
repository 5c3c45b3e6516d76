"""What handlers are given by Litestar's dependency injection: the process's `Quire` application object,
and its database, storage and settings on their own."""

from __future__ import annotations

from typing import Any, cast

from litestar.connection import ASGIConnection
from litestar.di import NamedDependency

from quire.bootstrap import Quire
from quire.db import Database
from quire.documents.storage import Storage
from quire.settings import Settings
from quire.web.live import LiveHub

# `quire: QuireDep` in a handler's signature: the dispatcher, admission control, recent views,
# broker and metrics that the bootstrap built for this web process.
QuireDep = NamedDependency[Quire]
# `live: LiveDep`: this web process's subscription to job changes (streams, `Prefer: wait`).
LiveDep = NamedDependency[LiveHub]
# `db: DbDep` and `storage: StorageDep`: the database and the file store (`quire.db`, `quire.storage`).
DbDep = NamedDependency[Database]
StorageDep = NamedDependency[Storage]  # checked as `isinstance`: Storage is a runtime-checkable Protocol
# `settings: SettingsDep`: the settings the bootstrap was given (`quire.settings`).
SettingsDep = NamedDependency[Settings]


def quire_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Quire:
    """The app's `Quire`, for what gets no dependencies: middleware, exception handlers and
    before-request hooks (`create_app` keeps it in the app's state)."""
    return cast(Quire, connection.app.state["quire"])
