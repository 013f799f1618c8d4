"""The official MCP Python SDK (`mcp`) approves and denies a tool call by elicitation.

Driven by cli/tests/run/approvals.rs over stdio (this script spawns `skillet ... serve --mcp`) and
over streamable HTTP (the Rust test passes the /mcp URL). The server has the test skill
`gated-calc`, whose `calculator` call needs approval (`a2e-approval`); its mock answers
`approved`, `denied: not on prod` or `denied by policy` from what the tool call returned.

Checks (each prints `ok: NAME`; any failure raises, so the exit status is non-zero):
- a session with an elicitation callback is asked once per gated call, with a form whose
  required boolean is `approve`, and a message naming the tool and its arguments;
  approving runs the tool, denying with a reason gives the model that reason;
- declining the form is a denial too;
- a session without the elicitation capability follows the host policy (deny).

Arguments: --transport stdio|http, --skillet PATH and --serve-arg ARG... (stdio), --url URL (http).
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


async def call(session):
    result = await session.call_tool("gated-calc", {"text": "6*7"})
    assert not result.is_error, result
    return result.structured_content["echo"]


async def with_elicitation(session, person):
    await session.initialize()
    person.answer = types.ElicitResult(action="accept", content={"approve": True})
    assert await call(session) == "approved"
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
    assert await call(session) == "denied: not on prod"
    ok("deny: the reason reached the model")

    person.answer = types.ElicitResult(action="decline")
    assert await call(session) == "denied"
    assert len(person.asked) == 3, person.asked
    ok("decline: a denial")


async def without_elicitation(session):
    await session.initialize()
    assert await call(session) == "denied by policy"
    ok("no elicitation capability: the host policy denied")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "http"], required=True)
    parser.add_argument("--skillet")
    parser.add_argument("--url")
    parser.add_argument("--serve-arg", action="append", default=[])
    args = parser.parse_args()

    def connect():
        if args.transport == "stdio":
            params = StdioServerParameters(
                command=args.skillet, args=args.serve_arg, env=dict(os.environ)
            )
            return stdio_client(params)
        return streamable_http_client(args.url)

    person = Person()
    with anyio.fail_after(120):
        async with connect() as streams:
            async with ClientSession(streams[0], streams[1], elicitation_callback=person) as session:
                await with_elicitation(session, person)
        async with connect() as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await without_elicitation(session)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except BaseException as error:  # noqa: BLE001 - report and fail
        import traceback

        traceback.print_exception(error)
        sys.exit(1)
