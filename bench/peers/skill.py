"""What the peers read of a Skillet skill folder: its instructions rendered with the call's
arguments (the same text Skillet sends as the system prompt), its output schema, its tools, its
turn limit, and its eval cases with the checks that decide whether an answer is correct.

Templates follow engine/src/template: `{{ name }}` / `{{ a.b }}` placeholders, strings as they
are, everything else as compact JSON; `\\{{` is a literal `{{`.
"""

import json
import os
import re

_PLACEHOLDER = re.compile(r"(\\?)\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}")


class SkillError(ValueError):
    """A skill folder the peers cannot use, with the file and the reason."""


def compact(value) -> str:
    """JSON as Skillet writes it: compact, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _frontmatter(text: str, path: str) -> tuple[dict, str]:
    if not text.startswith("---\n"):
        raise SkillError(f"{path}: no frontmatter")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise SkillError(f"{path}: the frontmatter is not closed by ---")
    head, body = text[4:end], text[end + 5 :]
    meta, in_metadata = {}, False
    for line in head.splitlines():
        if line.startswith("metadata:"):
            in_metadata = True
            continue
        match = re.match(r"^(\s*)([A-Za-z0-9_-]+):\s*(.*)$", line)
        if not match:
            continue
        indent, key, value = match.groups()
        if indent and not in_metadata:
            continue
        if not indent:
            in_metadata = False
        if value.startswith("'") and value.endswith("'"):
            value = value[1:-1].replace("''", "'")
        meta[key] = value
    return meta, body


class Skill:
    """One skill folder, read once."""

    def __init__(self, folder: str):
        self.folder = folder
        path = os.path.join(folder, "SKILL.md")
        with open(path, encoding="utf-8") as f:
            self.meta, self.body = _frontmatter(f.read(), path)
        self.name = self.meta.get("name") or os.path.basename(folder.rstrip("/"))
        self.tools = json.loads(self.meta.get("a2e-tools", "[]"))
        self.max_turns = int(self.meta.get("a2e-max-turns", "8"))
        schema = self.meta.get("a2a-output-schema", "assets/output.schema.json")
        with open(os.path.join(folder, schema), encoding="utf-8") as f:
            self.output_schema = json.load(f)

    def instructions(self, arguments: dict) -> str:
        """The body rendered with `arguments`, trimmed as Skillet trims it."""

        def value(match):
            escaped, dotted = match.groups()
            if escaped:
                return match.group(0)[1:]
            current = arguments
            for segment in dotted.split("."):
                if isinstance(current, list) and segment.isdigit() and int(segment) < len(current):
                    current = current[int(segment)]
                elif isinstance(current, dict) and segment in current:
                    current = current[segment]
                else:
                    raise SkillError(f"{self.name}: the template needs `{dotted}`, not in the arguments")
            return current if isinstance(current, str) else compact(current)

        return _PLACEHOLDER.sub(value, self.body).strip()

    def cases(self) -> list[dict]:
        """The eval cases that reach the model (`name`, `arguments`, `expect`), from
        evals/evals.json; cases refused before the model runs (`error_code`) are left out."""
        path = os.path.join(self.folder, "evals", "evals.json")
        with open(path, encoding="utf-8") as f:
            evals = json.load(f)["evals"]
        cases = []
        for case in evals:
            expect = case.get("expect", {})
            if "error_code" in expect:
                continue
            arguments = case.get("arguments")
            if "arguments_file" in case:
                with open(os.path.join(self.folder, case["arguments_file"]), encoding="utf-8") as f:
                    arguments = json.load(f)
            cases.append({"name": case["name"], "arguments": arguments, "expect": expect})
        return cases


def _pointer(document, pointer: str):
    current = document
    for raw in pointer.split("/")[1:]:
        segment = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(current, list) and segment.isdigit() and int(segment) < len(current):
            current = current[int(segment)]
        elif isinstance(current, dict) and segment in current:
            current = current[segment]
        else:
            raise KeyError(pointer)
    return current


def failed_checks(expect: dict, output, tools_called: list[str]) -> list[str]:
    """The eval expectations `output` and the tool calls miss (empty: correct). Reads `output`
    checks (`equals`, `regex`) and `tools.called`; the judge's prose expectations are not read."""
    misses = []
    for check in expect.get("output", []):
        pointer = check["pointer"]
        try:
            actual = _pointer(output, pointer)
        except KeyError:
            misses.append(f"{pointer} missing")
            continue
        if "equals" in check and actual != check["equals"]:
            misses.append(f"{pointer} is {compact(actual)}, not {compact(check['equals'])}")
        if "regex" in check and not (isinstance(actual, str) and re.search(check["regex"], actual)):
            misses.append(f"{pointer} does not match {check['regex']}")
    for tool in expect.get("tools", {}).get("called", []):
        if tool not in tools_called:
            misses.append(f"{tool} not called")
    return misses
