"""API keys of the HTTP service, stored only as hashes in Redis.

A key reads ``mck_<id>_<secret>``: ``id`` (12 hex) finds the record, the SHA-256 of the
whole key must match the stored hash. The secret has 192 random bits, so a fast hash is
enough (nothing to brute-force, unlike a password), and the plain key is shown once, at
creation, never stored.

Keys (outside every namespace, so erasing a namespace never touches them)::

    mc:apikeys        HASH   key id -> JSON {id, name, role, scopes, created_at, hash}
    mc:apikeys:rev    STRING revision token, replaced by every revocation: a server that
                             caches verified keys compares it before acting on a cached one
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from dataclasses import asdict, dataclass
from datetime import datetime
from enum import StrEnum

import redis

from memcore.core.models import as_utc, utcnow

API_KEYS = "mc:apikeys"
API_KEYS_REV = "mc:apikeys:rev"
PREFIX = "mck_"
_KEY_RE = re.compile(r"^mck_([0-9a-f]{12})_([0-9a-f]{48})$")
# A scope is a namespace glob: the namespace alphabet plus '*' and '?'.
SCOPE_RE = re.compile(r"^[A-Za-z0-9_.@*?-]{1,128}$")
MAX_SCOPES = 64
MAX_NAME = 128


class ApiRole(StrEnum):
    """What a key may do inside its scopes; each role includes the ones before it."""

    READ = "read"
    WRITE = "write"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        """0 for read, 1 for write, 2 for admin."""
        return list(ApiRole).index(self)


@dataclass(frozen=True)
class ApiKey:
    """A stored key: everything but the secret."""

    id: str
    name: str
    role: ApiRole
    scopes: tuple[str, ...]
    created_at: datetime

    def public(self) -> dict[str, object]:
        """JSON-able view (no hash, no secret)."""
        out = asdict(self)
        out["role"] = self.role.value
        out["scopes"] = list(self.scopes)
        out["created_at"] = self.created_at.isoformat()
        return out


def validate_scope(pattern: str) -> str:
    """Return ``pattern`` if it is a legal scope (a namespace glob), else raise ValueError."""
    if not isinstance(pattern, str) or not SCOPE_RE.fullmatch(pattern):
        raise ValueError(f"scope {pattern!r}: use 1-128 letters, digits, '-', '_', '.', '@' "
                         "and the wildcards '*' and '?'")
    return pattern


def digest(key: str) -> str:
    """SHA-256 hex of a plain key."""
    return hashlib.sha256(key.encode()).hexdigest()


class ApiKeyRepository:
    """Create, list, revoke and verify API keys."""

    def __init__(self, client: redis.Redis) -> None:
        self._r = client

    def create(self, scopes: list[str], role: ApiRole | str, name: str = "",
               now: datetime | None = None) -> tuple[ApiKey, str]:
        """Store a new key; returns its record and the plain key (shown once)."""
        if not scopes:
            raise ValueError("scopes: at least one scope is required")
        if len(scopes) > MAX_SCOPES:
            raise ValueError(f"scopes: at most {MAX_SCOPES}")
        for pattern in scopes:
            validate_scope(pattern)
        try:
            role = ApiRole(role)
        except ValueError:
            raise ValueError(f"role {role!r}: use read, write or admin") from None
        if len(name) > MAX_NAME or any(ord(c) < 32 for c in name):
            raise ValueError(f"name: at most {MAX_NAME} printable characters")
        key_id = secrets.token_hex(6)
        plain = f"{PREFIX}{key_id}_{secrets.token_hex(24)}"
        record = ApiKey(key_id, name, role, tuple(dict.fromkeys(scopes)),
                        as_utc(now) if now else utcnow())
        body = {**record.public(), "hash": digest(plain)}
        if not self._r.hsetnx(API_KEYS, key_id, json.dumps(body)):  # 48 bits: never in practice
            raise RuntimeError("key id collision; try again")
        return record, plain

    def list(self) -> list[ApiKey]:
        """Every key, oldest first."""
        keys = [self._decode(raw) for raw in self._r.hvals(API_KEYS)]
        return sorted(keys, key=lambda k: (k.created_at, k.id))

    def revoke(self, key_id: str) -> bool:
        """Delete a key; True if it existed. Takes effect on the next request, also in
        servers that cache verified keys: the revision token is replaced after the
        delete (in this order: a reader reads the revision before the record, so a
        record it read before the delete is cached under a revision that no longer
        holds; the two keys may live on different cluster nodes, hence no MULTI)."""
        removed = bool(self._r.hdel(API_KEYS, key_id))
        if removed:
            self._r.set(API_KEYS_REV, secrets.token_hex(8))
        return removed

    def revision(self) -> str:
        """The current revision token (see :meth:`revoke`); created when missing, so a
        flushed or restored database (no token) never matches a token cached before."""
        raw = self._r.get(API_KEYS_REV)
        if raw is None:
            self._r.set(API_KEYS_REV, secrets.token_hex(8), nx=True)
            raw = self._r.get(API_KEYS_REV)
        return raw.decode() if isinstance(raw, bytes) else str(raw)

    def verify(self, plain: str) -> ApiKey | None:
        """The key's record if ``plain`` is a valid, unrevoked key; else None."""
        match = _KEY_RE.fullmatch(plain)
        if match is None:
            return None
        raw = self._r.hget(API_KEYS, match.group(1))
        if raw is None:
            return None
        stored = json.loads(raw)
        if not hmac.compare_digest(str(stored["hash"]), digest(plain)):
            return None
        return self._decode(raw)

    @staticmethod
    def _decode(raw: bytes | str) -> ApiKey:
        data = json.loads(raw)
        return ApiKey(id=data["id"], name=data["name"], role=ApiRole(data["role"]),
                      scopes=tuple(data["scopes"]),
                      created_at=as_utc(datetime.fromisoformat(data["created_at"])))
