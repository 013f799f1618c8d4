"""The official A2A Python SDK (`a2a-sdk`, A2A 1.0) against a running `skillet serve --http`.

Usage: a2a_client.py BASE_URL MOCK_URL SKILLS_DIR

Driven by engine/tests/a2a_sdk.rs, which starts the server with the bundled skills plus two
test skills: `slow-echo` (answers after a delay), `slow-loop` (two slow turns whose answers
never validate) and `bad-output` (answers that never validate, at once). Prints `OK <check>` per passed check; any failure raises (non-zero exit).
"""

import asyncio
import json
import sys
import uuid

import httpx
import jsonschema
from google.protobuf import json_format

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from a2a.utils.errors import (
    InvalidParamsError,
    TaskNotCancelableError,
    VersionNotSupportedError,
)

BASE, MOCK, SKILLS = sys.argv[1], sys.argv[2], sys.argv[3]


def ok(name):
    print(f"OK {name}", flush=True)


def request(skill, part, **config):
    body = {
        "message": {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_USER",
            "parts": [part],
        }
    }
    if skill is not None:
        body["message"]["metadata"] = {"skillId": skill}
    if config:
        body["configuration"] = config
    return json_format.ParseDict(body, SendMessageRequest())


def as_dict(proto):
    return json_format.MessageToDict(proto)


async def collect(stream):
    return [as_dict(event) async for event in stream]


def kind(event):
    (key,) = event.keys()
    return key


def outputs_of(task):
    """The final validated output artifacts of a task (streamed text artifacts aside)."""
    return [a for a in task.get("artifacts", []) if a["artifactId"] == "output"]


def output_schema(skill):
    with open(f"{SKILLS}/{skill}/assets/output.schema.json") as f:
        return json.load(f)


async def journal(http, rule):
    entries = (await http.get(f"{MOCK}/_mock/requests")).json()
    return sum(1 for e in entries if e.get("matched_rule") == rule)


