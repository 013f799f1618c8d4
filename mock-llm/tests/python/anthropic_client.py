"""The official `anthropic` client against mock-llm: plain, streamed, tool round trip, 429,
prompt-cache usage, extended thinking blocks."""
import sys

import anthropic

from _mock import check, journal, queue_fault, reset

base = sys.argv[1]
client = anthropic.Anthropic(base_url=base, api_key="sk-ant-python-test", max_retries=0)
model = "claude-mock"

r = client.messages.create(model=model, max_tokens=64, messages=[{"role": "user", "content": "hello"}])
check(r.content[0].text == "Hello from mock-llm!", f"plain: {r}")
check(r.stop_reason == "end_turn", "plain stop")
print("ok anthropic plain")

with client.messages.stream(model=model, max_tokens=64, messages=[{"role": "user", "content": "hello"}]) as s:
    text = "".join(s.text_stream)
    final = s.get_final_message()
check(text == "Hello from mock-llm!", f"stream: {text}")
check(final.usage.output_tokens > 0, "stream usage")
print("ok anthropic stream")

tools = [{"name": "get_weather", "description": "weather by city", "input_schema": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
messages = [{"role": "user", "content": "what is the weather?"}]
r = client.messages.create(model=model, max_tokens=64, messages=messages, tools=tools)
check(r.stop_reason == "tool_use", "tool stop")
use = [b for b in r.content if b.type == "tool_use"][0]
check(use.name == "get_weather" and use.input == {"city": "Paris"}, f"tool use: {use}")
messages += [{"role": "assistant", "content": [b.model_dump() for b in r.content]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}]}]
r = client.messages.create(model=model, max_tokens=64, messages=messages, tools=tools)
check(r.content[0].text == "It is sunny in Paris.", f"tool answer: {r}")
print("ok anthropic tool round trip")

# The streamed tool call is assembled from input_json_delta fragments by the SDK.
with client.messages.stream(model=model, max_tokens=64, messages=messages[:1], tools=tools) as s:
    final = s.get_final_message()
check([b.input for b in final.content if b.type == "tool_use"] == [{"city": "Paris"}], "streamed tool")
print("ok anthropic streamed tool call")

queue_fault(base, kind="rate_limit", retry_after=1)
try:
    client.messages.create(model=model, max_tokens=64, messages=[{"role": "user", "content": "hello"}])
    raise AssertionError("429 not raised")
except anthropic.RateLimitError as e:
    check(e.status_code == 429, "status")
print("ok anthropic 429 -> RateLimitError")

reset(base)
queue_fault(base, kind="overloaded", retry_after_ms=20)
retrying = anthropic.Anthropic(base_url=base, api_key="sk-ant-python-test")
r = retrying.messages.create(model=model, max_tokens=64, messages=[{"role": "user", "content": "hello"}])
check(r.content[0].text == "Hello from mock-llm!", "after retry")
check(len(journal(base)) == 2, "one retry")
print("ok anthropic retry after 529")

# Prompt caching: the SDK sends cache_control breakpoints and reads the cache counts back.
reset(base)
cached_tools = [dict(tools[0], cache_control={"type": "ephemeral"})]
system = [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
ask = [{"role": "user", "content": "answer from the cache"}]
r = client.messages.create(model=model, max_tokens=64, system=system, tools=cached_tools, messages=ask)
check(r.usage.cache_read_input_tokens == 1000, f"cache read: {r.usage}")
check(r.usage.cache_creation_input_tokens == 150, f"cache write: {r.usage}")
check(r.usage.input_tokens == 50, f"uncached input: {r.usage}")
with client.messages.stream(model=model, max_tokens=64, system=system, messages=ask) as s:
    final = s.get_final_message()
check(final.usage.cache_read_input_tokens == 1000, f"streamed cache read: {final.usage}")
check(final.usage.cache_creation_input_tokens == 150, f"streamed cache write: {final.usage}")
body = journal(base)[0]["body"]
check(body["system"][0]["cache_control"] == {"type": "ephemeral"}, "breakpoint reached the mock")
print("ok anthropic prompt cache usage")

# Extended thinking: the SDK reads the thinking block and its signature, whole and streamed, and
# the block goes back unchanged with the tool's result.
reset(base)
thought = "The user asks about the weather. I should call get_weather."
ponder = [{"role": "user", "content": "ponder the weather"}]
thinking = {"type": "enabled", "budget_tokens": 1024}
r = client.messages.create(model=model, max_tokens=2048, thinking=thinking, messages=ponder, tools=tools)
block = r.content[0]
check(block.type == "thinking" and block.thinking == thought, f"thinking: {r.content}")
check(block.signature.startswith("sig_mock_"), f"signature: {block}")
check(r.content[1].type == "tool_use" and r.stop_reason == "tool_use", f"then the call: {r.content}")
with client.messages.stream(model=model, max_tokens=2048, thinking=thinking, messages=ponder, tools=tools) as s:
    final = s.get_final_message()
streamed = final.content[0]
check(streamed.type == "thinking" and streamed.thinking == thought, f"streamed thinking: {final.content}")
check(streamed.signature.startswith("sig_mock_"), f"streamed signature: {streamed}")
use = r.content[1]
follow = ponder + [
    {"role": "assistant", "content": [b.model_dump() for b in r.content]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}]},
]
r = client.messages.create(model=model, max_tokens=2048, thinking=thinking, messages=follow, tools=tools)
check(r.content[0].text == "It is sunny in Paris.", f"after thinking: {r}")
sent = journal(base)[-1]["body"]["messages"][1]["content"][0]
check(sent == {"type": "thinking", "thinking": thought, "signature": block.signature}, f"echoed: {sent}")
print("ok anthropic thinking blocks")
