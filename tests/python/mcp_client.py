"""Drives `skillet` as an MCP server with the official MCP Python SDK (`mcp`).

Run by tests/tests/mcp_server_python.rs, once over stdio (this script spawns
`skillet ... serve --mcp`) and once over streamable HTTP (the Rust test spawns
`skillet serve --http` and passes its /mcp URL). Each check prints `ok: NAME`;
any failure raises, so the exit status is non-zero and the traceback names it.

Arguments: --transport stdio|http, --skillet PATH (stdio), --url URL (http),
--skills DIR (the bundled skills, for their schemas and examples), --mock URL
(mock-llm, for its journal), --serve-arg ARG (repeatable: arguments of the
stdio server command line).

On the 2026-07-28 protocol it also checks that logging is opt-in (no log notification
without a `logLevel` in `_meta`, some at `debug`) and that `subscriptions/listen` is
acknowledged with the filter the server honors.
"""

import argparse
import json
import os
import sys
from pathlib import Path

import anyio
import httpx
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import listen
from mcp.shared.exceptions import MCPError

BUNDLED = ["summarize", "code-review", "expense-report"]


def ok(name):
    print(f"ok: {name}", flush=True)


async def journal(mock):
    async with httpx.AsyncClient() as client:
        response = await client.get(f"{mock}/_mock/requests")
        response.raise_for_status()
        return response.json()


def rule_hits(entries, prefix):
    return [e for e in entries if (e.get("matched_rule") or "").startswith(prefix)]


async def check_tools(session, skills):
    tools = {t.name: t for t in (await session.list_tools()).tools}
    for name in BUNDLED:
        assert name in tools, f"{name} not offered: {sorted(tools)}"
        folder = skills / name / "assets"
        want_in = json.loads((folder / "input.schema.json").read_text())
        want_out = json.loads((folder / "output.schema.json").read_text())
        assert tools[name].input_schema == want_in, f"{name} inputSchema differs"
        assert tools[name].output_schema == want_out, f"{name} outputSchema differs"
    for name in ["slow-loop", "always-fails"]:
        assert name in tools, f"{name} not offered"
    assert "blocked-skill" not in tools, "a Blocked skill must not be offered"
    ok("list_tools: every published skill, schemas equal the skills' schemas")
    return tools


async def check_bundled_calls(session, tools, skills, mock):
    for name in BUNDLED:
        example = json.loads((skills / name / "examples" / "basic.json").read_text())
        progress = []

        async def on_progress(value, total, message):
            progress.append((value, total, message))

        before = len(rule_hits(await journal(mock), f"{name}/"))
        result = await session.call_tool(name, example, progress_callback=on_progress)
        turns = len(rule_hits(await journal(mock), f"{name}/")) - before
        assert not result.is_error, f"{name}: {result.content}"
        assert turns >= 1, f"{name}: no provider request seen"
        turn_updates = [p for p in progress if (p[2] or "").startswith("turn ")]
        assert len(turn_updates) >= turns, f"{name}: {turns} turns but progress {progress}"
        values = [p[0] for p in progress]
        assert values == sorted(values), f"{name}: progress decreased: {values}"
        assert all(p[1] == 100 for p in progress), progress
        jsonschema.validate(result.structured_content, tools[name].output_schema)
        text = json.loads(result.content[0].text)
        assert text == result.structured_content, f"{name}: the text block is not the output"
    ok("tools/call: progress per turn, non-decreasing; structuredContent validates")


async def check_bad_input(session):
    result = await session.call_tool("summarize", {"text": 42, "bogus": True})
    assert result.is_error, result
    assert result.meta and result.meta.get("a2e_code") == "schema_violation", result.meta
    assert result.content[0].text.startswith("schema_violation: "), result.content
    ok("an input that breaks the schema is an isError result with schema_violation")


async def check_unknown_tool(session):
    try:
        await session.call_tool("no-such-skill", {})
    except MCPError as error:
        assert error.error.code == -32602, error.error
        ok("an unknown tool is JSON-RPC error -32602")
        return
    raise AssertionError("an unknown tool was answered with a result")


async def check_failing_skill(session):
    result = await session.call_tool("always-fails", {"text": "x"})
    assert result.is_error, result
    code = (result.meta or {}).get("a2e_code")
    assert isinstance(code, str) and code, result.meta
    assert result.content[0].text.startswith(f"{code}: "), result.content
    ok(f"a failing skill is an isError result naming its code ({code})")


LOG_MESSAGES = []
MODERN_LOGS = []


async def on_log(params):
    LOG_MESSAGES.append(params)


async def on_modern_log(params):
    MODERN_LOGS.append(params)


async def check_logging(session):
    messages = LOG_MESSAGES
    messages.clear()
    await session.set_logging_level("debug")
    result = await session.call_tool("summarize", {"text": "log me"})
    assert not result.is_error, result
    # Over streamable HTTP a log notification is not tied to its request (only progress
    # notifications are), so the server's rmcp sends it on the standalone GET stream, which
    # the client reads concurrently with the POST that carries the result: it may arrive just
    # after the result. Over stdio it always precedes it.
    for _ in range(100):
        if messages:
            break
        await anyio.sleep(0.1)
    assert messages, "no notifications/message at level debug"
    # Let the first call's late notifications (above) land before counting the second's.
    seen = -1
    for _ in range(20):
        if len(messages) == seen:
            break
        seen = len(messages)
        await anyio.sleep(0.5)
    await session.set_logging_level("error")
    messages.clear()
    await session.call_tool("summarize", {"text": "quiet"})
    await anyio.sleep(1.0)  # what the server would wrongly send may come just after the result
    assert not [m for m in messages if m.level in ("debug", "info")], messages
    ok("log and status events are notifications/message at the session's level")


