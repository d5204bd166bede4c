"""Every Redis key memcore uses, in one place.

All keys of a namespace share the hash tag ``{<ns>}`` (``mc:{<ns>}:...``) so a
namespace lives in one Redis Cluster slot and multi-key transactions and scripts
work there. The only keys outside a namespace are the registry set
``mc:namespaces``, the API key hashes ``mc:apikeys`` (memcore.store.api_keys), the
usage totals ``mc:usage`` (memcore.store.usage), the ingest backlog ``mc:backlog``
and each namespace's erase fence ``mc:fence:{<ns>}``, erase count ``mc:erasures:{<ns>}``
and backlog ``mc:backlog:{<ns>}``
(same slot; outside ``mc:{<ns>}:*`` so erasing the namespace keeps them:
memcore.store.fences, memcore.store.backlog), and the API keys' rate limiter state
``mc:ratelimit:{<key id>}:*`` (memcore.store.rate_limits).
Namespaces and ids are validated before they reach a key.

Layout (``<v>`` is a snapshot version number, ``<id>`` a memory id)::

    mc:namespaces                  SET    every namespace with data
    mc:apikeys                     HASH   API key id -> role, scopes, SHA-256 (api_keys.py)
    mc:usage                       HASH   <operation>.<field> -> model usage, all namespaces
    mc:rewrite-pending             HASH   an erase's AOF rewrite / BGSAVE not yet done (rewrites.py)
    mc:erase-unfinished            ZSET   erases begun and not yet finished (unfinished.py)
    mc:fence:{ns}                  STRING how many times ns was erased whole (fences.py)
    mc:erasures:{ns}               STRING how many single erases ns had (erased.py)
    mc:backlog                     ZSET   ingest task id -> accepted at, until done (backlog.py)
    mc:backlog:{ns}                ZSET   the same, of one namespace (kept by an erase)
    mc:outbox:{tasks}              HASH   ingest task id -> its message, until done (backlog.py)
    mc:outbox:{tasks}:sent         ZSET   ingest task id -> when it was last sent
    mc:{ns}:current                STRING current version pointer (absent = 0)
    mc:{ns}:vseq                   STRING last version number handed out
    mc:{ns}:versions               ZSET   committed version -> created_at (epoch s)
    mc:{ns}:building               ZSET   version being written by a pass -> started
    mc:{ns}:m:<id>                 STRING one packed memory record, as of the current version
    mc:{ns}:h:<hash>               STRING content hash -> id of a live memory
    mc:{ns}:xs:<id>                SET    source ids <id> counts but no longer lists (unlisted.py)
    mc:{ns}:olen                   STRING length of the insertion-order log
    mc:{ns}:o:<chunk>              LIST   insertion-order log, ORDER_CHUNK ids per list
    mc:{ns}:stats                  HASH   status -> count
    mc:{ns}:gen                    STRING token replaced by erase, purge, rollback (caches)
    mc:{ns}:writes                 STRING count of committed record changes (caches)
    mc:{ns}:v<v>:meta              HASH   created_at, retired_at, memories, abandoned, index
    mc:{ns}:v<v>:undo              HASH   id -> packed record as of version v-1 ('' = absent)
    mc:{ns}:v<v>:s:<id>            STRING a record a pass building v staged ('' = erased)
    mc:{ns}:v<v>:staged            SET    ids staged by the pass building v
    mc:{ns}:v<v>:idx:<chunk>       STRING stored index blob, <= 64 MB per chunk

Records live once, in the current version's state; a pass stages only the records it
changes and its commit moves them in, keeping their previous bytes in ``v<v>:undo``
(so do the writes made while ``v`` is current): versions share unchanged records, and
rolling back applies the undo hashes newest first (notes/store.md).
    mc:{ns}:pass                   STRING token of the pass in progress (with a TTL)
    mc:{ns}:passdone:<id>          STRING a finished pass id (TTL: the visibility timeout)
    mc:{ns}:delta                  STREAM write-path ops logged while a pass runs
    mc:{ns}:episodes               STREAM episode ids in arrival order
    mc:{ns}:ep:<id>                STRING packed episode ("<stream id>|<body>")
    mc:{ns}:audit                  STREAM audit events (ids, action, actor, time)
    mc:{ns}:audit:p:<day>          HASH   audit entry id -> text/reason (redactable)
    mc:{ns}:counters               HASH   usage counters (usage.<operation>.<field>: usage.py)
    mc:{ns}:pending                STRING importance written since the last pass
    mc:{ns}:lastpass               STRING time of the last committed pass (epoch s)
    mc:{ns}:reviews                LIST   precision reviews (memcore review), JSON, no texts
    mc:{ns}:purged                 HASH   id of a purged tombstone -> when (epoch s)
    mc:{ns}:erased                 HASH   e:<turn id> / h:<content hash> -> erase count (erased.py)
    mc:{ns}:tasks                  ZSET   task ids enqueued over HTTP -> time (task_log.py)
    mc:{ns}:dropped:<task>         STRING an ingest task whose turns an erase dropped (TTL)
    mc:{ns}:import:<export id>     STRING last line of that export file imported (imports.py)
    mc:{ns}:ingest:<file id>       STRING turns of that chat file ingested (ingest_marks.py)
    mc:ratelimit:{key}:requests    STRING an API key's request-rate state (rate_limits.py)
    mc:ratelimit:{key}:modelcalls  ZSET   the model calls charged to an API key (same)
"""

