"""Accounts from the command line: `quire users`, `quire tokens` and `quire webhooks`."""

from __future__ import annotations

import sys

import click

from quire.accounts import service as accounts
from quire.db import open_database
from quire.settings import Settings


@click.group()
def users() -> None:
    """Manage accounts."""


@users.command("create")
@click.argument("email")
@click.option("--admin", is_flag=True, help="Give the account the admin role.")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@click.pass_obj
def users_create(settings: Settings, email: str, admin: bool, password_stdin: bool) -> None:
    """Create an account."""
    db = open_database(settings)
    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        principal = accounts.create_user(db, email, password, is_admin=admin)
    except accounts.AccountError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"created {principal.email}{' (admin)' if principal.is_admin else ''}")


@click.group()
def tokens() -> None:
    """Manage API tokens."""


@tokens.command("create")
@click.argument("email")
@click.option("--name", default="cli", show_default=True)
@click.pass_obj
def tokens_create(settings: Settings, email: str, name: str) -> None:
    """Create an API token for EMAIL and print it (shown once)."""
    db = open_database(settings)
    principal = accounts.user_by_email(db, email)
    if principal is None:
        raise click.ClickException(f"no account {email}")
    _, secret = accounts.create_token(db, principal.user_id, name)
    click.echo(secret)


@click.group()
def webhooks() -> None:
    """Webhook signing secrets."""


@webhooks.command("secret")
@click.argument("email")
@click.pass_obj
def webhooks_secret(settings: Settings, email: str) -> None:
    """Rotate EMAIL's webhook signing secret and print the new one (whsec_...).

    Deliveries attempted from now on are signed with the new secret alone.
    """
    db = open_database(settings)
    principal = accounts.user_by_email(db, email)
    if principal is None:
        raise click.ClickException(f"no account {email}")
    click.echo(accounts.rotate_webhook_secret(db, principal.user_id))
