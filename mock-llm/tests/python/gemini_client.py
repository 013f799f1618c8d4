"""The official `google-genai` client against mock-llm: plain, streamed, function-call round trip,
structured output (response schema), thought summary with signatures, cached/thought token
counts, 429."""
import sys

from google import genai
from google.genai import errors, types

from _mock import check, journal, queue_fault

base = sys.argv[1]
KEY = "gemini-canary-key-3c1f"
client = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=base, retry_options=types.HttpRetryOptions(attempts=1)))
model = "gemini-2.5-flash"

r = client.models.generate_content(model=model, contents="hello")
check(r.text == "Hello from mock-llm!", f"plain: {r}")
check(r.candidates[0].finish_reason == types.FinishReason.STOP, f"finish: {r.candidates[0]}")
check(r.response_id, "response id")
print("ok gemini plain")

parts = [c.text or "" for c in client.models.generate_content_stream(model=model, contents="hello")]
check("".join(parts) == "Hello from mock-llm!", f"stream: {parts}")
check(len(parts) > 1, f"stream in pieces: {parts}")
print("ok gemini stream")

weather = types.FunctionDeclaration(
    name="get_weather",
    description="weather",
    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
no_auto = types.AutomaticFunctionCallingConfig(disable=True)
config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[weather])], automatic_function_calling=no_auto)
contents = [types.Content(role="user", parts=[types.Part(text="what is the weather?")])]
r = client.models.generate_content(model=model, contents=contents, config=config)
call = r.function_calls[0]
check(call.name == "get_weather" and call.args == {"city": "Paris"}, f"tool: {call}")
contents += [
    r.candidates[0].content,
    types.Content(role="user", parts=[types.Part.from_function_response(name="get_weather", response={"output": "sunny"})]),
]
r = client.models.generate_content(model=model, contents=contents, config=config)
check(r.text == "It is sunny in Paris.", f"tool answer: {r}")
streamed_calls = [fc for c in client.models.generate_content_stream(model=model, contents=contents[:1], config=config) for fc in (c.function_calls or [])]
check([fc.name for fc in streamed_calls] == ["get_weather"], f"streamed call: {streamed_calls}")
print("ok gemini function call round trip")

schema = {"type": "object", "properties": {"answer": {"type": "string"}, "score": {"type": "integer"}}, "required": ["answer", "score"]}
json_config = types.GenerateContentConfig(response_mime_type="application/json", response_json_schema=schema)
r = client.models.generate_content(model=model, contents="answer in JSON", config=json_config)
check(isinstance(r.parsed, dict) and isinstance(r.parsed["answer"], str) and isinstance(r.parsed["score"], int), f"parsed: {r.text}")
print("ok gemini structured output")

thought = "The user asks about the weather. I should call get_weather."
thinking = types.GenerateContentConfig(
    tools=[types.Tool(function_declarations=[weather])],
    automatic_function_calling=no_auto,
    thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=1024),
)
r = client.models.generate_content(model=model, contents="ponder the weather", config=thinking)
parts = r.candidates[0].content.parts
check(parts[0].thought and parts[0].text == thought, f"thought: {parts[0]}")
call_part = next(p for p in parts if p.function_call)
check(call_part.thought_signature, f"signature on the call: {call_part}")
print("ok gemini thinking")

r = client.models.generate_content(model=model, contents="read it from the cache")
u = r.usage_metadata
check(u.prompt_token_count == 1200 and u.cached_content_token_count == 1000 and u.thoughts_token_count == 4, f"usage: {u}")
check(u.candidates_token_count == 4, f"candidates exclude thoughts: {u}")
print("ok gemini usage")

sent = [e for e in journal(base) if e["endpoint"] == "gemini.generate_content"]
check(all(KEY not in e["path"] for e in sent), "key in a path")
check(all(("x-goog-api-key", "[REDACTED]") in [tuple(h) for h in e["headers"]] for e in sent), "key header")
print("ok gemini key in header only")

queue_fault(base, kind="rate_limit", retry_after=1, message="too many requests")
try:
    client.models.generate_content(model=model, contents="hello")
    raise AssertionError("429 not raised")
except errors.ClientError as e:
    check(e.code == 429, f"status {e.code}")
    check(e.status == "RESOURCE_EXHAUSTED", f"status name {e.status}")
print("ok gemini 429 -> ClientError(429)")
