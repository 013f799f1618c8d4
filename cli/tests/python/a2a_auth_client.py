"""The official a2a-sdk against `skillet serve --http` with `[auth]` (cli/tests/serve/auth_protocols.rs).

usage: a2a_auth_client.py BASE KEY

Resolves the public card, reads its security schemes with the SDK's types, and lets the SDK's
AuthInterceptor put KEY on the requests the card's requirements name. Prints one JSON summary.
"""

import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf import json_format

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.auth.credentials import InMemoryContextCredentialStore
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.client.client import ClientCallContext
from a2a.types.a2a_pb2 import SendMessageRequest

BASE, KEY = sys.argv[1], sys.argv[2]


def request(skill):
    body = {
        "message": {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_USER",
            "parts": [{"data": {"text": "hi"}}],
            "metadata": {"skillId": skill},
        }
    }
    return json_format.ParseDict(body, SendMessageRequest())


async def collect(stream):
    return [json_format.MessageToDict(event) async for event in stream]


async def main():
    summary = {}
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, BASE).get_agent_card()
    bearer = card.security_schemes["bearer"]
    summary["bearer_scheme"] = bearer.http_auth_security_scheme.scheme
    summary["card_requirements"] = [sorted(r.schemes.keys()) for r in card.security_requirements]
    summary["skill_scopes"] = {
        s.id: sorted(scope for r in s.security_requirements for scope in r.schemes["bearer"].list)
        for s in card.skills
    }

    store = InMemoryContextCredentialStore()
    await store.set_credentials("session-1", "bearer", KEY)
    authed = ClientFactory(ClientConfig(streaming=False)).create(
        card, interceptors=[AuthInterceptor(store)]
    )
    context = ClientCallContext(state={"sessionId": "session-1"})
    events = await collect(authed.send_message(request("echo-a"), context=context))
    summary["allowed_state"] = events[-1]["task"]["status"]["state"]
    try:
        await collect(authed.send_message(request("echo-b"), context=context))
        summary["forbidden"] = "accepted"
    except Exception as error:  # noqa: BLE001 - the SDK's error type is what is reported
        summary["forbidden"] = f"{type(error).__name__}: {error}"

    anonymous = ClientFactory(ClientConfig(streaming=False)).create(card)
    try:
        await collect(anonymous.send_message(request("echo-a")))
        summary["anonymous"] = "accepted"
    except Exception as error:  # noqa: BLE001
        summary["anonymous"] = f"{type(error).__name__}: {error}"
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BaseException as error:  # noqa: BLE001 - report and fail
        import traceback

        traceback.print_exception(error)
        sys.exit(1)
