"""The official MCP Python SDK (`mcp`) hears about skills edited on disk while it is connected.

Driven by cli/tests/serve/hot_reload.rs over stdio (this script spawns `skillet ... serve --mcp
--watch`) and over streamable HTTP (the Rust test passes the /mcp URL of a `serve --http` with
`[skills] watch = true`). The skills root (`--skills`) holds the echo skills `alpha` and `beta`;
this script edits it.

Checks (each prints `ok: NAME`; any failure raises, so the exit status is non-zero):
- subscribing to a URI that names no resource is "resource not found" (-32002), to a URI that
  is not a skill file -32602; to `skill://alpha/SKILL.md` succeeds;
- editing alpha's description: `notifications/tools/list_changed` and
  `notifications/resources/updated` for the subscribed URI arrive, `tools/list` shows the new
  description and `resources/read` the new text;
- adding a skill folder: `tools/list` shows it; `resources/list_changed` arrives;
- breaking alpha's SKILL.md: alpha leaves `tools/list` (Blocked), beta still runs; fixing it
  brings alpha back.

Arguments: --skills DIR, --transport stdio|http, --skillet PATH and --serve-arg ARG... (stdio),
--url URL (http).
"""

import argparse
import os
import pathlib
import sys

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp import types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ALPHA = "skill://alpha/SKILL.md"
ORIGINAL = "description: Echoes its text back (test skill)."


def ok(name):
    print(f"ok: {name}", flush=True)


class Heard:
    """Every server notification, and a way to wait for one."""

    def __init__(self):
        self.seen = []
        self.changed = anyio.Event()

    async def __call__(self, message):
        if not isinstance(message, Exception):
            self.seen.append(message)
            self.changed.set()
            self.changed = anyio.Event()

    async def wait_for(self, kind, since, uri=None):
        """Waits until a notification of `kind` (and `uri`) arrived after index `since`."""
        while True:
            for note in self.seen[since:]:
                if isinstance(note, kind) and (uri is None or str(note.params.uri) == uri):
                    return note
            await self.changed.wait()


async def tools_by_name(session):
    return {tool.name: tool for tool in (await session.list_tools()).tools}


async def wait_until(heard, session, predicate):
    """Waits, notification by notification, until `tools/list` satisfies `predicate`."""
    while True:
        since = len(heard.seen)
        tools = await tools_by_name(session)
        if predicate(tools):
            return tools
        await heard.wait_for(types.ToolListChangedNotification, since)


async def checks(session, heard, skills):
    caps = (await session.initialize()).capabilities
    assert caps.resources.subscribe and caps.resources.list_changed, caps.resources
    tools = await tools_by_name(session)
    assert {"alpha", "beta"} <= set(tools), tools

    for uri, code in [
        ("skill://nope/SKILL.md", -32002),
        ("skill://alpha/no-such-file.md", -32002),
        ("file:///etc/passwd", -32602),
    ]:
        try:
            await session.subscribe_resource(uri)
        except MCPError as error:
            assert error.code == code, (uri, error.code, error.message)
        else:
            raise AssertionError(f"subscribing to {uri} succeeded")
    await session.subscribe_resource(ALPHA)
    ok("subscribe: unknown URIs refused with their codes, skill://alpha/SKILL.md accepted")

    alpha_md = skills / "alpha" / "SKILL.md"
    since = len(heard.seen)
    alpha_md.write_text(alpha_md.read_text().replace(ORIGINAL, "description: Alpha, edited."))
    await heard.wait_for(types.ToolListChangedNotification, since)
    await heard.wait_for(types.ResourceUpdatedNotification, since, ALPHA)
    tools = await tools_by_name(session)
    assert tools["alpha"].description.startswith("Alpha, edited."), tools["alpha"]
    read = await session.read_resource(ALPHA)
    assert "Alpha, edited." in read.contents[0].text, read
    ok("edit: list_changed and resources/updated heard, tools/list shows the new description")

    since = len(heard.seen)
    gamma = skills / "gamma"
    (gamma / "assets").mkdir(parents=True)
    for asset in ["input.schema.json", "output.schema.json"]:
        (gamma / "assets" / asset).write_text((skills / "beta" / "assets" / asset).read_text())
    # SKILL.md last: the skill appears whole.
    (gamma / "SKILL.md").write_text(
        (skills / "beta" / "SKILL.md").read_text().replace("name: beta", "name: gamma")
    )
    await wait_until(heard, session, lambda tools: "gamma" in tools)
    await heard.wait_for(types.ResourceListChangedNotification, since)
    ok("add: the new skill is listed, resources/list_changed heard")

    alpha_md.write_text("---\nname: alpha\n---\nNo description: this no longer loads.\n")
    await wait_until(heard, session, lambda tools: "alpha" not in tools)
    result = await session.call_tool("beta", {"text": "still here"})
    assert not result.is_error, result
    assert result.structured_content == {"echo": "hello"}, result
    ok("break: the broken skill leaves tools/list, the others still run")

    alpha_md.write_text((skills / "beta" / "SKILL.md").read_text().replace("name: beta", "name: alpha"))
    await wait_until(heard, session, lambda tools: "alpha" in tools)
    ok("fix: the skill is back")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", required=True)
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

    heard = Heard()
    with anyio.fail_after(120):
        async with connect() as streams:
            async with ClientSession(streams[0], streams[1], message_handler=heard) as session:
                await checks(session, heard, pathlib.Path(args.skills))
    print("all checks passed", flush=True)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except BaseException as error:  # noqa: BLE001 - report and fail
        import traceback

        traceback.print_exception(error)
        sys.exit(1)
