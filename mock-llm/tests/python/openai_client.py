"""The official `openai` client against mock-llm: plain, streamed, tool round trip, 429."""
import json
import sys

import openai

from _mock import check, journal, queue_fault, reset

base = sys.argv[1]
client = openai.OpenAI(base_url=base + "/v1", api_key="sk-python-test", max_retries=0)
model = "gpt-4o-mini"

r = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hello"}])
check(r.choices[0].message.content == "Hello from mock-llm!", f"plain: {r}")
check(r.choices[0].finish_reason == "stop", "plain finish")
print("ok openai plain")

stream = client.chat.completions.create(
    model=model,
    messages=[{"role": "user", "content": "hello"}],
    stream=True,
    stream_options={"include_usage": True},
)
parts, usage = [], None
for chunk in stream:
    for c in chunk.choices:
        parts.append(c.delta.content or "")
    usage = chunk.usage or usage
check("".join(parts) == "Hello from mock-llm!", f"stream: {parts}")
check(usage is not None and usage.total_tokens > 0, "stream usage")
print("ok openai stream")

tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
messages = [{"role": "user", "content": "what is the weather?"}]
r = client.chat.completions.create(model=model, messages=messages, tools=tools)
call = r.choices[0].message.tool_calls[0]
check(r.choices[0].finish_reason == "tool_calls", "tool finish")
check(call.function.name == "get_weather", "tool name")
check(json.loads(call.function.arguments) == {"city": "Paris"}, "tool args")
messages += [r.choices[0].message.model_dump(exclude_none=True),
             {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21C"}]
r = client.chat.completions.create(model=model, messages=messages, tools=tools)
check(r.choices[0].message.content == "It is sunny in Paris.", f"tool answer: {r}")
print("ok openai tool round trip")

queue_fault(base, kind="rate_limit", retry_after=1)
try:
    client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hello"}])
    raise AssertionError("429 not raised")
except openai.RateLimitError as e:
    check(e.status_code == 429, "status")
    check(e.response.headers.get("retry-after") == "1", "retry-after header")
print("ok openai 429 -> RateLimitError")

# With its default retries the SDK honours retry-after-ms and succeeds on the second try.
reset(base)
queue_fault(base, kind="rate_limit", retry_after_ms=20)
retrying = openai.OpenAI(base_url=base + "/v1", api_key="sk-python-test")
r = retrying.chat.completions.create(model=model, messages=[{"role": "user", "content": "hello"}])
check(r.choices[0].message.content == "Hello from mock-llm!", "after retry")
check(len(journal(base)) == 2, "one retry")
print("ok openai retry after 429")

# Cached and reasoning tokens in the usage details.
r = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "answer from the cache"}])
check(r.usage.prompt_tokens_details.cached_tokens == 1000, f"cached: {r.usage}")
check(r.usage.completion_tokens_details.reasoning_tokens == 4, f"reasoning: {r.usage}")
print("ok openai cached and reasoning usage")
