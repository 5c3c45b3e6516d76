"""Sign-up costs the same for a taken email as for a new one: the password is hashed either way."""

from __future__ import annotations

import pytest
from argon2 import PasswordHasher

from quire.accounts import service
from quire.db import Database


class CountingHasher(PasswordHasher):
    def __init__(self) -> None:
        super().__init__()
        self.hashed = 0

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        self.hashed += 1
        return super().hash(password, salt=salt)


def test_a_taken_email_is_hashed_as_a_new_one_is(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an account, and a hasher that counts its work
    service.create_user(db, "taken@example.com", "a long enough password")
    hasher = CountingHasher()
    monkeypatch.setattr(service, "_hasher", hasher)
    # When someone signs up with the same email in another letter case
    with pytest.raises(service.EmailTaken):
        service.create_user(db, "Taken@Example.com", "another long password")
    # Then the password was hashed all the same (no shortcut that a stopwatch could tell apart)
    assert hasher.hashed == 1
    service.create_user(db, "new@example.com", "a long enough password")
    assert hasher.hashed == 2
