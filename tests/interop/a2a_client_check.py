#!/usr/bin/env python3
"""The official A2A Python SDK as a client of `cuga-flo serve --a2a` (tests/suite/a2a_serve.rs).

Usage: a2a_client_check.py BASE_URL CHECK [--token-env VAR] [--v03]

With --v03 the client speaks A2A 0.3 (the SDK's compat transport), found from the card's
0.3 fields.

BASE_URL is an agent's base URL (http://HOST:PORT/<app>); the agent is the a2a_claim
fixture app. CHECK is one of:

- card:    the card resolves (name, skill, streaming)
- send:    SendMessage {"amount": 50} completes with the final variables as a DataPart
- stream:  SendStreamingMessage {"amount": 500}: status updates, then input-required (the
           review); the answers {"approved": true} (a DataPart) and "cheque" (text) go
           back in the same task, streamed; it completes with approved = true
- cancel:  {"amount": 500} waits for input; CancelTask cancels it; GetTask says canceled
- noauth:  (a server with a token) a request without the token is refused
- parked:  (the served_waits app served beside it, with --max-wait 0) a streamed task
           whose run parks at a timer, then at a receive task: working status updates
           say what it waits for; GetTask shows it working; `cuga-flo runs message`
           (CUGA_FLO_BIN, CUGA_FLO_RUN_DIR) delivers the payment and the task completes

It prints one JSON object per line: {"check": ..., "ok": true, ...facts} or
{"check": ..., "ok": false, "error": ...}; the exit status is 0 when every line is ok.
"""

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import uuid

import httpx
from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.client import ClientConfig, create_client
from a2a.client.card_resolver import parse_agent_card
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
)


def message(data=None, text=None, task_id=None):
    parts = []
    if data is not None:
        parts.append(ParseDict({"data": data}, Part()))
    if text is not None:
        parts.append(Part(text=text))
    m = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=parts)
    if task_id:
        m.task_id = task_id
    return SendMessageRequest(message=m)


def state_name(task):
    return MessageToDict(task.status).get("state", "")


def artifact_data(task):
    out = {}
    for a in MessageToDict(task).get("artifacts", []):
        for p in a.get("parts", []):
            if isinstance(p.get("data"), dict):
                out.update(p["data"])
    return out


# --v03: speak A2A 0.3 (the SDK's compat transport), as a 0.3 client would: from the
# card's 0.3 fields (`url`, `protocolVersion`), its 1.0 interfaces unread.
V03 = False


async def client_for(base, token, streaming):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx.AsyncClient(headers=headers, timeout=30)
    config = ClientConfig(streaming=streaming, httpx_client=http)
    if V03:
        raw = (await http.get(base + "/.well-known/agent-card.json")).json()
        raw.pop("supportedInterfaces")
        card = parse_agent_card(raw)
        return await create_client(card, client_config=config), http
    return await create_client(base, client_config=config), http


async def stream_until_pause(client, request):
    """Send (streaming); the events seen, and the last task state and id."""
    events, task_id, state = [], None, None
    async for ev in client.send_message(request):
        d = MessageToDict(ev)
        if "task" in d:
            task_id = d["task"]["id"]
            state = d["task"]["status"]["state"]
            events.append(("task", state))
        elif "statusUpdate" in d:
            task_id = d["statusUpdate"]["taskId"]
            state = d["statusUpdate"]["status"]["state"]
            events.append(("status", state))
        elif "artifactUpdate" in d:
            events.append(("artifact", d["artifactUpdate"]["artifact"].get("name")))
    return events, task_id, state


