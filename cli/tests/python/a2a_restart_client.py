"""The official A2A Python SDK (`a2a-sdk`) across a restart of `skillet serve --http` with
`[server] state_db` (driven by cli/tests/a2a/a2a_restart.rs).

Usage:
  a2a_restart_client.py send BASE_URL SKILL       -> prints `TASK <id>` (the task is WORKING)
  a2a_restart_client.py after URL_FILE TASK_ID    -> waits until URL_FILE holds the restarted
      server's base URL, then SubscribeToTask (the resumed task's stream, to its end) and
      GetTask; prints `OK subscribe_completed` and `OK get_task_completed`, or raises.
"""

import asyncio
import pathlib
import sys
import time
import uuid

import httpx
from google.protobuf import json_format

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import GetTaskRequest, SendMessageRequest, SubscribeToTaskRequest


def as_dict(proto):
    return json_format.MessageToDict(proto)


def kind(event):
    (key,) = event.keys()
    return key


async def clients(http, base):
    card = await A2ACardResolver(http, base).get_agent_card()
    blocking = ClientFactory(ClientConfig(streaming=False)).create(card)
    streaming = ClientFactory(ClientConfig(streaming=True)).create(card)
    polling = ClientFactory(ClientConfig(streaming=False, polling=True)).create(card)
    return blocking, streaming, polling


async def send(base, skill):
    async with httpx.AsyncClient(timeout=60) as http:
        _, _, polling = await clients(http, base)
        body = {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"data": {"text": "survive a restart"}}],
                "metadata": {"skillId": skill},
            }
        }
        events = [as_dict(e) async for e in polling.send_message(json_format.ParseDict(body, SendMessageRequest()))]
        task = events[0]["task"]
        assert task["status"]["state"] == "TASK_STATE_WORKING", task
        print(f"TASK {task['id']}", flush=True)


async def after(url_file, task_id):
    path = pathlib.Path(url_file)
    deadline = time.monotonic() + 120
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, "the restarted server never announced itself"
        await asyncio.sleep(0.05)
    base = path.read_text().strip()
    async with httpx.AsyncClient(timeout=120) as http:
        blocking, streaming, _ = await clients(http, base)
        events = [as_dict(e) async for e in streaming.subscribe(SubscribeToTaskRequest(id=task_id))]
        assert kind(events[0]) == "task", events
        assert events[0]["task"]["id"] == task_id, events[0]
        assert events[0]["task"]["status"]["state"] == "TASK_STATE_WORKING", events[0]
        last = events[-1]
        assert kind(last) == "statusUpdate", events
        assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", last
        print("OK subscribe_completed", flush=True)
        got = as_dict(await blocking.get_task(GetTaskRequest(id=task_id)))
        assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
        outputs = [a for a in got.get("artifacts", []) if a["artifactId"] == "output"]
        assert len(outputs) == 1, got
        assert outputs[0]["parts"][0]["data"] == {"result": "done"}, outputs
        assert got["history"][0]["role"] == "ROLE_USER", got["history"]
        print("OK get_task_completed", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "send":
        asyncio.run(send(sys.argv[2], sys.argv[3]))
    else:
        asyncio.run(after(sys.argv[2], sys.argv[3]))
