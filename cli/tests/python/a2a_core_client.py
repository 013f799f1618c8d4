"""The official A2A Python SDK (`a2a-sdk`, A2A 1.0) drives ListTasks and multi-part messages
against a running `skillet serve --http`.

Usage: a2a_core_client.py BASE_URL MOCK_URL

Driven by cli/tests/a2a/a2a_core.rs, which serves the bundled skills plus `file-note` (a data
input `note`, a text input `comment`, input files; its mock rule answers only when the system
prompt lists the input file `numbers.csv`). Prints `OK <check>` per passed check; any failure
raises (non-zero exit).
"""

import asyncio
import base64
import json
import sys
import uuid

import httpx
from google.protobuf import json_format

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import ListTasksRequest, SendMessageRequest, SubscribeToTaskRequest
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError

BASE, MOCK = sys.argv[1], sys.argv[2]
CSV = b"a,b\n1,2\n3,4\n"


def ok(name):
    print(f"OK {name}", flush=True)


def request(skill, parts, context_id=None):
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": parts,
        "metadata": {"skillId": skill},
    }
    if context_id:
        message["contextId"] = context_id
    return json_format.ParseDict({"message": message}, SendMessageRequest())


def as_dict(proto):
    return json_format.MessageToDict(proto)


async def send(client, skill, parts, context_id=None):
    events = [as_dict(e) async for e in client.send_message(request(skill, parts, context_id))]
    return events[0]["task"]


async def main():
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, BASE).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=False)).create(card)
        streaming = ClientFactory(ClientConfig(streaming=True)).create(card)

        # --- A multi-part message: one data part, two text parts, a file part (raw bytes).
        parts = [
            {"data": {"note": "quarterly"}},
            {"text": "Look at the numbers."},
            {"text": "Be brief."},
            {"raw": base64.b64encode(CSV).decode(), "filename": "numbers.csv", "mediaType": "text/csv"},
        ]
        task = await send(client, "file-note", parts)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        entries = (await http.get(f"{MOCK}/_mock/requests")).json()
        entry = [e for e in entries if e.get("matched_rule") == "file-note"][-1]
        messages = entry["body"]["messages"]
        system = next(m["content"] for m in messages if m["role"] == "system")
        user = next(m["content"] for m in messages if m["role"] == "user")
        assert f"numbers.csv ({len(CSV)} bytes)" in system, system
        assert json.loads(user) == {"note": "quarterly", "comment": "Look at the numbers.\n\nBe brief."}, user
        ok("multi_part")

        # --- ListTasks: filters by context and status, pages, historyLength, artifacts.
        context = str(uuid.uuid4())
        ids = [
            (await send(client, "summarize", [{"data": {"text": f"text {i}"}}], context))["id"]
            for i in range(5)
        ]
        listed = as_dict(await client.list_tasks(ListTasksRequest(context_id=context)))
        assert [t["id"] for t in listed["tasks"]] == ids[::-1], (listed, ids)
        assert listed["totalSize"] == 5 and listed["pageSize"] == 50, listed
        assert not listed.get("nextPageToken"), listed
        assert all("artifacts" not in t for t in listed["tasks"]), listed
        seen, token = [], ""
        while True:
            page = as_dict(await client.list_tasks(
                ListTasksRequest(context_id=context, page_size=2, page_token=token, history_length=1)))
            assert len(page["tasks"]) <= 2, page
            assert all(len(t.get("history", [])) <= 1 for t in page["tasks"]), page
            seen += [t["id"] for t in page["tasks"]]
            token = page.get("nextPageToken", "")
            if not token:
                break
        assert seen == ids[::-1], (seen, ids)
        full = as_dict(await client.list_tasks(
            ListTasksRequest(context_id=context, status="TASK_STATE_COMPLETED", include_artifacts=True)))
        assert len(full["tasks"]) == 5 and all(t.get("artifacts") for t in full["tasks"]), full
        none = as_dict(await client.list_tasks(
            ListTasksRequest(context_id=context, status="TASK_STATE_WORKING")))
        assert none.get("tasks", []) == [] and none.get("totalSize", 0) == 0, none
        everything = as_dict(await client.list_tasks(ListTasksRequest()))
        assert everything["totalSize"] >= 6, everything
        try:
            await client.list_tasks(ListTasksRequest(page_size=101))
            raise AssertionError("page size 101 accepted")
        except InvalidParamsError:
            pass
        try:
            await client.list_tasks(ListTasksRequest(page_token="not-a-token"))
            raise AssertionError("a made-up page token accepted")
        except InvalidParamsError:
            pass
        ok("list_tasks")

        # --- SubscribeToTask on an unknown task: the SDK reads the SSE error as TaskNotFound.
        try:
            async for _ in streaming.subscribe(SubscribeToTaskRequest(id="no-such-task")):
                pass
            raise AssertionError("subscribed to an unknown task")
        except TaskNotFoundError:
            pass
        ok("subscribe_unknown")

        await client.close()
        await streaming.close()


asyncio.run(main())
