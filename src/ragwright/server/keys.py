"""API keys: random bearer tokens of which only a hash is kept, each with a name and a scope.

A key is ``rw_`` followed by 43 URL-safe characters (256 random bits). Being that random, a
plain sha256 is enough to store it safely (slow, salted hashes exist for guessable passwords);
the check compares digests in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from ragwright.permissions import EVERYONE, Caller

KEY_PREFIX = "rw_"
HASH_PREFIX = "sha256:"
#: Key names appear in logs and TOML table names: keep them plain.
KEY_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class Scope(StrEnum):
    """What a key may do. ``write`` (upload, delete) implies ``read`` (search, ask, fetch)."""

    READ = "read"
    WRITE = "write"

    def allows(self, required: Scope) -> bool:
        return self is Scope.WRITE or required is Scope.READ


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A configured key: its name, scope, the hash of its secret and the principals it acts
    as (None: unrestricted, it reads every document; see `ragwright.permissions`)."""

    name: str
    scope: Scope
    digest: str  # "sha256:<hex>"
    principals: tuple[str, ...] | None = None

    @property
    def caller(self) -> Caller:
        return EVERYONE if self.principals is None else Caller.of(*self.principals)


def new_secret() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def digest_of(secret: str) -> str:
    return HASH_PREFIX + hashlib.sha256(secret.encode("utf-8")).hexdigest()


def find_key(keys: Iterable[ApiKey], secret: str) -> ApiKey | None:
    """The key whose hash matches ``secret``. Every key is compared (constant time each), so
    the time taken does not tell which one nearly matched."""
    presented = digest_of(secret)
    found = None
    for key in keys:
        if hmac.compare_digest(presented.encode(), key.digest.encode()):
            found = key
    return found
