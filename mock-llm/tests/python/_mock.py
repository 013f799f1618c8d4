"""Helpers shared by the client scripts: queue faults and read the journal of a mock-llm server."""
import json
import urllib.request


def post_json(base, path, payload):
    req = urllib.request.Request(
        base + path,
        data=json.dumps(payload).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req) as r:
        return json.load(r)


def queue_fault(base, **fault):
    post_json(base, "/_mock/faults", fault)


def journal(base):
    with urllib.request.urlopen(base + "/_mock/requests") as r:
        return json.load(r)


def reset(base):
    post_json(base, "/_mock/reset", {})


def check(cond, what):
    if not cond:
        raise AssertionError(what)
