"""memcore as an MCP server: add_memory, search_memory, list_memories, get_profile,
get_context, delete_memory, forget, over stdio or streamable HTTP, authenticated with an
API key.

The key decides everything a call may touch, as on the HTTP API: a tool's namespace
must match one of the key's scopes, and adding or deleting needs the ``write`` role.
Over HTTP the key is the request's ``Authorization: Bearer`` token (a request without
a valid key gets 401 before any tool runs); over stdio it is given once when the
server starts. Either way the key is checked again on every call, so revoking it
takes effect at once. The key's rate limits are the HTTP API's too (memcore.api.
rate_limits, counted in the same Redis budget): every call counts as a request, and
add_memory is refused while the key's model calls of the last minute are at the limit;
a refusal is a tool error naming the limit and when to retry.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from memcore.api.auth import Principal, check_namespace
from memcore.api.rate_limits import KeyLimits, retry_after
from memcore.client.client import Client
from memcore.client.errors import NoWorker, RateLimited
from memcore.core.errors import MemoryNotFound
from memcore.core.models import Memory
from memcore.core.suggest import did_you_mean
from memcore.ingest.forget import forget_text
from memcore.messaging.task_names import INGEST_QUEUE
from memcore.store.api_keys import ApiKeyRepository, ApiRole

TOOLS = ("add_memory", "search_memory", "list_memories", "get_profile", "get_context",
         "delete_memory", "forget")
WAIT_SECONDS = 60.0
"""How long add_memory waits for the workers before answering with the task ids only."""

INSTRUCTIONS = (
    "Long-term memory. Call search_memory before answering questions about the user; call "
    "add_memory with what the user tells you about themselves. Every tool takes the "
    "namespace (one per user or tenant) unless the server has a default one.")


class KeyVerifier:
    """The MCP SDK's token verifier over memcore's API keys (HTTP transport)."""

    def __init__(self, keys: ApiKeyRepository) -> None:
        self.keys = keys

    async def verify_token(self, token: str) -> AccessToken | None:
        """An access token for a valid, unrevoked key; None (so 401) otherwise."""
        key = self.keys.verify(token)
        if key is None:
            return None
        return AccessToken(token=token, client_id=key.id, scopes=[])


@dataclass
class MemoryTools:
    """The tools' behaviour, kept apart from the MCP wiring so each rule is plain code."""

    client: Client
    keys: ApiKeyRepository
    default_namespace: str | None = None
    stdio_key: str | None = None
    limits: KeyLimits | None = None
    """The per-key rate limits (None: none)."""

    def principal(self) -> Principal:
        """Who calls: the HTTP request's bearer key, else the key given at start (stdio)."""
        token = get_access_token()
        plain = token.token if token is not None else self.stdio_key
        key = self.keys.verify(plain) if plain else None
        if key is None:
            raise ToolError("unauthorized: the API key is missing, unknown or revoked")
        return Principal.of(key)

    def namespace(self, namespace: str | None, role: ApiRole) -> str:
        """The call's namespace, checked against the key (same answer whether or not the
        namespace exists, so a refusal reveals nothing); the call counted against the
        key's requests per second."""
        return self.authorize(namespace, role)[0]

    def authorize(self, namespace: str | None, role: ApiRole) -> tuple[str, Principal]:
        """:meth:`namespace` and the caller."""
        ns = namespace or self.default_namespace
        if not ns:
            raise ToolError("namespace: required (the server has no default namespace)")
        try:
            check_namespace(ns)
        except ValueError as exc:
            raise ToolError(f"namespace: {exc}") from None
        who = self.principal()
        if not who.allows(ns):
            raise ToolError(f"forbidden: the API key's scopes do not include {ns!r}")
        if who.role.rank < role.rank:
            raise ToolError(f"forbidden: this tool needs a {role.value} key, "
                            f"the key is {who.role.value}")
        if self.limits is not None and self.limits.requests_limited:
            refused = self.limits.take_request(who.key_id)
            if refused is not None:
                raise limited(refused)
        return ns, who

    def add_memory(self, text: str, namespace: str | None = None,
                   metadata: dict[str, Any] | None = None, user_id: str | None = None,
                   agent_id: str | None = None, run_id: str | None = None,
                   infer: bool = True) -> dict[str, Any]:
        ns, who = self.authorize(namespace, ApiRole.WRITE)
        try:
            charge_to = None if self.limits is None else self.limits.admit_add(who.key_id)
        except RateLimited as exc:
            raise limited(exc) from None
        with _clear_errors():
            task_ids = self.client.add(ns, [{"role": "user", "content": text}],
                                       metadata=metadata, user_id=user_id, agent_id=agent_id,
                                       run_id=run_id, infer=infer, charge_to=charge_to)
            try:
                results = self.client.wait(task_ids, timeout=WAIT_SECONDS,
                                           queue=INGEST_QUEUE, fail_fast=True)
            except NoWorker as exc:  # queued, but nothing will store it: tell the model
                raise ToolError(str(exc)) from None
            except TimeoutError:
                return {"namespace": ns, "task_ids": task_ids, "done": False}
        ids = [mid for result in results for mid in result.get("memory_ids", [])]
        return {"namespace": ns, "task_ids": task_ids, "done": True,
                "memory_ids": list(dict.fromkeys(ids))}

    def search_memory(self, query: str, namespace: str | None = None, k: int = 5,
                      filters: dict[str, Any] | None = None) -> dict[str, Any]:
        ns = self.namespace(namespace, ApiRole.READ)
        with _clear_errors():
            hits = self.client.search(ns, query, k=k, filters=filters, warn=False)
        out: dict[str, Any] = {"namespace": ns, "results": [
            {**memory_json(h.memory), "score": round(h.score, 6),
             "similarity": round(h.similarity, 6)} for h in hits]}
        return out if hits else {**out, **self._no_data(ns)}

    def _no_data(self, ns: str) -> dict[str, str]:
        """``{"warning": ...}`` when ``ns`` has no data (the HTTP API's ``warning``),
        suggesting only names in the key's scopes; else nothing."""
        message = self.client.no_data(ns, self.principal().allows)
        return {"warning": message} if message else {}

    def list_memories(self, namespace: str | None = None,
                      filters: dict[str, Any] | None = None, status: str | None = None,
                      kind: str | None = None, limit: int = 50,
                      cursor: str | None = None) -> dict[str, Any]:
        ns = self.namespace(namespace, ApiRole.READ)
        with _clear_errors():
            page = self.client.list(ns, status=status, kind=kind, filters=filters,
                                    limit=limit, cursor=cursor)
        return {"namespace": ns, "memories": [memory_json(m) for m in page.memories],
                "next_cursor": page.next_cursor}

    def get_profile(self, namespace: str | None = None, user_id: str | None = None
                    ) -> dict[str, Any]:
        ns = self.namespace(namespace, ApiRole.READ)
        with _clear_errors():
            facts = self.client.profile(ns, filters=None if user_id is None
                                        else {"user_id": user_id}, warn=False)
        out = {"namespace": ns, "profile": [memory_json(m) for m in facts]}
        return out if facts else {**out, **self._no_data(ns)}

    def get_context(self, query: str, namespace: str | None = None, max_tokens: int = 1000,
                    user_id: str | None = None, now: str | None = None,
                    time_hint: bool = True) -> dict[str, Any]:
        ns = self.namespace(namespace, ApiRole.READ)
        with _clear_errors():
            block = self.client.context(ns, query, max_tokens, now=now, filters=None
                                        if user_id is None else {"user_id": user_id},
                                        time_hint=time_hint)
        return block.as_dict()

    def delete_memory(self, memory_id: str, namespace: str | None = None) -> dict[str, Any]:
        ns = self.namespace(namespace, ApiRole.WRITE)
        with _clear_errors():
            memory = self.client.delete(ns, memory_id)
        return {"namespace": ns, "deleted": memory.id, "status": memory.status.value}

    def forget(self, text: str, namespace: str | None = None, user_id: str | None = None,
               agent_id: str | None = None, run_id: str | None = None) -> dict[str, Any]:
        ns = self.namespace(namespace, ApiRole.WRITE)
        with _clear_errors():
            outcome = forget_text(self.client.store, self.client.models.embedder,
                                  self.client.settings, ns, text, user_id=user_id,
                                  agent_id=agent_id, run_id=run_id)
        out = outcome.as_dict()
        out.pop("turn_id", None)
        return {"namespace": ns, **out}


