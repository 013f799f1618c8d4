"""The official MCP Python SDK reads the files a skill run produced from its `tools/call`
result: one embedded resource per file, a binary file as a base64 blob with its MIME type.

Usage: mcp_produced_files.py SKILLET CONFIG SKILLS_DIR PNG_BASE64

Driven by cli/tests/run/produced_files.rs (skill `png-maker`, whose script writes `dot.png` and
`note.md`). Prints `OK` when every check passes; any failure raises (non-zero exit).
"""

import asyncio
import base64
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import BlobResourceContents, EmbeddedResource, TextResourceContents

SKILLET, CONFIG, SKILLS, PNG = sys.argv[1:5]


async def main():
    params = StdioServerParameters(
        command=SKILLET,
        args=["--config", CONFIG, "--skills-dir", SKILLS, "serve", "--mcp"],
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("png-maker", {"prompt": "make it"})
            assert not result.is_error, result
            embedded = {
                str(block.resource.uri): block.resource
                for block in result.content
                if isinstance(block, EmbeddedResource)
            }
            assert set(embedded) == {"artifact:///dot.png", "artifact:///note.md"}, embedded
            png = embedded["artifact:///dot.png"]
            assert isinstance(png, BlobResourceContents), png
            assert png.mime_type == "image/png", png.mime_type
            assert base64.b64decode(png.blob) == base64.b64decode(PNG), "the bytes come back"
            note = embedded["artifact:///note.md"]
            assert isinstance(note, TextResourceContents), note
            assert (note.mime_type, note.text) == ("text/markdown", "# made\n"), note
    print("OK", flush=True)


asyncio.run(main())
