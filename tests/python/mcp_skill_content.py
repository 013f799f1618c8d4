"""Drives skillet's MCP prompts, completion, resources and the skills extension (SEP-2640,
`io.modelcontextprotocol/skills`) with the official MCP Python SDK (`mcp`).

Run by tests/tests/mcp_skill_content_python.rs over stdio (this script spawns `skillet ...
serve --mcp`) and over streamable HTTP (the Rust test passes the /mcp URL). Each check prints
`ok: NAME`; any failure raises, so the exit status is non-zero.

The SDK has no skills-extension client, so `skills/list` and `skills/get` go through the
session's generic `send_request` with request types declared here from the extension's spec.

Arguments: --transport stdio|http, --skillet PATH (stdio), --url URL (http), --test-skills DIR
(the test's skills, with `tone-rewrite`), --serve-arg ARG (repeatable: the stdio server command
line). Each transport runs a 2025-11-25 session (initialize) and the 2026-07-28 protocol
(discover, no session).
"""

import argparse
import base64
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp import types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

EXTENSION = "io.modelcontextprotocol/skills"
ANY = TypeAdapter(dict[str, Any])


class ListSkillsRequest(types.PaginatedRequest[Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"


class GetSkillParams(types.RequestParams):
    uri: str


class GetSkillRequest(types.Request[GetSkillParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"


def ok(name):
    print(f"ok: {name}", flush=True)


async def refused(call, code=-32602):
    """`call` must fail with JSON-RPC error `code`; returns the error's message."""
    try:
        await call
    except MCPError as error:
        assert error.error.code == code, (error.error.code, error.error.message)
        return error.error.message
    raise AssertionError(f"expected error {code}, got a result")


async def check_prompts(session):
    prompts = {p.name: p for p in (await session.list_prompts()).prompts}
    tools = {t.name for t in (await session.list_tools()).tools}
    assert set(prompts) == tools, (sorted(prompts), sorted(tools))
    summarize = prompts["summarize"]
    arguments = {a.name: a for a in summarize.arguments}
    assert set(arguments) == {"text", "max_words"}, arguments
    assert arguments["text"].required is True and arguments["max_words"].required is False
    assert arguments["text"].description == "The text to summarize.", arguments["text"]
    assert "an integer" in arguments["max_words"].description, arguments["max_words"]
    tone = {a.name: a for a in prompts["tone-rewrite"].arguments}
    assert "one of: formal, casual, pirate" in tone["tone"].description, tone["tone"]
    ok("prompts/list: every tool is a prompt; arguments from the input schema")

    result = await session.get_prompt(
        "tone-rewrite", {"text": "hello there", "tone": "pirate", "max_words": "12"}
    )
    assert [m.role for m in result.messages] == ["user", "user"], result.messages
    instructions = result.messages[0].content.text
    assert "Rewrite `hello there` in a pirate tone" in instructions, instructions
    assert "## Output format" in instructions, instructions
    request = json.loads(result.messages[1].content.text)
    assert request == {"text": "hello there", "tone": "pirate", "max_words": 12}, request
    ok("prompts/get: the rendered instructions and the typed arguments as user messages")

    plain = await session.get_prompt("plain-notes", {"prompt": "note this"})
    assert plain.messages[0].content.text.startswith("Take notes"), plain.messages
    assert plain.messages[1].content.text == "note this", plain.messages
    ok("prompts/get: a skill without an input schema takes a free-text prompt")

    message = await refused(session.get_prompt("no-such-skill", {}))
    assert "unknown prompt" in message, message
    message = await refused(session.get_prompt("tone-rewrite", {"tone": "pirate"}))
    assert "missing required argument `text`" in message, message
    message = await refused(
        session.get_prompt("tone-rewrite", {"text": "x", "tone": "casual", "max_words": "many"})
    )
    assert "must be an integer" in message, message
    message = await refused(session.get_prompt("tone-rewrite", {"text": "x", "tone": "angry"}))
    assert "schema" in message, message
    ok("prompts/get refusals: unknown, missing, wrong type, against the schema: -32602")


async def check_completion(session):
    ref = types.PromptReference(type="ref/prompt", name="tone-rewrite")
    result = await session.complete(ref, {"name": "tone", "value": "p"})
    assert result.completion.values == ["pirate"], result.completion
    result = await session.complete(ref, {"name": "tone", "value": ""})
    assert result.completion.values == ["formal", "casual", "pirate"], result.completion
    assert result.completion.total == 3, result.completion
    result = await session.complete(ref, {"name": "text", "value": "he"})
    assert result.completion.values == [], result.completion
    template = types.ResourceTemplateReference(
        type="ref/resource", uri="skill://{skill}/{+path}"
    )
    result = await session.complete(template, {"name": "skill", "value": "tone"})
    assert result.completion.values == ["tone-rewrite"], result.completion
    result = await session.complete(
        template, {"name": "path", "value": "re"}, context_arguments={"skill": "tone-rewrite"}
    )
    assert result.completion.values == ["reference.md"], result.completion
    await refused(session.complete(ref, {"name": "nope", "value": ""}))
    await refused(
        session.complete(types.PromptReference(type="ref/prompt", name="zzz"), {"name": "a", "value": ""})
    )
    ok("completion/complete: enum values, template variables; unknown ones -32602")


async def check_resources(session, test_skills, legacy):
    listed = []
    cursor = None
    while True:
        page = await session.list_resources(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
        )
        listed.extend(page.resources)
        cursor = page.next_cursor
        if not cursor:
            break
    by_uri = {str(r.uri): r for r in listed}
    base = "skill://tone-rewrite/"
    for path in ["SKILL.md", "reference.md", "assets/input.schema.json", "assets/logo.png"]:
        assert base + path in by_uri, sorted(by_uri)
    for hidden in ["evals/evals.json", "mock-scenario.yaml", ".secret", "leak"]:
        assert base + hidden not in by_uri, hidden
    skill_md = by_uri[base + "SKILL.md"]
    assert skill_md.name == "tone-rewrite" and skill_md.mime_type == "text/markdown"
    assert "skill://summarize/SKILL.md" in by_uri
    ok(f"resources/list: SKILL.md and the files beside it ({len(listed)} resources)")

    folder = Path(test_skills) / "tone-rewrite"
    read = await session.read_resource(base + "SKILL.md")
    assert read.contents[0].text == (folder / "SKILL.md").read_text(), read.contents
    logo = await session.read_resource(base + "assets/logo.png")
    blob = logo.contents[0]
    assert isinstance(blob, types.BlobResourceContents), blob
    assert base64.b64decode(blob.blob) == (folder / "assets/logo.png").read_bytes()
    assert blob.mime_type == "image/png", blob.mime_type
    ok("resources/read: text as text, binary as a base64 blob")

    not_found = -32002 if legacy else -32602
    for uri, code in [
        (base + "../summarize/SKILL.md", -32602),
        (base + "%2e%2e/summarize/SKILL.md", -32602),
        (base + "leak", -32602),
        ("file:///etc/passwd", -32602),
        (base + "evals/evals.json", not_found),
        (base + ".secret", not_found),
        (base + "missing.md", not_found),
        ("skill://no-such-skill/SKILL.md", not_found),
        ("skill://blocked-skill/SKILL.md", not_found),
    ]:
        await refused(session.read_resource(uri), code)
    ok(f"resources/read refusals: escapes -32602, unknown {not_found}, each once")

    templates = await session.list_resource_templates()
    assert [t.uri_template for t in templates.resource_templates] == ["skill://{skill}/{+path}"]
    ok("resources/templates/list: the skill-file template")


async def check_skills_extension(session, test_skills):
    listed = await session.send_request(ListSkillsRequest(), ANY)
    entries = {e["uri"]: e for e in listed["skills"]}
    assert "skill://tone-rewrite/SKILL.md" in entries, sorted(entries)
    assert "skill://blocked-skill/SKILL.md" not in entries, sorted(entries)
    entry = entries["skill://tone-rewrite/SKILL.md"]
    folder = Path(test_skills) / "tone-rewrite"
    assert entry["frontmatter"]["name"] == "tone-rewrite", entry["frontmatter"]
    assert entry["frontmatter"]["license"] == "MIT", entry["frontmatter"]
    assert entry["frontmatter"]["metadata"]["a2a-input-schema"] == "assets/input.schema.json"
    manifest = {r["uri"]: r for r in entry["resources"]}
    expected = ["SKILL.md", "assets/input.schema.json", "assets/logo.png", "assets/output.schema.json", "reference.md"]
    assert sorted(manifest) == sorted("skill://tone-rewrite/" + p for p in expected), sorted(manifest)
    for path in expected:
        data = (folder / path).read_bytes()
        item = manifest["skill://tone-rewrite/" + path]
        assert item["size"] == len(data), (path, item)
        assert item["digest"] == "sha256:" + hashlib.sha256(data).hexdigest(), (path, item)
    # The digest covers the bytes resources/read serves.
    read = await session.read_resource("skill://tone-rewrite/reference.md")
    served = read.contents[0].text.encode()
    assert manifest["skill://tone-rewrite/reference.md"]["digest"] == (
        "sha256:" + hashlib.sha256(served).hexdigest()
    )
    ok("skills/list: verbatim frontmatter, complete manifest, SHA-256 digests of the served bytes")

    got = await session.send_request(
        GetSkillRequest(params=GetSkillParams(uri="skill://tone-rewrite/SKILL.md")), ANY
    )
    assert got["skill"] == entry, got
    for uri in [
        "skill://no-such-skill/SKILL.md",
        "skill://tone-rewrite/reference.md",
        "skill://blocked-skill/SKILL.md",
        "skill://../SKILL.md",
    ]:
        await refused(session.send_request(GetSkillRequest(params=GetSkillParams(uri=uri)), ANY))
    ok("skills/get: the same entry; unknown or non-SKILL.md URIs -32602")


async def run_session(session, args):
    init = await session.initialize()
    caps = init.capabilities
    assert caps.prompts is not None and caps.completions is not None, caps
    assert caps.resources is not None, caps
    assert caps.extensions and EXTENSION in caps.extensions, caps
    ok(f"initialize ({init.protocol_version}): prompts, completions, resources, {EXTENSION}")
    await check_prompts(session)
    await check_completion(session)
    await check_resources(session, args.test_skills, legacy=True)
    await check_skills_extension(session, args.test_skills)


async def run_modern(session, args):
    await session.discover()
    assert session.protocol_version == "2026-07-28", session.protocol_version
    result = await session.get_prompt("tone-rewrite", {"text": "hi", "tone": "formal"})
    assert "Rewrite `hi` in a formal tone" in result.messages[0].content.text
    await check_resources(session, args.test_skills, legacy=False)
    await check_skills_extension(session, args.test_skills)
    ok("the 2026-07-28 protocol: prompts, resources and skills the same way")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "http"], required=True)
    parser.add_argument("--skillet")
    parser.add_argument("--url")
    parser.add_argument("--test-skills", required=True)
    parser.add_argument("--serve-arg", action="append", default=[])
    args = parser.parse_args()
    for runner in [run_session, run_modern]:
        if args.transport == "stdio":
            params = StdioServerParameters(
                command=args.skillet, args=args.serve_arg, env=dict(os.environ)
            )
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await runner(session, args)
        else:
            async with streamable_http_client(args.url) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await runner(session, args)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except BaseException as error:  # noqa: BLE001 - report and fail
        import traceback

        traceback.print_exception(error)
        sys.exit(1)