async def check(base, name, token):
    if name == "card":
        client, http = await client_for(base, token, True)
        card = client._card
        return {
            "name": card.name,
            "skills": [s.id for s in card.skills],
            "skill_description": card.skills[0].description if card.skills else "",
            "streaming": card.capabilities.streaming,
            "interface": MessageToDict(card.supported_interfaces[0]),
            "security": sorted(card.security_schemes.keys()),
        }
    if name == "send":
        client, http = await client_for(base, token, False)
        started = time.monotonic()
        last = None
        async for ev in client.send_message(message(data={"amount": 50, "claimant": "Bo"})):
            last = ev
        ms = (time.monotonic() - started) * 1000
        task = last.task
        got = await client.get_task(GetTaskRequest(id=task.id))
        return {
            "state": state_name(task),
            "variables": artifact_data(task),
            "get_state": state_name(got),
            "task_id": task.id,
            "latency_ms": round(ms, 1),
        }
    if name == "stream":
        client, http = await client_for(base, token, True)
        events1, task_id, state1 = await stream_until_pause(
            client, message(data={"amount": 500, "claimant": "Ada"})
        )
        got = await client.get_task(GetTaskRequest(id=task_id))
        question = MessageToDict(got.status.message)
        events2, _, state2 = await stream_until_pause(
            client, message(data={"approved": True}, task_id=task_id)
        )
        events3, _, state3 = await stream_until_pause(
            client, message(text="cheque", task_id=task_id)
        )
        final = await client.get_task(GetTaskRequest(id=task_id))
        return {
            "task_id": task_id,
            "first": [list(e) for e in events1],
            "question": question,
            "second": [list(e) for e in events2],
            "third": [list(e) for e in events3],
            "states": [state1, state2, state3],
            "final_state": state_name(final),
            "variables": artifact_data(final),
        }
    if name == "cancel":
        client, http = await client_for(base, token, False)
        last = None
        async for ev in client.send_message(message(data={"amount": 900})):
            last = ev
        task_id = last.task.id
        before = state_name(last.task)
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
        got = await client.get_task(GetTaskRequest(id=task_id))
        again = None
        try:
            await client.cancel_task(CancelTaskRequest(id=task_id))
        except Exception as e:  # the task has ended: not cancelable
            again = type(e).__name__ + ": " + str(e)
        return {
            "task_id": task_id,
            "before": before,
            "canceled": state_name(canceled),
            "get_state": state_name(got),
            "cancel_again": again,
        }
    if name == "parked":
        waits = base.rsplit("/", 1)[0] + "/served_waits"
        client, http = await client_for(waits, token, True)
        task_id, seen = None, []
        async for ev in client.send_message(message(data={"order_id": "P-1"})):
            d = MessageToDict(ev)
            if "task" in d:
                task_id = d["task"]["id"]
            elif "statusUpdate" in d:
                task_id = d["statusUpdate"]["taskId"]
                status = d["statusUpdate"]["status"]
                text = " ".join(
                    p.get("text", "") for p in status.get("message", {}).get("parts", [])
                )
                seen.append([status.get("state", ""), text])
                if "message `Payment`" in text:
                    break
        parked = await client.get_task(GetTaskRequest(id=task_id))
        delivered = subprocess.run(
            [os.environ["CUGA_FLO_BIN"], "runs", "message", task_id, "Payment",
             "--var", "amount=9", "--run-dir", os.environ["CUGA_FLO_RUN_DIR"]],
            capture_output=True, text=True, timeout=30,
        )
        assert delivered.returncode == 0, delivered.stderr
        final = parked
        for _ in range(200):
            final = await client.get_task(GetTaskRequest(id=task_id))
            if state_name(final) in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED"):
                break
            await asyncio.sleep(0.05)
        return {
            "task_id": task_id,
            "updates": seen,
            "parked_state": state_name(parked),
            "delivered": delivered.stdout.strip(),
            "final_state": state_name(final),
            "variables": artifact_data(final),
        }
    if name == "noauth":
        client, http = await client_for(base, None, False)
        try:
            async for _ in client.send_message(message(data={"amount": 1})):
                pass
        except Exception as e:
            return {"refused": type(e).__name__ + ": " + str(e)}
        raise AssertionError("a request without the token was served")
    raise SystemExit(f"unknown check {name}")


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("checks", nargs="+")
    ap.add_argument("--token-env")
    ap.add_argument("--v03", action="store_true")
    a = ap.parse_args()
    global V03
    V03 = a.v03
    token = os.environ.get(a.token_env) if a.token_env else None
    ok = True
    for name in a.checks:
        try:
            facts = await check(a.base, name, token)
            print(json.dumps({"check": name, "ok": True, **facts}), flush=True)
        except Exception as e:
            ok = False
            print(json.dumps({"check": name, "ok": False, "error": f"{type(e).__name__}: {e}"}), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
