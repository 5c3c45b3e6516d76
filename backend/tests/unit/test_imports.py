"""Importing the package does nothing but define, and its imports form layers without cycles.

Both checks read the package as it is on disk, so a new module is checked the day it is added.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "quire"
# Entry points and Alembic's scripts run when loaded, by design: `python -m quire` runs the CLI,
# and Alembic executes env.py and each revision itself.
NOT_IMPORTED = ("quire.__main__", "quire.migrations.env", "quire.migrations.versions.")

# Lower layers never import higher ones (docs/architecture.md, "Layers").
LAYERS: list[tuple[str, ...]] = [
    (
        "quire",
        "quire.settings",
        "quire.errors",
        "quire.views",
        "quire.logs",
        "quire.db",
        "quire.metrics",
        "quire.processors",
        "quire.migrations",
    ),
    ("quire.documents", "quire.workflows", "quire.accounts"),
    ("quire.jobs", "quire.queue", "quire.webhooks"),
    ("quire.bootstrap",),
    # Entry points: the web app, the CLI, the worker process and its supervisor.
    (
        "quire.web",
        "quire.app",
        "quire.cli",
        "quire.commands",
        "quire.__main__",
        "quire.queue.worker",
        "quire.queue.supervisor",
    ),
]


def _modules() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if not name.startswith(NOT_IMPORTED) and name != "quire.migrations.versions":
            names.append(name)
    return names


_PROBE = """
import json, os, sys, threading

sys.dont_write_bytecode = True
seen = []
WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND


def audit(event, args):
    if event == "socket.connect" or event == "os.putenv" or event == "os.mkdir":
        seen.append(f"{event} {args[0]!r}")
    elif event == "open":
        path, mode, flags = args
        writes = any(c in mode for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & WRITE)
        if writes:
            seen.append(f"open for writing {path!r}")


environ = dict(os.environ)
threads = threading.active_count()
sys.addaudithook(audit)
for name in json.loads(sys.argv[1]):
    before = len(seen)
    __import__(name)
    seen[before:] = [f"{name}: {what}" for what in seen[before:]]
if dict(os.environ) != environ:
    seen.append(f"environment changed: {sorted(set(os.environ) ^ set(environ))}")
if threading.active_count() != threads:
    seen.append(f"threads started: {[t.name for t in threading.enumerate()]}")
print(json.dumps(seen))
"""


def test_importing_every_module_does_nothing(tmp_path: Path) -> None:
    # A fresh interpreter with no Quire setting, in an empty directory.
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(_modules())],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PACKAGE.parent)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
    assert list(tmp_path.iterdir()) == []


def _imports(name: str) -> set[str]:
    path = PACKAGE.parent / Path(*name.split("."))
    source = (path / "__init__.py") if path.is_dir() else path.with_suffix(".py")
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {m for m in found if m.startswith("quire.") or m == "quire"}


def _graph() -> dict[str, set[str]]:
    modules = set(_modules()) | {"quire.__main__"}
    # `from quire.jobs import states` names the module quire.jobs.states; keep only real modules.
    return {name: {m for m in _imports(name) if m in modules and m != name} for name in modules}


def _layer(name: str) -> int:
    """The layer of the longest prefix naming `name` (quire.queue.worker is an entry point)."""
    matches = [
        (len(prefix), level)
        for level, prefixes in enumerate(LAYERS)
        for prefix in prefixes
        if name == prefix or (prefix != "quire" and name.startswith(prefix + "."))
    ]
    assert matches, f"{name} belongs to no layer: add it to LAYERS"
    return max(matches)[1]


def test_no_module_imports_from_a_layer_above_it() -> None:
    upward = [
        f"{name} -> {target}"
        for name, targets in _graph().items()
        for target in targets
        if _layer(target) > _layer(name)
    ]
    assert upward == []


def test_the_import_graph_has_no_cycles() -> None:
    graph = _graph()
    # Packages' __init__ modules import nothing of their children here; a cycle is a real one.
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target] if target in path else [name, target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


# Where a process's settings, database and storage are made (docs/architecture.md, "One bootstrap,
# nothing on import"):
# everything else is handed them.
MADE_ONLY_BY = {
    # The environment read: the CLI's group, the app factory (each uvicorn process), the bootstrap's
    # default, an isolated attempt's process, and uvicorn's protocol (which uvicorn builds itself).
    "Settings": {"quire.cli", "quire.app", "quire.bootstrap", "quire.queue.isolation", "quire.web.server"},
    "open_database": {
        "quire.bootstrap",
        "quire.queue.isolation",
        "quire.commands.jobs",
        "quire.commands.people",
        "quire.commands.serve",
    },
    "configured_storage": {"quire.bootstrap", "quire.queue.isolation"},
}


def test_settings_database_and_storage_are_made_at_the_entry_points_and_handed_on() -> None:
    made: dict[str, set[str]] = {name: set() for name in MADE_ONLY_BY}
    for name in _modules():
        path = PACKAGE.parent / (name.replace(".", "/") + ".py")
        if not path.exists():
            path = PACKAGE.parent / name.replace(".", "/") / "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in made:
                made[node.func.id].add(name)
    assert made == MADE_ONLY_BY