from __future__ import annotations

import re

from memcore.core.models import validate_identifier, validate_namespace

ORDER_CHUNK = 65_536
"""Ids per insertion-order list: keeps every list small even at 10^6 memories."""

_HASH_RE = re.compile(r"^[0-9a-f]{8,128}$")

REGISTRY = "mc:namespaces"
ERASE_UNFINISHED = "mc:erase-unfinished"
"""ZSET: the erases begun and not finished yet, by start time (memcore.store.unfinished)."""
REWRITE_PENDING = "mc:rewrite-pending"
"""Set by an erase before it starts the AOF rewrite / BGSAVE, removed once Redis reports
them done (memcore.store.rewrites)."""
USAGE = "mc:usage"
"""Model calls and tokens of all namespaces by operation (memcore.store.usage)."""


def check_hash(value: str) -> str:
    """Validate a content hash (lower-case hex) before it becomes part of a key."""
    if not isinstance(value, str) or not _HASH_RE.fullmatch(value):
        raise ValueError(f"invalid content_hash {value!r}: expected lower-case hex")
    return value


def _version(version: int) -> int:
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise ValueError(f"invalid version {version!r}: expected an integer >= 0")
    return version


def prefix(ns: str) -> str:
    """``mc:{ns}:``, the prefix of every key of namespace ``namespace``."""
    return f"mc:{{{validate_namespace(ns)}}}:"


def pattern(ns: str) -> str:
    """SCAN pattern matching every key of ``namespace`` (the alphabet has no glob characters)."""
    return prefix(ns) + "*"


def current(ns: str) -> str:
    """Current version pointer."""
    return prefix(ns) + "current"


def vseq(ns: str) -> str:
    """Counter handing out new version numbers."""
    return prefix(ns) + "vseq"


def versions(ns: str) -> str:
    """Committed versions (ZSET version -> created_at)."""
    return prefix(ns) + "versions"


def building(ns: str) -> str:
    """Versions being written by a pass (ZSET version -> started_at)."""
    return prefix(ns) + "building"


def vprefix(ns: str, version: int) -> str:
    """Prefix of all keys of one snapshot version."""
    return f"{prefix(ns)}v{_version(version)}:"


def meta(ns: str, version: int) -> str:
    """Per-version metadata hash."""
    return vprefix(ns, version) + "meta"


def memory(ns: str, memory_id: str) -> str:
    """Packed record of one memory (current version)."""
    return prefix(ns) + "m:" + validate_identifier(memory_id)


def by_hash(ns: str, content_hash: str) -> str:
    """Content hash -> live memory id (current version)."""
    return prefix(ns) + "h:" + check_hash(content_hash)


def order_len(ns: str) -> str:
    """Length of the insertion-order log."""
    return prefix(ns) + "olen"


def order_prefix(ns: str) -> str:
    """Prefix of the insertion-order log's lists (``<prefix><chunk>``)."""
    return prefix(ns) + "o:"


def order_chunk(ns: str, chunk: int) -> str:
    """One list of the insertion-order log."""
    return f"{order_prefix(ns)}{int(chunk)}"


def stats(ns: str) -> str:
    """Status counts of the current version."""
    return prefix(ns) + "stats"


def undo(ns: str, version: int) -> str:
    """Records as they were before version ``version`` changed them ('' = absent)."""
    return vprefix(ns, version) + "undo"


def staged(ns: str, version: int, memory_id: str) -> str:
    """A record staged by the pass building ``version`` ('' = erased meanwhile)."""
    return vprefix(ns, version) + "s:" + validate_identifier(memory_id)


def staged_ids(ns: str, version: int) -> str:
    """Ids staged by the pass building ``version``."""
    return vprefix(ns, version) + "staged"


def index_chunk(ns: str, version: int, chunk: int) -> str:
    """One chunk of a stored index blob."""
    return f"{vprefix(ns, version)}idx:{int(chunk)}"


def pass_token(ns: str) -> str:
    """Token of the consolidation pass in progress."""
    return prefix(ns) + "pass"


def delta(ns: str) -> str:
    """Stream of write-path ops logged while a pass runs."""
    return prefix(ns) + "delta"


def episodes(ns: str) -> str:
    """Stream of episode ids in arrival order."""
    return prefix(ns) + "episodes"


def episode(ns: str, episode_id: str) -> str:
    """Packed body of one episode."""
    return prefix(ns) + "ep:" + validate_identifier(episode_id)


def audit(ns: str) -> str:
    """Audit stream."""
    return prefix(ns) + "audit"