async def main():
    async with httpx.AsyncClient(timeout=60) as http:
        # --- The card: resolved from /.well-known/agent-card.json and parsed by the SDK.
        card = await A2ACardResolver(http, BASE).get_agent_card()
        interfaces = [(i.protocol_binding, i.protocol_version, i.url) for i in card.supported_interfaces]
        assert interfaces[0][:2] == ("JSONRPC", "1.0"), interfaces
        assert interfaces[0][2].endswith("/a2a"), interfaces
        assert any(b == "A2E" for b, _, _ in interfaces), interfaces
        assert card.capabilities.streaming and not card.capabilities.push_notifications
        ids = sorted(s.id for s in card.skills)
        assert {"summarize", "code-review", "slow-echo", "slow-loop"} <= set(ids), ids
        # Every advertised interface answers.
        a2e_url = next(u for b, _, u in interfaces if b == "A2E")
        discover = (await http.post(a2e_url, json={"type": "skill/discover/req", "id": "d1"})).json()
        assert discover["type"] == "skill/discover/resp", discover
        ok("card")

        blocking = ClientFactory(ClientConfig(streaming=False)).create(card)
        streaming = ClientFactory(ClientConfig(streaming=True)).create(card)
        polling = ClientFactory(ClientConfig(streaming=False, polling=True)).create(card)

        # --- SendMessage: a data part to a bundled skill; the task completes with the output.
        text = "Skillet runs skills as bounded loops. Outputs are validated."
        events = await collect(blocking.send_message(request("summarize", {"data": {"text": text}})))
        assert [kind(e) for e in events] == ["task"], events
        task = events[0]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        (artifact,) = outputs_of(task)
        data = artifact["parts"][0]["data"]
        jsonschema.validate(data, output_schema("summarize"))
        sent_id = task["id"]
        ok("send_message")

        # --- GetTask afterwards, with historyLength honoured.
        got = as_dict(await blocking.get_task(GetTaskRequest(id=sent_id)))
        assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
        assert got["artifacts"] == task["artifacts"]
        assert len(got["history"]) == 2, got["history"]
        assert got["history"][0]["role"] == "ROLE_USER"
        short = as_dict(await blocking.get_task(GetTaskRequest(id=sent_id, history_length=1)))
        assert len(short["history"]) == 1 and short["history"][0]["role"] == "ROLE_AGENT", short
        ok("get_task")

        # --- SendStreamingMessage: one text part maps to summarize's one string input.
        events = await collect(streaming.send_message(request("summarize", {"text": text})))
        kinds = [kind(e) for e in events]
        assert kinds[0] == "task", kinds
        assert kinds[-1] == "statusUpdate", kinds
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", events[-1]
        working = [e["statusUpdate"] for e in events[1:-1] if kind(e) == "statusUpdate"]
        assert working, kinds
        assert all(w["status"]["state"] == "TASK_STATE_WORKING" for w in working), working
        assert all(w["status"].get("message", {}).get("parts") for w in working), working
        progress = [w["metadata"]["progress"] for w in working if "progress" in w.get("metadata", {})]
        assert progress == sorted(progress), progress
        outputs = [e["artifactUpdate"] for e in events if kind(e) == "artifactUpdate"
                   and e["artifactUpdate"]["artifact"]["artifactId"] == "output"]
        assert len(outputs) == 1, kinds
        assert kinds.index("artifactUpdate") > kinds.index("statusUpdate")
        jsonschema.validate(outputs[0]["artifact"]["parts"][0]["data"], output_schema("summarize"))
        streamed_id = events[0]["task"]["id"]
        got = as_dict(await blocking.get_task(GetTaskRequest(id=streamed_id)))
        assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
        ok("send_streaming_message")

        # --- SubscribeToTask: re-attach to a running task and see it finish.
        (first,) = await collect(polling.send_message(request("slow-echo", {"data": {"text": "hi"}})))
        running = first["task"]
        assert running["status"]["state"] == "TASK_STATE_WORKING", running
        events = await collect(streaming.subscribe(SubscribeToTaskRequest(id=running["id"])))
        assert kind(events[0]) == "task", events
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", events[-1]
        ok("subscribe_to_task")

        # --- CancelTask: a long-running task ends canceled and the model gets no further request.
        stream = streaming.send_message(request("slow-loop", {"data": {"text": "loop"}}))
        first = as_dict(await stream.__anext__())
        loop_id = first["task"]["id"]
        canceled = as_dict(await blocking.cancel_task(CancelTaskRequest(id=loop_id)))
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED", canceled
        rest = [as_dict(e) async for e in stream]
        assert rest[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED", rest[-1]
        assert await journal(http, "slow-echo") >= 1, "journal entries are named by rule"
        at_cancel = await journal(http, "slow-loop")
        await asyncio.sleep(2.5)  # longer than one slow-loop turn
        after = await journal(http, "slow-loop")
        assert after == at_cancel and at_cancel <= 1, (at_cancel, after)
        try:
            await blocking.cancel_task(CancelTaskRequest(id=sent_id))
            raise AssertionError("cancelling a completed task succeeded")
        except TaskNotCancelableError:
            pass
        ok("cancel_task")

        # --- A run that fails ends TASK_STATE_FAILED with the A2E code in metadata.
        events = await collect(streaming.send_message(request("bad-output", {"text": "x"})))
        assert kind(events[0]) == "task", events
        last = events[-1]["statusUpdate"]
        assert last["status"]["state"] == "TASK_STATE_FAILED", last
        assert last["metadata"]["a2eCode"] == "schema_violation", last
        got = as_dict(await blocking.get_task(GetTaskRequest(id=events[0]["task"]["id"])))
        assert got["status"]["state"] == "TASK_STATE_FAILED" and not outputs_of(got), got
        assert got["metadata"]["a2eCode"] == "schema_violation", got
        ok("failed")

        # --- Unknown skill: invalid params naming the available ids.
        try:
            await collect(blocking.send_message(request("no-such-skill", {"text": "x"})))
            raise AssertionError("unknown skill accepted")
        except InvalidParamsError as e:
            assert "summarize" in e.message and "no-such-skill" in e.message, e.message
        ok("unknown_skill")

        # --- Bad input: schema violations, and text for a skill that takes an object.
        try:
            await collect(blocking.send_message(request("summarize", {"data": {"text": 5}})))
            raise AssertionError("bad input accepted")
        except InvalidParamsError as e:
            assert "schema" in e.message, e.message
        try:
            await collect(blocking.send_message(request("expense-report", {"text": "Train 42.50 EUR"})))
            raise AssertionError("text accepted for an object input")
        except InvalidParamsError as e:
            assert "data part" in e.message, e.message
        ok("bad_input")

        # --- 50 concurrent streamed tasks, each finishing exactly once.
        async def one(i):
            events = await collect(streaming.send_message(
                request("summarize", {"data": {"text": f"text number {i}"}})))
            terminal = [e for e in events if kind(e) == "statusUpdate"
                        and e["statusUpdate"]["status"]["state"] != "TASK_STATE_WORKING"]
            assert len(terminal) == 1, events
            assert terminal[0]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", terminal
            return events[0]["task"]["id"]

        task_ids = await asyncio.gather(*(one(i) for i in range(50)))
        assert len(set(task_ids)) == 50
        for task_id in task_ids:
            got = as_dict(await blocking.get_task(GetTaskRequest(id=task_id)))
            assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
            assert len(outputs_of(got)) == 1, got
        ok("fifty_concurrent")

        # --- Version negotiation: an SDK-made client that announces 0.3 is refused.
        old = httpx.AsyncClient(timeout=30, headers={"A2A-Version": "0.3"})
        legacy = ClientFactory(ClientConfig(streaming=False, httpx_client=old)).create(card)
        try:
            await legacy.get_task(GetTaskRequest(id=sent_id))
            raise AssertionError("version 0.3 accepted")
        except VersionNotSupportedError:
            pass
        await old.aclose()
        ok("version")

        for client in (blocking, streaming, polling):
            await client.close()


asyncio.run(main())
