"""Publishes A2E calls to a `skillet serve --nats` worker with nats-py (the official Python
client), each with its own `Authorization` header (or none), and prints every answer read from
its reply subject as one JSON object keyed by call id (cli/tests/nats/nats_auth.rs).

Usage: python auth_calls.py nats://127.0.0.1:PORT CASES_JSON
CASES_JSON: [{"id": "...", "skill": "...", "authorization": "Bearer ..." | null,
              "msg_id": "..." (optional: the Nats-Msg-Id, else the id),
              "as": "..." (optional: the answer's key in the output, else the id)}, ...]
"""

import asyncio
import json
import sys

import nats


async def main(url: str, cases: list) -> None:
    nc = await nats.connect(url)
    js = nc.jetstream()
    answers = {}
    for case in cases:
        inbox = nc.new_inbox()
        sub = await nc.subscribe(inbox)
        call = {
            "type": "skill/call/req",
            "id": case["id"],
            "name": case["skill"],
            "arguments": {"text": "hello"},
        }
        headers = {"Nats-Msg-Id": case.get("msg_id", case["id"]), "Skillet-Reply": inbox}
        if case.get("authorization") is not None:
            headers["Authorization"] = case["authorization"]
        await js.publish(f"skillet.call.{case['skill']}", json.dumps(call).encode(), headers=headers)
        answer = await sub.next_msg(timeout=60)
        answers[case.get("as", case["id"])] = json.loads(answer.data)
        await sub.unsubscribe()
    print(json.dumps(answers))
    await nc.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], json.loads(sys.argv[2])))