def audit_payload(ns: str, day: int) -> str:
    """Redactable text/reason of the audit entries appended on one (UTC) day."""
    return f"{prefix(ns)}audit:p:{int(day)}"


def counters(ns: str) -> str:
    """Usage counters."""
    return prefix(ns) + "counters"


def pending(ns: str) -> str:
    """Summed importance written since the last pass."""
    return prefix(ns) + "pending"


def last_pass(ns: str) -> str:
    """Time of the last committed pass."""
    return prefix(ns) + "lastpass"


def pass_lock(ns: str) -> str:
    """Lock held (with a renewed TTL) by the one consolidation pass running on ``namespace``."""
    return prefix(ns) + "passlock"


def pass_plan(ns: str, pass_id: str) -> str:
    """The plan of a running pass, shared by its chord's tasks."""
    return prefix(ns) + "passplan:" + validate_identifier(pass_id)


def pass_done(ns: str, pass_id: str) -> str:
    """Set when pass ``pass_id`` finished: a re-sent start task of it is refused."""
    return prefix(ns) + "passdone:" + validate_identifier(pass_id)


def schedule_claim(ns: str, slot: int) -> str:
    """Claimed by the first scheduler (beat tick) to find ``namespace`` due in interval ``slot``."""
    return f"{prefix(ns)}sched:{int(slot)}"


def reviews(ns: str) -> str:
    """Precision reviews (LIST of JSON records, oldest first; ids and labels, no texts)."""
    return prefix(ns) + "reviews"


def writes(ns: str) -> str:
    """Counter of committed record changes (every commit through ``queue_changes``):
    readers caching what filters read compare it; recall bookkeeping does not count."""
    return prefix(ns) + "writes"


def generation(ns: str) -> str:
    """A token replaced by every change that bypasses the undo hashes (erase, purge,
    rollback, erasing the namespace): a cached table read under another token is stale."""
    return prefix(ns) + "gen"


def purged(ns: str) -> str:
    """Ids of tombstones purged by maintenance -> when (so restore can say so)."""
    return prefix(ns) + "purged"


def erase_fence(ns: str) -> str:
    """How many times ``ns`` was erased whole (INCR, never deleted). Outside the
    namespace's prefix, so erasing the namespace keeps it; same hash tag, same slot."""
    return f"mc:fence:{{{validate_namespace(ns)}}}"


def erasures(ns: str) -> str:
    """How many single erases (a memory, a turn, a forget request) ``ns`` had (INCR,
    never deleted; outside the namespace's prefix, same slot): memcore.store.erased."""
    return f"mc:erasures:{{{validate_namespace(ns)}}}"


def erased(ns: str) -> str:
    """What single erases of ``ns`` removed, without text: ``e:<turn id>`` and
    ``h:<content hash>`` -> the erase count that erase set (memcore.store.erased)."""
    return prefix(ns) + "erased"


BACKLOG = "mc:backlog"
"""Every ingest task accepted and not yet finished (memcore.store.backlog)."""


OUTBOX = "mc:outbox:{tasks}"
"""Each accepted ingest task's message (zlib-packed JSON), until the task ends: what is
sent again when the broker lost it (memcore.store.backlog, memcore.ingest.redelivery)."""

OUTBOX_SENT = "mc:outbox:{tasks}:sent"
"""When each message in :data:`OUTBOX` was last sent (epoch seconds)."""


def backlog(ns: str) -> str:
    """The ingest tasks of ``ns`` accepted and not yet finished. Outside the namespace's
    prefix: its tasks still queued when it is erased are still work to do."""
    return f"mc:backlog:{{{validate_namespace(ns)}}}"


def dropped(ns: str, task_id: str) -> str:
    """Set once the drop of ingest task ``task_id``'s turns was audited (a redelivery of
    the task is not audited twice)."""
    return prefix(ns) + "dropped:" + validate_identifier(task_id)


def import_marker(ns: str, export_id: str) -> str:
    """The last line of export file ``export_id`` committed into ``ns`` (the resume
    marker of ``memcore import``)."""
    return prefix(ns) + "import:" + validate_identifier(export_id)


def rate_requests(key_id: str) -> str:
    """GCRA state (theoretical arrival time) of API key ``key_id``'s requests per second
    (memcore.store.rate_limits). Outside every namespace, hash tag = the key id."""
    return f"mc:ratelimit:{{{validate_identifier(key_id)}}}:requests"


def rate_model_calls(key_id: str) -> str:
    """Sliding log of the model calls charged to API key ``key_id`` (rate_limits.py)."""
    return f"mc:ratelimit:{{{validate_identifier(key_id)}}}:modelcalls"


def ingest_marker(ns: str, file_id: str) -> str:
    """How many turns of chat file ``file_id`` ``memcore ingest`` has put into ``ns``
    (its resume marker; memcore.store.ingest_marks)."""
    return prefix(ns) + "ingest:" + validate_identifier(file_id)
