"""One skill call done by a peer framework — PydanticAI or the OpenAI Agents SDK — the way a user
of that framework would write it: the skill's rendered SKILL.md body as the instructions, the
call's arguments (compact JSON) as the user message, as Skillet sends them; the output type
built from the skill's output schema (schema_model.py) and asked of the server as the
framework's native structured output (`json_schema`); the skill's tools as plain Python
functions (tools.py); the skill's turn limit.

`run(system, skill, arguments, base_url, model, settings)` returns a `PeerResult`; a framework
that raises counts as no valid answer, with the error's first line.

`run_rig(binary, ...)` does the same call with rig's typed agent: the Rust program in rig/
(built by `compare.sh --rig`), given the same instructions, user message, limits and settings
as a JSON job on its stdin; its tools and output types are Rust copies (rig/src/).
"""

import asyncio
import dataclasses
import functools
import json
import subprocess

from skill import Skill, compact
from schema_model import model_from_schema
import tools as tool_functions

SYSTEMS = ("pydantic-ai", "agents-sdk")


@dataclasses.dataclass
class PeerResult:
    valid: bool
    output: object = None
    error: str = ""
    tools_called: list = dataclasses.field(default_factory=list)


def _recording(fn, called: list, on_error):
    """`fn` as the framework will call it, noting each call; a tool error goes back to the model
    the framework's way (`on_error`), as Skillet sends a tool error back."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        called.append(fn.__name__)
        try:
            return fn(*args, **kwargs)
        except ValueError as e:
            return on_error(e)

    return wrapper


def _tools(skill: Skill, called: list, on_error):
    missing = [name for name in skill.tools if name not in tool_functions.BY_NAME]
    if missing:
        raise ValueError(f"{skill.name}: no Python copy of the tools {missing} (bench/peers/tools.py)")
    return [_recording(tool_functions.BY_NAME[name], called, on_error) for name in skill.tools]


async def _pydantic_ai(skill, arguments, base_url, model, settings, called):
    from pydantic_ai import Agent, ModelRetry, NativeOutput
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    def retry(error):
        raise ModelRetry(str(error))

    agent = Agent(
        OpenAIChatModel(model, provider=OpenAIProvider(base_url=base_url, api_key="unused")),
        instructions=skill.instructions(arguments),
        output_type=NativeOutput(model_from_schema(skill.output_schema)),
        tools=_tools(skill, called, retry),
        model_settings=settings or None,
    )
    result = await agent.run(
        compact(arguments), usage_limits=UsageLimits(request_limit=skill.max_turns)
    )
    return result.output.model_dump()


async def _agents_sdk(skill, arguments, base_url, model, settings, called):
    from agents import (
        Agent,
        ModelSettings,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)  # the SDK would otherwise export traces to OpenAI
    seed = settings.get("seed")
    agent = Agent(
        name=skill.name,
        instructions=skill.instructions(arguments),
        tools=[function_tool(fn) for fn in _tools(skill, called, lambda e: f"error: {e}")],
        output_type=model_from_schema(skill.output_schema),
        model=OpenAIChatCompletionsModel(
            model=model, openai_client=AsyncOpenAI(base_url=base_url, api_key="unused")
        ),
        model_settings=ModelSettings(
            temperature=settings.get("temperature"),
            max_tokens=settings.get("max_tokens"),
            extra_args={"seed": seed} if seed is not None else None,
        ),
    )
    result = await Runner.run(agent, compact(arguments), max_turns=skill.max_turns)
    return result.final_output.model_dump()


async def run(system, skill, arguments, base_url, model, settings=None, timeout=300):
    """One call of `skill` with `arguments` by `system` against the OpenAI-compatible server at
    `base_url`. `settings`: temperature, max_tokens, seed (each optional)."""
    runner = {"pydantic-ai": _pydantic_ai, "agents-sdk": _agents_sdk}[system]
    called = []
    try:
        output = await asyncio.wait_for(
            runner(skill, arguments, base_url, model, dict(settings or {}), called), timeout
        )
        return PeerResult(valid=True, output=output, tools_called=called)
    except Exception as e:  # a peer that raises answered nothing valid: say why, in one line
        first = (str(e).strip().splitlines() or [""])[0]
        return PeerResult(valid=False, error=f"{type(e).__name__}: {first}"[:300], tools_called=called)


def run_rig(binary, skill, arguments, base_url, model, settings=None, timeout=300):
    """One call of `skill` by rig's typed agent (rig/src/main.rs) against `base_url`."""
    job = {
        "base_url": base_url, "model": model, "skill": skill.name,
        "instructions": skill.instructions(arguments), "prompt": compact(arguments),
        "max_turns": skill.max_turns, "settings": dict(settings or {}),
    }
    try:
        done = subprocess.run([binary], input=json.dumps(job), capture_output=True, text=True,
                              timeout=timeout)
        answer = json.loads(done.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError) as e:
        lines = (getattr(e, "stderr", None) or str(e)).strip().splitlines() or [""]
        return PeerResult(valid=False, error=f"rig: {lines[-1]}"[:300])
    return PeerResult(valid=answer["valid"], output=answer.get("output"),
                      error=f"rig: {answer.get('error', '')}"[:300],
                      tools_called=answer.get("tools_called", []))
