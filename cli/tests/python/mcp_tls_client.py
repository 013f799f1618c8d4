"""The official MCP Python SDK against `skillet serve --http` with `[server.tls]` (cli/tests/serve/tls_serve.rs).

usage: mcp_tls_client.py URL CA_FILE TOOL

Checks, printing one JSON summary line at the end:
- a session whose httpx2 client verifies against CA_FILE (an `ssl.SSLContext`, httpx's
  `verify=`) initializes over https, lists the tools and runs TOOL;
- a session with the default verification (the system's roots, not the test CA) fails on the
  certificate before anything is sent.
"""

import json
import ssl
import sys

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main() -> None:
    url, ca_file, tool = sys.argv[1:4]
    summary = {}
    context = ssl.create_default_context(cafile=ca_file)
    client = httpx2.AsyncClient(verify=context, timeout=httpx2.Timeout(30.0, read=300.0))
    async with client:
        async with streamable_http_client(url, http_client=client) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                with anyio.fail_after(30):
                    await session.initialize()
                    listed = await session.list_tools()
                    summary["tools"] = sorted(t.name for t in listed.tools)
                    ran = await session.call_tool(tool, {"text": "hi"})
                    summary["is_error"] = bool(ran.is_error)

    async with httpx2.AsyncClient(timeout=10.0) as default_client:
        try:
            await default_client.get(url)
            summary["without_ca"] = "connected"
        except httpx2.ConnectError as error:
            cause = error.__cause__ or error.__context__
            refused = isinstance(cause, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(error)
            summary["without_ca"] = "certificate refused" if refused else f"other: {error!r}"
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except BaseException as error:  # noqa: BLE001 - report and fail
        import traceback

        traceback.print_exception(error)
        sys.exit(1)