def limited(exc: RateLimited) -> ToolError:
    """A rate-limit refusal as the tool error the model reads: the HTTP API's code and
    message (naming the limit's setting), and its ``Retry-After`` in whole seconds."""
    return ToolError(f"rate_limited: {exc} (retry_after: {retry_after(exc.retry_after)} s)")


def memory_json(memory: Memory) -> dict[str, Any]:
    """What a tool shows of a memory (no vector, no internal bookkeeping)."""
    return {"id": memory.id, "text": memory.text, "kind": memory.kind.value,
            "status": memory.status.value, "confidence": round(memory.confidence, 4),
            "user_id": memory.user_id, "agent_id": memory.agent_id, "run_id": memory.run_id,
            "metadata": memory.metadata, "created_at": memory.created_at.isoformat(),
            "updated_at": memory.updated_at.isoformat()}


@contextmanager
def _clear_errors() -> Iterator[None]:
    """Bad input and unknown ids reach the model as a tool error with the message
    (anything else stays an internal error, its details in the server log)."""
    try:
        yield
    except MemoryNotFound as exc:
        raise ToolError(f"not found: {exc}") from None
    except ValueError as exc:  # includes filter errors and MemoryStateError
        raise ToolError(str(exc)) from None


def argument_error(tool: str, arguments: Mapping[str, Any], params: Sequence[str],
                   exc: ValidationError | None = None) -> str | None:
    """A tool call's argument mistake as one sentence naming the argument (an unknown
    one with the closest right name first), or None when the arguments are fine.
    ``exc`` is the SDK's validation of them (raw pydantic text otherwise reaches the
    model)."""
    takes = f"{tool} takes: {', '.join(params)}"
    unknown = [name for name in arguments if name not in params]
    if unknown:
        return f"{unknown[0]}: unknown argument{did_you_mean(unknown[0], params)}; {takes}"
    if exc is None:
        return None
    problems = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
        if error.get("type") == "missing":
            problems.append(f"{where}: required")
            continue
        got = repr(error.get("input"))
        got = got if len(got) <= 60 else got[:57] + "..."
        problems.append(f"{where}: {error.get('msg', 'invalid')} (got {got})")
    return "; ".join(problems) + f" ({takes})"


