"""The official A2A Python SDK (`a2a-sdk`) against `skillet serve --http` with `[server.tls]`
(cli/tests/serve/tls_serve.rs).

usage: a2a_tls_client.py BASE_URL CA_FILE SKILL

Checks, printing one JSON summary line at the end:
- an httpx client verifying against CA_FILE resolves the Agent Card over https; the card's
  JSON-RPC interface is an https URL;
- the SDK's client built from that card (`ClientConfig(httpx_client=...)`) sends a message to
  SKILL and gets the task COMPLETED, then reads it back with GetTask;
- with the default verification (the system's roots, not the test CA) the card is refused on
  the certificate before anything is sent.
"""

import asyncio
import json
import ssl
import sys
import uuid

import httpx
from google.protobuf import json_format

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import GetTaskRequest, SendMessageRequest


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


async def main():
    base, ca_file, skill = sys.argv[1:4]
    summary = {}
    context = ssl.create_default_context(cafile=ca_file)
    async with httpx.AsyncClient(verify=context, timeout=60) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        summary["interfaces"] = [
            (i.protocol_binding, i.url) for i in card.supported_interfaces
        ]
        client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
        events = [json_format.MessageToDict(e) async for e in client.send_message(request(skill))]
        task = events[-1]["task"]
        summary["state"] = task["status"]["state"]
        got = json_format.MessageToDict(await client.get_task(GetTaskRequest(id=task["id"])))
        summary["get_task_state"] = got["status"]["state"]

    async with httpx.AsyncClient(timeout=10) as default_client:
        try:
            await A2ACardResolver(default_client, base).get_agent_card()
            summary["without_ca"] = "connected"
        except Exception as error:  # noqa: BLE001 - the SDK wraps httpx's error
            text = repr(error) + repr(error.__cause__) + repr(error.__context__)
            refused = "CERTIFICATE_VERIFY_FAILED" in text or "SSLCertVerificationError" in text
            summary["without_ca"] = "certificate refused" if refused else f"other: {text}"
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
