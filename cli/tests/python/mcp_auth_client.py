"""The official MCP Python SDK against `skillet serve --http` with `[auth]` (cli/tests/auth_mcp.rs).

usage: mcp_auth_client.py URL KEY ALLOWED FORBIDDEN ISSUER

Checks, printing one JSON summary line at the end:
- an unauthenticated POST /mcp is HTTP 401 whose WWW-Authenticate the SDK's own parser reads a
  resource_metadata URL from, and that URL serves RFC 9728 metadata the SDK's model accepts,
  naming ISSUER as authorization server;
- an SDK session without a bearer header fails at initialize (nothing is listed or run);
- an SDK session with `Authorization: Bearer KEY` lists only ALLOWED, runs it, and a call of
  FORBIDDEN is an error result whose text starts with `unauthorized`.
"""

import json
import sys

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.auth.utils import extract_resource_metadata_from_www_auth
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import ProtectedResourceMetadata
from mcp.shared.exceptions import MCPError

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "auth-test", "version": "0"},
    },
}


async def main() -> None:
    url, key, allowed, forbidden, issuer = sys.argv[1:6]
    summary = {}
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            url,
            json=INIT,
            headers={"Accept": "application/json, text/event-stream"},
        )
        summary["status_without_token"] = response.status_code
        metadata_url = extract_resource_metadata_from_www_auth(response)
        assert metadata_url, response.headers
        metadata = ProtectedResourceMetadata.model_validate_json(
            (await http.get(metadata_url)).content
        )
        servers = [str(s).rstrip("/") for s in metadata.authorization_servers or []]
        assert issuer.rstrip("/") in servers, servers
        summary["metadata_scopes"] = sorted(metadata.scopes_supported or [])

    try:
        with anyio.fail_after(20):
            async with streamable_http_client(url) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
        summary["sdk_without_token"] = "initialized"
    except BaseException as error:  # noqa: BLE001 - anyio wraps it in exception groups
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        if not isinstance(error, MCPError):
            raise
        summary["sdk_without_token"] = f"MCPError {error.error.code}"

    client = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with client:
        async with streamable_http_client(url, http_client=client) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                with anyio.fail_after(30):
                    await session.initialize()
                    listed = await session.list_tools()
                    summary["tools"] = sorted(t.name for t in listed.tools)
                    ran = await session.call_tool(allowed, {"text": "hi"})
                    summary["allowed_is_error"] = bool(ran.is_error)
                    refused = await session.call_tool(forbidden, {"text": "hi"})
                    summary["forbidden_is_error"] = bool(refused.is_error)
                    summary["forbidden_text"] = refused.content[0].text
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except BaseException as error:  # noqa: BLE001 - report and fail
        import traceback

        traceback.print_exception(error)
        sys.exit(1)
