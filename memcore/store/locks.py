"""Redis locks with a TTL that is renewed while the holder works.

A crashed holder releases the lock by expiry; release and renewal only act when
the caller still owns the lock (compare-and-delete in one script).
"""

from __future__ import annotations

import threading
import uuid
from types import TracebackType

import redis

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""


class LockLost(RuntimeError):
    """The lock expired or was taken by someone else."""


class RenewedLock:
    """A lock on ``key`` held by ``token`` for ``ttl`` seconds, renewed in the background."""

    def __init__(self, client: redis.Redis, key: str, ttl: float = 60.0,
                 token: str | None = None) -> None:
        self.client = client
        self.key = key
        self.ttl = ttl
        self.token = token or uuid.uuid4().hex
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def acquire(self) -> bool:
        """Take the lock if free; True on success."""
        return bool(self.client.set(self.key, self.token, nx=True, px=int(self.ttl * 1000)))

    def renew(self) -> bool:
        """Extend the TTL if still held; False if the lock was lost."""
        return bool(self.client.eval(_RENEW, 1, self.key, self.token, int(self.ttl * 1000)))

    def release(self) -> bool:
        """Release if still held."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        return bool(self.client.eval(_RELEASE, 1, self.key, self.token))

    def stop_renewing(self) -> None:
        """Stop the background renewal but keep the lock (another task renews it next)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._thread = None
        self._stop = threading.Event()

    def start_renewing(self) -> None:
        """Renew every ttl/3 seconds until released."""
        def loop() -> None:
            while not self._stop.wait(self.ttl / 3):
                try:
                    if not self.renew():
                        return
                except redis.RedisError:
                    continue
        self._thread = threading.Thread(target=loop, name=f"renew:{self.key}", daemon=True)
        self._thread.start()

    def __enter__(self) -> RenewedLock:
        if not self.acquire():
            raise LockLost(f"{self.key} is held by another process")
        self.start_renewing()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