async def check_cancellation(session, mock):
    started = anyio.Event()

    async def on_progress(value, total, message):
        started.set()

    before = len(rule_hits(await journal(mock), "slow-loop"))
    async with anyio.create_task_group() as group:

        async def run():
            await session.call_tool("slow-loop", {"text": "x"}, progress_callback=on_progress)

        group.start_soon(run)
        with anyio.fail_after(30):
            await started.wait()
        # Let the first provider request arrive, then cancel mid-run.
        with anyio.fail_after(30):
            while len(rule_hits(await journal(mock), "slow-loop")) == before:
                await anyio.sleep(0.05)
        group.cancel_scope.cancel()
    at_cancel = len(rule_hits(await journal(mock), "slow-loop"))
    # Unstopped, the skill would send its next turn within ~1.5 s; wait well past that.
    await anyio.sleep(4)
    after = len(rule_hits(await journal(mock), "slow-loop"))
    assert after == at_cancel, f"provider requests after cancel: {at_cancel} -> {after}"
    ok("notifications/cancelled stops the run: no provider request after it")


async def check_concurrent_calls(session):
    results = {}

    async def one(i):
        result = await session.call_tool("summarize", {"text": f"call {i}"})
        assert i not in results, f"call {i} answered twice"
        results[i] = result

    started = anyio.current_time()
    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for i in range(50):
                group.start_soon(one, i)
    elapsed = anyio.current_time() - started
    assert sorted(results) == list(range(50)), sorted(results)
    failed = [i for i, r in results.items() if r.is_error]
    assert not failed, [results[i].content for i in failed]
    ok(f"50 concurrent calls on one session, each answered once ({elapsed:.2f} s)")


async def check_modern_protocol(session, args):
    """A second connection negotiating the newest (2026-07-28, handshake-free) protocol."""
    await session.discover()
    assert session.protocol_version == "2026-07-28", session.protocol_version
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert "summarize" in tools, sorted(tools)
    progress = []

    async def on_progress(value, total, message):
        progress.append(value)

    example = json.loads((Path(args.skills) / "summarize/examples/basic.json").read_text())
    result = await session.call_tool("summarize", example, progress_callback=on_progress)
    assert not result.is_error, result.content
    assert progress, "no progress on the 2026-07-28 protocol"
    jsonschema.validate(result.structured_content, tools["summarize"].output_schema)
    ok("the 2026-07-28 protocol (discover, no initialize): list, call with progress")
    await anyio.sleep(0.5)  # what the server would wrongly send may come just after the result
    assert not MODERN_LOGS, f"log notifications without a logLevel in _meta: {MODERN_LOGS}"
    ok("2026-07-28: no notifications/message for a request without a logLevel")
    async with listen(
        session,
        tools_list_changed=True,
        resource_subscriptions=["skill://summarize/SKILL.md", "file:///etc/passwd"],
    ) as subscription:
        honored = subscription.honored
        assert honored.tools_list_changed, honored
        assert not honored.prompts_list_changed, honored
        assert honored.resource_subscriptions == ["skill://summarize/SKILL.md"], honored
    ok("2026-07-28: subscriptions/listen is acknowledged with the filter the server honors")


async def check_modern_log_level(session, args):
    """A 2026-07-28 connection whose requests carry `logLevel` in `_meta`."""
    await session.discover()
    example = json.loads((Path(args.skills) / "summarize/examples/basic.json").read_text())
    result = await session.call_tool("summarize", example)
    assert not result.is_error, result.content
    for _ in range(50):
        if MODERN_LOGS:
            break
        await anyio.sleep(0.1)
    assert MODERN_LOGS, "no notifications/message at the request's logLevel debug"
    ok("2026-07-28: notifications/message at the logLevel the request's _meta names")


async def run_checks(session, args):
    skills = Path(args.skills)
    init = await session.initialize()
    assert init.server_info.name == "skillet", init.server_info
    assert init.capabilities.tools is not None
    ok(f"initialize (protocol {init.protocol_version})")
    tools = await check_tools(session, skills)
    await check_bundled_calls(session, tools, skills, args.mock)
    await check_bad_input(session)
    await check_unknown_tool(session)
    await check_failing_skill(session)
    await check_logging(session)
    await check_cancellation(session, args.mock)
    await check_concurrent_calls(session)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "http"], required=True)
    parser.add_argument("--skillet")
    parser.add_argument("--url")
    parser.add_argument("--skills", required=True)
    parser.add_argument("--mock", required=True)
    parser.add_argument("--serve-arg", action="append", default=[])
    args = parser.parse_args()
    if args.transport == "stdio":
        params = StdioServerParameters(
            command=args.skillet, args=args.serve_arg, env=dict(os.environ)
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, logging_callback=on_log) as session:
                await run_checks(session, args)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, logging_callback=on_modern_log) as session:
                await check_modern_protocol(session, args)
        async with stdio_client(params) as (read, write):
            async with ClientSession(
                read, write, logging_callback=on_modern_log, log_level="debug"
            ) as session:
                await check_modern_log_level(session, args)
    else:
        async with streamable_http_client(args.url) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write, logging_callback=on_log) as session:
                await run_checks(session, args)
        async with streamable_http_client(args.url) as streams:
            async with ClientSession(
                streams[0], streams[1], logging_callback=on_modern_log
            ) as session:
                await check_modern_protocol(session, args)
        async with streamable_http_client(args.url) as streams:
            async with ClientSession(
                streams[0], streams[1], logging_callback=on_modern_log, log_level="debug"
            ) as session:
                await check_modern_log_level(session, args)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except BaseException as error:  # noqa: BLE001 - report and fail
        import traceback

        traceback.print_exception(error)
        sys.exit(1)