class MemcoreMCPServer(MCPServer):
    """The SDK's server, answering a call with wrong arguments with a plain sentence
    that names the argument instead of pydantic's report."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.memcore_params: dict[str, list[str]] = {}
        """Each tool's argument names, in order."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        params = self.memcore_params.get(name)
        if params is None:
            return await super().call_tool(name, arguments, context)
        message = argument_error(name, arguments, params)
        if message:
            raise ToolError(message)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(argument_error(name, arguments, params, cause)
                                or str(exc)) from None
            raise


def build_server(tools: MemoryTools, *, transport: Literal["stdio", "http"],
                 url: str = "http://127.0.0.1:8765/mcp") -> MemcoreMCPServer:
    """The MCP server over ``tools``; ``url`` is where an HTTP server is reached (the
    resource it protects)."""
    if transport == "http":
        server = MemcoreMCPServer(
            "memcore", instructions=INSTRUCTIONS, token_verifier=KeyVerifier(tools.keys),
            auth=AuthSettings(issuer_url=url, resource_server_url=url,
                              validate_token_resource=False))
    else:
        server = MemcoreMCPServer("memcore", instructions=INSTRUCTIONS)
    described: dict[str, tuple[Callable[..., Any], str]] = {
        "add_memory": (tools.add_memory,
                       "Remember what the user said (one message). Stored facts keep "
                       "metadata and user_id/agent_id/run_id; infer=false stores the text "
                       "verbatim. Waits for the memory to be written. Needs a write key."),
        "search_memory": (tools.search_memory,
                          "Find the k memories most relevant to a query; filters (a JSON "
                          "object, e.g. {\"user_id\": \"alice\", \"metadata.topic\": "
                          "{\"in\": [\"food\"]}}) choose memories before ranking."),
        "list_memories": (tools.list_memories,
                          "List memories oldest first, filtered like search; pass "
                          "next_cursor back for the next page."),
        "get_profile": (tools.get_profile,
                        "The user's profile: the active facts with the highest confidence "
                        "(of one user_id if given)."),
        "get_context": (tools.get_context,
                        "One prompt-ready text of what is known that matters for a query "
                        "(the user's key facts, the relevant memories with their dates, "
                        "earlier values of changed facts), at most max_tokens tokens "
                        "(cl100k_base), plus its parts with memory ids; of one user_id if "
                        "given. Put its text into your prompt."),
        "delete_memory": (tools.delete_memory,
                          "Delete a memory by id (restorable by an operator). Needs a write "
                          "key."),
        "forget": (tools.forget,
                   "Forget for good what the user asked you to forget: text is the request "
                   "or what it names (\"please forget my address\", \"everything about my "
                   "ex\", \"that\" = their last message). Erases the matching memories of "
                   "that user_id/agent_id/run_id and the turns they came from (at most 20); "
                   "audited without the text. Needs a write key."),
    }
    for name in TOOLS:
        fn, description = described[name]
        server.add_tool(fn, name=name, description=description)
        server.memcore_params[name] = list(inspect.signature(fn).parameters)
    return server
