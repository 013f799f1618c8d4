"""The official `ollama` client against mock-llm: plain, streamed, tool round trip, thinking,
429."""
import sys

import ollama

from _mock import check, queue_fault

base = sys.argv[1]
client = ollama.Client(host=base)
model = "llama3:latest"

check(len(client.list().models) >= 1, "tags")
r = client.chat(model=model, messages=[{"role": "user", "content": "hello"}])
check(r.message.content == "Hello from mock-llm!", f"plain: {r}")
check(r.done and r.done_reason == "stop", "plain done")
print("ok ollama plain")

parts = [c.message.content for c in client.chat(model=model, messages=[{"role": "user", "content": "hello"}], stream=True)]
check("".join(parts) == "Hello from mock-llm!", f"stream: {parts}")
print("ok ollama stream")

tools = [{"type": "function", "function": {"name": "get_weather", "description": "weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
messages = [{"role": "user", "content": "what is the weather?"}]
r = client.chat(model=model, messages=messages, tools=tools)
call = r.message.tool_calls[0]
check(call.function.name == "get_weather" and call.function.arguments == {"city": "Paris"}, f"tool: {call}")
messages += [r.message, {"role": "tool", "tool_name": "get_weather", "content": "sunny"}]
r = client.chat(model=model, messages=messages, tools=tools)
check(r.message.content == "It is sunny in Paris.", f"tool answer: {r}")
print("ok ollama tool round trip")

# A thinking model (`think=True`): the client reads `message.thinking`, whole and streamed.
thought = "The user asks about the weather. I should call get_weather."
ponder = [{"role": "user", "content": "ponder the weather"}]
r = client.chat(model=model, messages=ponder, tools=tools, think=True)
check(r.message.thinking == thought, f"thinking: {r.message}")
check(r.message.tool_calls[0].function.name == "get_weather", f"then the call: {r.message}")
streamed = "".join(c.message.thinking or "" for c in client.chat(model=model, messages=ponder, tools=tools, think=True, stream=True))
check(streamed == thought, f"streamed thinking: {streamed!r}")
print("ok ollama thinking")

queue_fault(base, kind="rate_limit", retry_after=1, message="too many requests")
try:
    client.chat(model=model, messages=[{"role": "user", "content": "hello"}])
    raise AssertionError("429 not raised")
except ollama.ResponseError as e:
    check(e.status_code == 429, f"status {e.status_code}")
    check("too many requests" in e.error, e.error)
print("ok ollama 429 -> ResponseError(429)")
