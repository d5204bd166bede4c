"""``memcore mcp``: memory tools for MCP clients (stdio or streamable HTTP)."""

from __future__ import annotations

import fnmatch

import typer

from memcore.cli.common import EXIT_USAGE, fail, handles_errors, open_client


@handles_errors
def mcp(transport: str = typer.Option("stdio", "--transport", metavar="stdio|http",
                                      help="stdio: one client on stdin/stdout (the API key "
                                           "comes from --api-key); http: streamable HTTP, "
                                           "every request carries its own key as a bearer "
                                           "token."),
        host: str = typer.Option("127.0.0.1", "--host", help="http: address to listen on."),
        port: int = typer.Option(8765, "--port", min=0, max=65535, help="http: TCP port."),
        path: str = typer.Option("/mcp", "--path", help="http: the endpoint's path."),
        namespace: str | None = typer.Option(
            None, "--namespace", help="Namespace of tool calls that name none."),
        api_key: str | None = typer.Option(
            None, "--api-key", envvar="MEMCORE_MCP_API_KEY",
            help="stdio: the key (from `memcore keys create`) every call runs as.")) -> None:
    """Memory tools for MCP clients (add, search, list, profile, delete).

    Serves add_memory, search_memory, list_memories, get_profile and delete_memory over
    stdio or streamable HTTP. Each call is checked against the API key's scopes and role,
    as on the HTTP API."""
    from memcore.api.rate_limits import KeyLimits
    from memcore.mcp.server import MemoryTools, build_server

    if transport not in ("stdio", "http"):
        fail(f"--transport: use stdio or http, not {transport!r}", EXIT_USAGE)
    client = open_client()
    # The HTTP API's per-key limits, in the same Redis budget (docs/operations.md).
    limits = KeyLimits(client.settings.api, lambda: client.store.rate_limits)
    if transport == "stdio":
        if not api_key:
            fail("--api-key (or MEMCORE_MCP_API_KEY) is required with --transport stdio",
                 EXIT_USAGE)
        record = client.store.api_keys.verify(api_key or "")
        if record is None:
            fail("--api-key: unknown or revoked key")
        if namespace is not None and not any(fnmatch.fnmatchcase(namespace, pattern)
                                             for pattern in record.scopes):
            # Otherwise the server starts and every call without a namespace is refused.
            fail(f"--namespace: {namespace!r} is outside the key's scopes "
                 f"({', '.join(record.scopes)})", EXIT_USAGE)
        tools = MemoryTools(client, client.store.api_keys, namespace, stdio_key=api_key,
                            limits=limits)
        build_server(tools, transport="stdio").run("stdio")
        return
    url = f"http://{host}:{port}{path}"
    tools = MemoryTools(client, client.store.api_keys, namespace, limits=limits)
    typer.echo(f"memcore MCP on {url} (streamable HTTP; Authorization: Bearer <key>)", err=True)
    build_server(tools, transport="http", url=url).run(
        "streamable-http", host=host, port=port, streamable_http_path=path)


def register(app: typer.Typer) -> None:
    """Add ``mcp`` to ``app``."""
    app.command()(mcp)
