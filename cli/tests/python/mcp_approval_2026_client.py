"""The official MCP Python SDK's 2026-07-28 client approves and denies a tool call through
input-required results (SEP-2322, multi round-trip requests).

Driven by cli/tests/mcp/mcp_approval_2026.rs over streamable HTTP (the Rust test passes the /mcp URL)
and over stdio (this script spawns `skillet ... serve --mcp`). The server has the test skill
`gated-calc`, whose `calculator` call needs approval; its mock answers `approved`,
`denied: not on prod` or `denied` from what the tool call returned.

The client speaks 2026-07-28 (`mode="2026-07-28"`: no `initialize`) and declares form
elicitation; `Client.call_tool` fulfils each input request through the elicitation callback and
retries the call with the answer and the echoed `requestState`, as the SDK does for any server.

Checks (each prints `ok: NAME`; any failure raises, so the exit status is non-zero):
- approving: asked once, with the approve form and a message naming the tool and its arguments;
  the retry resumes the run, which completes with the tool's result;
- denying with a reason: the model reads the reason;
- declining: a denial.

Arguments: --transport stdio|http, --skillet PATH and --serve-arg ARG... (stdio), --url URL (http).
"""

import argparse
import os
import sys

import anyio
from mcp import StdioServerParameters
from mcp import types
from mcp.client.client import Client


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


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "http"], required=True)
    parser.add_argument("--skillet")
    parser.add_argument("--url")
    parser.add_argument("--serve-arg", action="append", default=[])
    args = parser.parse_args()

    if args.transport == "stdio":
        server = StdioServerParameters(
            command=args.skillet, args=args.serve_arg, env=dict(os.environ)
        )
    else:
        server = args.url

    person = Person()
    with anyio.fail_after(120):
        async with Client(server, mode="2026-07-28", elicitation_callback=person) as client:
            assert client.protocol_version == "2026-07-28", client.protocol_version

            person.answer = types.ElicitResult(action="accept", content={"approve": True})
            assert await call(client) == "approved"
            assert len(person.asked) == 1, person.asked
            asked = person.asked[0]
            schema = asked.requested_schema
            assert schema["properties"]["approve"]["type"] == "boolean", schema
            assert schema["required"] == ["approve"], schema
            assert "calculator" in asked.message and "6*7" in asked.message, asked.message
            ok("approve: asked once with the approve form, the same run completed")

            person.answer = types.ElicitResult(
                action="accept", content={"approve": False, "reason": "not on prod"}
            )
            assert await call(client) == "denied: not on prod"
            ok("deny: the reason reached the model")

            person.answer = types.ElicitResult(action="decline")
            assert await call(client) == "denied"
            assert len(person.asked) == 3, person.asked
            ok("decline: a denial")
    print("all checks passed", flush=True)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except BaseException as error:  # noqa: BLE001 - report and fail
        import traceback

        traceback.print_exception(error)
        sys.exit(1)
