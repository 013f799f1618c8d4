"""Drives a `skillet serve --nats` worker with nats-py (the official Python client), speaking
raw A2E on the documented subjects: publish a skill/call/req to the JetStream subject
skillet.call.<skill> with Nats-Msg-Id and Skillet-Reply headers, read the skill/events from
skillet.events.<id> and the skill/call/resp from the reply subject, then read the stored answer
from the skillet-results key-value bucket. Prints one JSON object for the Rust test to check.

Usage: python raw_call.py nats://127.0.0.1:PORT SKILL CALL_ID
"""

import asyncio
import json
import sys

import nats


async def main(url: str, skill: str, call_id: str) -> None:
    nc = await nats.connect(url)
    js = nc.jetstream()
    inbox = nc.new_inbox()
    answers = await nc.subscribe(inbox)
    events = await nc.subscribe(f"skillet.events.{call_id}")
    call = {
        "type": "skill/call/req",
        "id": call_id,
        "version": "1.0",
        "ts": 1716123457.1,
        "name": skill,
        "arguments": {"text": "from python"},
        "correlation_id": "",
        "timeout": 60,
        "streaming": True,
        "llm_override": None,
        "metadata": {},
    }
    ack = await js.publish(
        f"skillet.call.{skill}",
        json.dumps(call).encode(),
        headers={"Nats-Msg-Id": call_id, "Skillet-Reply": inbox},
    )
    answer_msg = await answers.next_msg(timeout=60)
    answer = json.loads(answer_msg.data)
    received = []
    while True:
        try:
            msg = await events.next_msg(timeout=0.5)
        except nats.errors.TimeoutError:
            break
        received.append(json.loads(msg.data))
    kv = await js.key_value("skillet-results")
    stored = json.loads((await kv.get(call_id)).value)
    print(json.dumps({"stream": ack.stream, "answer": answer, "events": received, "stored": stored}))
    await nc.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
