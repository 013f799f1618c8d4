"""The official A2A Python SDK's HTTP+JSON (REST) or gRPC client against a running
`skillet serve --http`.

Usage: a2a_binding_client.py rest|grpc BASE_URL

Driven by cli/tests/a2a/a2a_rest.rs and cli/tests/a2a/a2a_grpc.rs, which serve the bundled skills
plus `slow-echo` (answers after a delay) and `slow-loop` (slow turns that never validate). Every
client here is made by the SDK's ClientFactory restricted to the one binding, so every call goes
over that binding's interface on the card: the REST routes under `/a2a/rest`, or the gRPC
service at the listener's `host:port` (on a grpcio channel). Prints `OK <check>` per passed
check; any failure raises.
"""

import asyncio
import sys
import uuid

import httpx
from google.protobuf import json_format

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
)

WHICH, BASE = sys.argv[1], sys.argv[2]
BINDING = {"rest": "HTTP+JSON", "grpc": "GRPC"}[WHICH]


def ok(name):
    print(f"OK {name}", flush=True)


def request(skill, part, **config):
    body = {
        "message": {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_USER",
            "parts": [part],
            "metadata": {"skillId": skill},
        }
    }
    if config:
        body["configuration"] = config
    return json_format.ParseDict(body, SendMessageRequest())


def as_dict(proto):
    return json_format.MessageToDict(proto)


def kind(event):
    (key,) = event.keys()
    return key


async def collect(stream):
    return [as_dict(event) async for event in stream]


def binding_client(card, **config):
    """A client of the card that speaks only BINDING."""
    if WHICH == "grpc":
        import grpc
        from a2a.client.transports.grpc import GrpcTransport as Transport
        config["grpc_channel_factory"] = grpc.aio.insecure_channel
    else:
        from a2a.client.transports.rest import RestTransport as Transport
    client = ClientFactory(ClientConfig(supported_protocol_bindings=[BINDING], **config)).create(card)
    assert isinstance(client._transport, Transport), type(client._transport)
    return client


def check_interface(interfaces):
    """The card lists BINDING once, at version 1.0, where this server serves it."""
    found = [i for i in interfaces if i[0] == BINDING]
    assert len(found) == 1 and found[0][1] == "1.0", interfaces
    if WHICH == "grpc":
        # A2A §4.4.6: a gRPC interface's URL is `host:port` — here the listener's own.
        assert BASE == "http://" + found[0][2], interfaces
    else:
        assert found[0][2].endswith("/a2a/rest"), interfaces


async def main():
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, BASE).get_agent_card()
        interfaces = [(i.protocol_binding, i.protocol_version, i.url) for i in card.supported_interfaces]
        check_interface(interfaces)
        ok("card")

        blocking = binding_client(card, streaming=False)
        streaming = binding_client(card, streaming=True)
        polling = binding_client(card, streaming=False, polling=True)

        text = "Skillet runs skills as bounded loops. Outputs are validated."
        events = await collect(blocking.send_message(request("summarize", {"data": {"text": text}})))
        assert [kind(e) for e in events] == ["task"], events
        task = events[0]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        assert any(a["artifactId"] == "output" for a in task["artifacts"]), task
        sent_id = task["id"]
        ok("send_message")

        got = as_dict(await blocking.get_task(GetTaskRequest(id=sent_id)))
        assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
        assert got["artifacts"] == task["artifacts"], got
        assert len(got["history"]) == 2, got["history"]
        short = as_dict(await blocking.get_task(GetTaskRequest(id=sent_id, history_length=1)))
        assert len(short["history"]) == 1 and short["history"][0]["role"] == "ROLE_AGENT", short
        try:
            await blocking.get_task(GetTaskRequest(id="no-such-task"))
            raise AssertionError("an unknown task was found")
        except TaskNotFoundError:
            pass
        ok("get_task")

        events = await collect(streaming.send_message(request("summarize", {"text": text})))
        kinds = [kind(e) for e in events]
        assert kinds[0] == "task" and kinds[-1] == "statusUpdate", kinds
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", events[-1]
        assert "artifactUpdate" in kinds, kinds
        streamed_id = events[0]["task"]["id"]
        ok("send_streaming_message")

        listed = as_dict(await blocking.list_tasks(ListTasksRequest(
            page_size=1, status=TaskState.TASK_STATE_COMPLETED, include_artifacts=True)))
        assert listed["pageSize"] == 1 and listed["totalSize"] >= 2, listed
        assert len(listed["tasks"]) == 1 and listed["tasks"][0]["artifacts"], listed
        assert listed["tasks"][0]["id"] in (sent_id, streamed_id), listed
        page2 = as_dict(await blocking.list_tasks(ListTasksRequest(
            page_size=1, status=TaskState.TASK_STATE_COMPLETED, page_token=listed["nextPageToken"])))
        assert page2["tasks"][0]["id"] != listed["tasks"][0]["id"], page2
        assert "artifacts" not in page2["tasks"][0], page2
        try:
            await blocking.list_tasks(ListTasksRequest(page_size=1000))
            raise AssertionError("pageSize 1000 accepted")
        except InvalidParamsError:
            pass
        ok("list_tasks")

        (first,) = await collect(polling.send_message(request("slow-echo", {"data": {"text": "hi"}})))
        running = first["task"]
        assert running["status"]["state"] == "TASK_STATE_WORKING", running
        events = await collect(streaming.subscribe(SubscribeToTaskRequest(id=running["id"])))
        assert kind(events[0]) == "task", events
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", events[-1]
        ok("subscribe_to_task")

        stream = streaming.send_message(request("slow-loop", {"data": {"text": "loop"}}))
        first = as_dict(await stream.__anext__())
        loop_id = first["task"]["id"]
        canceled = as_dict(await blocking.cancel_task(CancelTaskRequest(id=loop_id)))
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED", canceled
        rest_events = [as_dict(e) async for e in stream]
        assert rest_events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED", rest_events
        try:
            await blocking.cancel_task(CancelTaskRequest(id=sent_id))
            raise AssertionError("cancelling a completed task succeeded")
        except TaskNotCancelableError:
            pass
        ok("cancel_task")

        try:
            await blocking.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=sent_id, url="https://example.com/hook"))
            raise AssertionError("a push config was accepted with push off")
        except PushNotificationNotSupportedError:
            pass
        ok("push_refused")

        for client in (blocking, streaming, polling):
            await client.close()


asyncio.run(main())
