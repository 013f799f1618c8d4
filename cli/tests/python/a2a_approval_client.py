"""The official A2A Python SDK (`a2a-sdk`, A2A 1.0) drives a multi-turn approval against a
running `skillet serve --http` (cli/tests/run/approvals.rs; over gRPC, cli/tests/a2a/a2a_grpc.rs).

Usage: a2a_approval_client.py BASE_URL [BINDING]

BINDING (`JSONRPC`, `HTTP+JSON` or `GRPC`) restricts the clients to that interface of the card;
without it they take the card's preferred one.

The server has `gated-calc`, whose `calculator` call needs a person's approval. Checks (each
prints `OK <check>`; any failure raises, so the exit status is non-zero):
- approve: a blocking SendMessage answers with the task in TASK_STATE_INPUT_REQUIRED whose
  status message has a data part naming the tool and its arguments; a message with that
  taskId and `{"approve": true}` continues it to COMPLETED with the tool's result;
- deny: over streaming, the first stream ends at INPUT_REQUIRED; a streamed reply with
  `{"approve": false, "reason": ...}` runs the task to COMPLETED, and the model saw the reason.
"""

import asyncio
import sys
import uuid

import httpx
from google.protobuf import json_format

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import GetTaskRequest, SendMessageRequest

BASE = sys.argv[1]
BINDING = sys.argv[2] if len(sys.argv) > 2 else None


def ok(name):
    print(f"OK {name}", flush=True)


def as_dict(proto):
    return json_format.MessageToDict(proto)


def first(skill):
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"data": {"text": "6*7"}}],
        "metadata": {"skillId": skill},
    }
    return json_format.ParseDict({"message": message}, SendMessageRequest())


def reply(task_id, decision):
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "taskId": task_id,
        "parts": [{"data": decision}],
    }
    return json_format.ParseDict({"message": message}, SendMessageRequest())


def config(**options):
    if BINDING is None:
        return ClientConfig(**options)
    if BINDING == "GRPC":
        import grpc

        options["grpc_channel_factory"] = grpc.aio.insecure_channel
    return ClientConfig(supported_protocol_bindings=[BINDING], **options)


async def collect(stream):
    return [as_dict(e) async for e in stream]


def approval_of(status):
    parts = status["message"]["parts"]
    return next(p["data"]["approval"] for p in parts if "data" in p)


async def main():
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, BASE).get_agent_card()
        blocking = ClientFactory(config(streaming=False)).create(card)
        streaming = ClientFactory(config(streaming=True)).create(card)

        (event,) = await collect(blocking.send_message(first("gated-calc")))
        task = event["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
        approval = approval_of(task["status"])
        assert approval["tool"] == "calculator", approval
        assert approval["arguments"] == {"expression": "6*7"}, approval
        (event,) = await collect(blocking.send_message(reply(task["id"], {"approve": True})))
        done = event["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
        assert done["artifacts"][0]["parts"][0]["data"] == {"echo": "approved"}, done
        ok("approve")

        events = await collect(streaming.send_message(first("gated-calc")))
        last = events[-1]["statusUpdate"]
        assert last["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", events
        task_id = last["taskId"]
        events = await collect(streaming.send_message(
            reply(task_id, {"approve": False, "reason": "not on prod"})))
        states = [e["statusUpdate"]["status"]["state"] for e in events if "statusUpdate" in e]
        assert states[-1] == "TASK_STATE_COMPLETED", events
        got = as_dict(await blocking.get_task(GetTaskRequest(id=task_id)))
        (output,) = [a for a in got["artifacts"] if a["artifactId"] == "output"]
        assert output["parts"][0]["data"] == {"echo": "denied: not on prod"}, got
        ok("deny")

        await blocking.close()
        await streaming.close()
    print("all checks passed", flush=True)


asyncio.run(main())
