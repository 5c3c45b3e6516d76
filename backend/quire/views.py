"""The base of every read model: what the domain hands the web layer, the templates and the wire.

A view is an immutable msgspec Struct built by keyword. Litestar encodes it as it is and documents
its fields in `/schema` when it is a handler's return type; templates read its fields as
attributes; a cached view can be shared without a copy. A field that may be absent from the JSON
(rather than null) defaults to `msgspec.UNSET`.
"""

from __future__ import annotations

from typing import Any

import msgspec


class View(msgspec.Struct, frozen=True, kw_only=True):
    """A read model (docs/architecture.md, "The read side")."""


def plain(value: Any) -> Any:
    """A view (or a structure of views) as dicts, lists and strings, for `json` and the CLI."""
    return msgspec.to_builtins(value)
