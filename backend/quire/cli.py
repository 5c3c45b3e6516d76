"""The `quire` command: dev, web, worker, migrate, accounts and job operations.

Each group of commands lives in a module of its own under `commands/` and is imported only when
it runs (Click's lazily loaded subcommands): `quire users create` pays for the accounts, not for the web app,
the worker and the migrations. `quire --help` loads them all to describe them.
"""

from __future__ import annotations

import importlib

import click
from pydantic import ValidationError

from quire.logs import configure_logging
from quire.settings import Settings

COMMANDS = {
    "dev": "quire.commands.serve:dev",
    "web": "quire.commands.web:web",
    "worker": "quire.commands.worker:worker",
    "worker-process": "quire.commands.worker_process:worker_process",
    "migrate": "quire.commands.serve:migrate",
    "users": "quire.commands.people:users",
    "tokens": "quire.commands.people:tokens",
    "webhooks": "quire.commands.people:webhooks",
    "jobs": "quire.commands.jobs:jobs",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported when they are asked for (the pattern of Click's
    documentation, "Lazily Loading Subcommands")."""

    def __init__(self, *args: object, lazy_subcommands: dict[str, str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy_subcommands = lazy_subcommands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy_subcommands])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.lazy_subcommands:
            return super().get_command(ctx, cmd_name)
        module, _, name = self.lazy_subcommands[cmd_name].partition(":")
        command = getattr(importlib.import_module(module), name)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.lazy_subcommands[cmd_name]} is not a click command")
        return command


@click.group(cls=LazyGroup, lazy_subcommands=COMMANDS)
@click.pass_context
def main(context: click.Context) -> None:
    """Quire: queue-backed AI document workflows."""
    try:
        settings = Settings()
    except ValidationError as exc:
        # A settings mistake is the operator's to fix: say what is wrong, without a traceback.
        raise click.ClickException(
            "; ".join(str(error["msg"]).removeprefix("Value error, ") for error in exc.errors())
        ) from None
    configure_logging(settings)
    # The settings, read once here, are what every command runs on (`click.pass_obj`).
    context.obj = settings
