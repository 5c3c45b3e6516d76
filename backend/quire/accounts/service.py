"""Creating users, checking passwords, issuing and revoking API tokens."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import String, bindparam, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select
from sqlmodel.sql.expression import Select

from quire.accounts.models import ApiToken, User
from quire.db import Database, utcnow

# argon2-cffi's defaults are Argon2id with the RFC 9106 low-memory parameters.
_hasher = PasswordHasher()


@cache
def _dummy_hash() -> str:
    """Verifying against this keeps a login for an unknown email as slow as one for a known email.
    Made on first use: hashing costs every process that imports this module (the CLI too) a while."""
    return _hasher.hash(secrets.token_urlsafe(16))


TOKEN_PREFIX = "qt_"  # noqa: S105 - a marker, not a secret
# Standard Webhooks secrets: `whsec_` and base64 of at least 24 random bytes (32 here).
WEBHOOK_SECRET_PREFIX = "whsec_"  # noqa: S105 - a marker, not a secret
WEBHOOK_SECRET_BYTES = 32
MIN_PASSWORD = 10


class AccountError(Exception):
    """A request about an account that cannot be honoured; the message is safe to show."""


class WrongPassword(AccountError):
    """The password given as the current one is not it (counted against the sign-in budget)."""


class EmailTaken(AccountError):
    """An account with this email exists. Only operators (the CLI) are told; sign-up does not say."""


@dataclass(frozen=True)
class Principal:
    """Who is asking: what every scoped read and write is checked against."""

    user_id: str
    email: str
    is_admin: bool


def normalise_email(email: str) -> str:
    return email.strip().lower()


def _principal(user: User) -> Principal:
    return Principal(user.id, user.email, user.is_admin)


def create_user(db: Database, email: str, password: str, is_admin: bool = False) -> Principal:
    email = normalise_email(email)
    if "@" not in email or len(email) > 320:
        raise AccountError("Enter a valid email address.")
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"Choose a password of at least {MIN_PASSWORD} characters.")
    # Hashed before the insert is tried, so a taken email costs the same time as a new one.
    user = User(email=email, password_hash=_hasher.hash(password), is_admin=is_admin)
    try:
        with db.session() as session:
            session.add(user)
    except IntegrityError as exc:
        raise EmailTaken("An account with this email already exists.") from exc
    return _principal(user)


def count_users(db: Database) -> int:
    with db.session() as session:
        return int(session.exec(select(func.count()).select_from(User)).one())


def authenticate(db: Database, email: str, password: str) -> Principal | None:
    """The user with this email and password, or None; as slow either way."""
    with db.session() as session:
        user = session.exec(select(User).where(User.email == normalise_email(email))).first()
    try:
        _hasher.verify(user.password_hash if user else _dummy_hash(), password)
    except (VerificationError, InvalidHashError):
        return None
    return _principal(user) if user else None


def password_stamp(password_hash: str) -> str:
    """A short fingerprint of the password hash, kept in a browser session: when the password
    changes, every session holding the old stamp stops being signed in."""
    return hashlib.sha256(password_hash.encode()).hexdigest()[:32]


def session_principal(db: Database, user_id: str, stamp: str, session: Session | None = None) -> Principal | None:
    """The signed-in user of a browser session, unless the password changed since it began (read
    in `session` when given)."""
    if session is None:
        with db.session() as own:
            return session_principal(db, user_id, stamp, own)
    user = session.get(User, user_id)
    if user is None or not secrets.compare_digest(password_stamp(user.password_hash), stamp):
        return None
    return _principal(user)


def stamp_for(db: Database, user_id: str) -> str:
    with db.session() as session:
        user = session.get(User, user_id)
        return password_stamp(user.password_hash) if user else ""


def change_password(db: Database, user_id: str, current: str, new: str) -> str:
    """Set a new password; returns the new session stamp (every other session is signed out)."""
    with db.session() as session:
        user = session.get(User, user_id)
        if user is None:
            raise AccountError("No such account.")
        try:
            _hasher.verify(user.password_hash, current)
        except (VerificationError, InvalidHashError) as exc:
            raise WrongPassword("The current password is not right.") from exc
        if len(new) < MIN_PASSWORD:
            raise AccountError(f"Choose a password of at least {MIN_PASSWORD} characters.")
        user.password_hash = _hasher.hash(new)
        user.password_changed_at = utcnow()
        session.add(user)
        return password_stamp(user.password_hash)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(db: Database, user_id: str, name: str) -> tuple[ApiToken, str]:
    """A new API token; the secret is returned once and only its hash is stored."""
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(
        user_id=user_id, name=name.strip()[:100] or "token", token_hash=_digest(secret), prefix=secret[:10]
    )
    with db.session() as session:
        session.add(token)
    return token, secret


def list_tokens(db: Database, user_id: str) -> list[ApiToken]:
    with db.session() as session:
        return list(
            session.exec(
                select(ApiToken)
                .where(ApiToken.user_id == user_id, col(ApiToken.revoked_at).is_(None))
                .order_by(col(ApiToken.created_at).desc())
            ).all()
        )


def revoke_token(db: Database, user_id: str, token_id: str) -> bool:
    with db.session() as session:
        token = session.get(ApiToken, token_id)
        if token is None or token.user_id != user_id or token.revoked_at is not None:
            return False
        token.revoked_at = utcnow()
        session.add(token)
        return True


def revoke_all_tokens(db: Database, user_id: str) -> int:
    """Revoke every live token of a person (offered with a password change)."""
    with db.session() as session:
        result = session.execute(
            update(ApiToken)
            .where(col(ApiToken.user_id) == user_id, col(ApiToken.revoked_at).is_(None))
            .values(revoked_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        return int(getattr(result, "rowcount", 0) or 0)


def principal_for_token(db: Database, secret: str, session: Session | None = None) -> Principal | None:
    """The owner of a live token; a revoked token stops working at once (read in `session` when
    given)."""
    if not secret.startswith(TOKEN_PREFIX):
        return None
    if session is None:
        with db.session() as own:
            return principal_for_token(db, secret, own)
    # Through the connection: an ORM execution of these three columns cost twice the query.
    row = session.connection().execute(_token_owner(), {"token_hash": _digest(secret)}).first()
    return Principal(*row) if row else None


@cache
def _token_owner() -> Select[str, str, bool]:
    """Runs on every API request, so it reads the three columns a Principal needs, not two whole
    rows, and is built once per process rather than per request."""
    return (
        select(col(User.id), col(User.email), col(User.is_admin))
        .join(ApiToken, col(ApiToken.user_id) == col(User.id))
        .where(col(ApiToken.token_hash) == bindparam("token_hash", type_=String()), col(ApiToken.revoked_at).is_(None))
    )


def user_by_email(db: Database, email: str) -> Principal | None:
    with db.session() as session:
        user = session.exec(select(User).where(User.email == normalise_email(email))).first()
        return _principal(user) if user else None


def new_webhook_secret() -> str:
    return WEBHOOK_SECRET_PREFIX + base64.b64encode(secrets.token_bytes(WEBHOOK_SECRET_BYTES)).decode()


def webhook_secret(db: Database, user_id: str) -> str | None:
    """The account's signing secret, made on first use (one writer wins); None for no account."""
    with db.session() as session:
        session.execute(
            update(User)
            .where(col(User.id) == user_id, col(User.webhook_secret).is_(None))
            .values(webhook_secret=new_webhook_secret())
        )
        return session.exec(select(User.webhook_secret).where(User.id == user_id)).first()


def rotate_webhook_secret(db: Database, user_id: str) -> str:
    """A new signing secret: every delivery attempted from now on is signed with it alone."""
    secret = new_webhook_secret()
    with db.session() as session:
        session.execute(update(User).where(col(User.id) == user_id).values(webhook_secret=secret))
    return secret


def default_webhook_url(db: Database, user_id: str, session: Session | None = None) -> str | None:
    """Where this account's jobs without a callback_url of their own are reported (read in
    `session` when given: inside the caller's transaction)."""
    query = select(User.webhook_url).where(User.id == user_id)
    if session is not None:
        return session.exec(query).first()
    with db.session() as own:
        return own.exec(query).first()


def set_default_webhook_url(db: Database, user_id: str, url: str | None) -> None:
    with db.session() as session:
        session.execute(update(User).where(col(User.id) == user_id).values(webhook_url=url or None))
