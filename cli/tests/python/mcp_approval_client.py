"""The official MCP Python SDK (`mcp`) approves and denies a tool call, on either revision:
- `--revision legacy` (a `ClientSession` that initializes): the server asks by
  `elicitation/create` inside the call;
- `--revision 2026-07-28` (`Client(mode="2026-07-28")`: no `initialize`): the call answers with
  an input-required result (SEP-2322), and `Client.call_tool` fulfils it through the same
  elicitation callback and retries with the answer and the echoed `requestState`, as the SDK
  does for any server.

Driven over stdio (this script spawns `skillet ... serve --mcp`) and streamable HTTP (the Rust
test passes the /mcp URL) by cli/tests/run/approvals.rs (legacy) and
cli/tests/mcp/mcp_approval_2026.rs (2026-07-28). The server has the test skill `gated-calc`,
whose `calculator` call needs approval; its mock answers `approved`, `denied: not on prod` or
`denied` (`denied by policy` when no one was asked) from what the tool call returned.

Checks (each prints `ok: NAME`; any failure raises, so the exit status is non-zero):
- approving: asked once, with a form whose required boolean is `approve` and a message naming
  the tool and its arguments; the tool runs (on 2026-07-28 the retry resumes the same run);
- denying with a reason: the model reads the reason;
- declining the form: a denial;
- legacy only: a session without the elicitation capability follows the host policy (deny).

Arguments: --revision legacy|2026-07-28, --transport stdio|http, --skillet PATH and
--serve-arg ARG... (stdio), --url URL (http).
"""

import argparse
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp import types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def ok(name):
    print(f"ok: {name}", flush=True)


class Person:
    """Answers elicitations as told, and remembers what it was asked."""

    def __init__(self):
        self.answer = None
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params)
        return self.answer


async def call(client):
    result = await client.call_tool("gated-calc", {"text": "6*7"})
    assert not result.is_error, result
    return result.structured_content["echo"]


async def approve_deny_decline(client, person):
    """The three answers, through `client` (a session or a 2026 `Client`) that asks `person`."""
    person.answer = types.ElicitResult(action="accept", content={"approve": True})
    assert await call(client) == "approved"
    assert len(person.asked) == 1, person.asked
    asked = person.asked[0]
    schema = asked.requested_schema
    assert schema["properties"]["approve"]["type"] == "boolean", schema
    assert schema["required"] == ["approve"], schema
    assert "calculator" in asked.message and "6*7" in asked.message, asked.message
    ok("approve: asked once with the approve form, the tool ran")

    person.answer = types.ElicitResult(
        action="accept", content={"approve": False, "reason": "not on prod"}
    )
    assert await call(client) == "denied: not on prod"
    ok("deny: the reason reached the model")

    person.answer = types.ElicitResult(action="decline")
    assert await call(client) == "denied"
    assert len(person.asked) == 3, person.asked
    ok("decline: a denial")


async def legacy(args, person):
    def connect():
        if args.transport == "stdio":
            return stdio_client(stdio_server(args))
        return streamable_http_client(args.url)

    async with connect() as streams:
        async with ClientSession(streams[0], streams[1], elicitation_callback=person) as session:
            await session.initialize()
            await approve_deny_decline(session, person)
    async with connect() as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            assert await call(session) == "denied by policy"
            ok("no elicitation capability: the host policy denied")


async def revision_2026(args, person):
    # Imported here: the module is new in the SDK's 2026 releases.
    from mcp.client.client import Client

    server = stdio_server(args) if args.transport == "stdio" else args.url
    async with Client(server, mode="2026-07-28", elicitation_callback=person) as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        await approve_deny_decline(client, person)


def stdio_server(args):
    return StdioServerParameters(command=args.skillet, args=args.serve_arg, env=dict(os.environ))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--revision", choices=["legacy", "2026-07-28"], required=True)
    parser.add_argument("--transport", choices=["stdio", "http"], required=True)
    parser.add_argument("--skillet")
    parser.add_argument("--url")
    parser.add_argument("--serve-arg", action="append", default=[])
    args = parser.parse_args()

    run = legacy if args.revision == "legacy" else revision_2026
    with anyio.fail_after(120):
        await run(args, Person())
    print("all checks passed", flush=True)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except BaseException as error:  # noqa: BLE001 - report and fail
        import traceback

        traceback.print_exception(error)
        sys.exit(1)
