#!/usr/bin/env python3
"""A remote agent for cuga-flo's A2A tests, written with the official A2A Python SDK.

Usage: a2a_peer.py MODE [--port-file FILE] [--bearer-env VAR] [--api-key-header H --api-key-env VAR]
       [--v03] [--streaming] [--cut-streams first|all] [--log FILE]

It serves JSON-RPC at / and the agent card at /.well-known/agent-card.json on 127.0.0.1
(an ephemeral port, written to --port-file once listening). MODE says how it answers:

- data:  completes the task with a DataPart artifact: {"echo": <the data it got>,
         "approved": true, "score": 0.9, "context_id", "task_id"}
- text:  completes with a text part holding JSON: {"approved": true, "score": 0.7}
- prose: completes with a text part that is not JSON
- ask:   first turn: input-required with the question "Which budget?"; the follow-up
         message in the same task completes it with {"budget": <the reply text>}
- consult: completes with the text "The customer prefers express shipping (asked: <question>)"
- probe: a consultant that asks one question back: first turn input-required with
         "Is the order a gift?"; the reply in the same task completes it: with the first
         option offered on the first turn ({"flow": <id>}) when it offered any, else with
         the text "The customer prefers express shipping (is it a gift? <the reply>)"
- choose: picks the first option offered: {"flow": <id>} for a gateway, else its text
- fail:  the task fails with the message "no capacity"
- slow:  works for 30 s (or $A2A_PEER_SLOW_SECS) before completing with a DataPart
         {"late": true, "approved": true, "score": 0.5} (for timeouts, CancelTask and
         runs that park while it works)

With $A2A_PEER_DELAY_SECS, consult and choose work that many seconds before they answer
(a person who takes a while: runs that park on a consultation).

--streaming says `capabilities.streaming: true` in the card (SendStreamingMessage and
SubscribeToTask are served). --cut-streams first ends the first SSE stream
(SendStreamingMessage) right after its first event, as a connection that drops would;
--cut-streams all ends every stream so (SubscribeToTask's too).
--v03 serves only A2A 0.3: the card lists a 0.3 interface and every request is answered
through the SDK's 0.3 compatibility layer.
With --bearer-env / --api-key-*, a request without the expected credential gets 401.
Every request (method, headers A2A-Version and Content-Type, whether auth matched) is
appended to --log as a JSON line.
"""

import argparse
import asyncio
import json
import os
import socket
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import JSONResponse

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.helpers.proto_helpers import new_task
from a2a.types import (
    TaskState,
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
)
from google.protobuf.json_format import MessageToDict, ParseDict


def data_part(d):
    return ParseDict({"data": d}, Part())


def parts_of(message):
    data, text = None, []
    for p in message.parts if message else []:
        d = MessageToDict(p)
        if "data" in d:
            data = d["data"]
        elif "text" in d:
            text.append(d["text"])
    return data, "\n".join(text)


class Peer(AgentExecutor):
    def __init__(self, mode):
        self.mode = mode
        # probe: what each task's first turn offered, by task id
        self.offered = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        data, text = parts_of(context.message)
        task = context.current_task
        if task is None:
            await event_queue.enqueue_event(
                new_task(context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED,
                         history=[context.message])
            )
        await updater.start_work()
        mode = self.mode
        delay = float(os.environ.get("A2A_PEER_DELAY_SECS", "0"))
        if delay > 0 and mode in ("consult", "choose"):
            await asyncio.sleep(delay)
        if mode == "data":
            out = {
                "echo": data if data is not None else text,
                "approved": True,
                "score": 0.9,
                "context_id": context.context_id,
                "task_id": context.task_id,
            }
            await updater.add_artifact([data_part(out)], name="result")
            await updater.complete()
        elif mode == "text":
            await updater.add_artifact([Part(text=json.dumps({"approved": True, "score": 0.7}))])
            await updater.complete()
        elif mode == "prose":
            await updater.add_artifact([Part(text="Looks fine to me, approve it.")])
            await updater.complete()
        elif mode == "ask":
            if task is None:
                await updater.requires_input(
                    updater.new_agent_message([Part(text="Which budget?")])
                )
                return
            await updater.add_artifact([data_part({"budget": text, "asked": True})])
            await updater.complete()
        elif mode == "consult":
            await updater.add_artifact(
                [Part(text=f"The customer prefers express shipping (asked: {text})")]
            )
            await updater.complete()
        elif mode == "probe":
            if task is None:
                self.offered[context.task_id] = (data or {}).get("options") or []
                await updater.requires_input(
                    updater.new_agent_message([Part(text="Is the order a gift?")])
                )
                return
            if delay > 0:
                await asyncio.sleep(delay)
            options = self.offered.get(context.task_id) or []
            if options and isinstance(options[0], dict):
                await updater.add_artifact([data_part({"flow": options[0]["flow"]})])
            else:
                await updater.add_artifact(
                    [Part(text=f"The customer prefers express shipping (is it a gift? {text})")]
                )
            await updater.complete()
        elif mode == "choose":
            options = (data or {}).get("options") or []
            first = options[0] if options else None
            if isinstance(first, dict):
                await updater.add_artifact([data_part({"flow": first["flow"]})])
            else:
                await updater.add_artifact([Part(text=str(first or "continue"))])
            await updater.complete()
        elif mode == "fail":
            await updater.failed(updater.new_agent_message([Part(text="no capacity")]))
        elif mode == "slow":
            await asyncio.sleep(float(os.environ.get("A2A_PEER_SLOW_SECS", "30")))
            await updater.add_artifact(
                [data_part({"late": True, "approved": True, "score": 0.5})]
            )
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()
        with open(os.environ.get("A2A_PEER_CANCEL_LOG", os.devnull), "a") as f:
            f.write(json.dumps({"canceled": context.task_id}) + "\n")


class Gate(BaseHTTPMiddleware):
    def __init__(self, app, args):
        super().__init__(app)
        self.args = args

    async def dispatch(self, request, call_next):
        a = self.args
        ok = True
        if a.bearer_env:
            ok = request.headers.get("authorization") == "Bearer " + os.environ[a.bearer_env]
        if a.api_key_env:
            ok = request.headers.get(a.api_key_header) == os.environ[a.api_key_env]
        body = await request.body()
        method, task_id, context_id = None, None, None
        try:
            doc = json.loads(body)
            method = doc.get("method")
            message = (doc.get("params") or {}).get("message") or {}
            task_id = message.get("taskId")
            context_id = message.get("contextId")
        except Exception:
            pass
        if a.log:
            with open(a.log, "a") as f:
                f.write(json.dumps({
                    "path": request.url.path,
                    "method": method,
                    "a2a_version": request.headers.get("a2a-version"),
                    "content_type": request.headers.get("content-type"),
                    "auth_ok": ok,
                    "task_id": task_id,
                    "context_id": context_id,
                }) + "\n")
        if not ok and request.url.path != "/.well-known/agent-card.json":
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        response = await call_next(request)
        streams = ("SendStreamingMessage", "message/stream", "SubscribeToTask", "tasks/resubscribe")
        if a.cut_streams and method in streams:
            if a.cut_streams == "all" or method in streams[:2]:
                response.body_iterator = first_event_only(response.body_iterator)
        return response


async def first_event_only(body):
    """The stream up to the end of its first data event, then its end."""
    buf = b""
    async for chunk in body:
        buf += chunk.encode() if isinstance(chunk, str) else chunk
        text = buf.replace(b"\r\n", b"\n")
        for block in text.split(b"\n\n")[:-1]:
            if b"data:" in block:
                end = text.index(block) + len(block) + 2
                yield text[:end]
                return
    yield buf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode")
    ap.add_argument("--port-file")
    ap.add_argument("--bearer-env")
    ap.add_argument("--api-key-header", default="X-API-Key")
    ap.add_argument("--api-key-env")
    ap.add_argument("--v03", action="store_true")
    ap.add_argument("--streaming", action="store_true")
    ap.add_argument("--cut-streams", choices=["first", "all"])
    ap.add_argument("--log")
    a = ap.parse_args()

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"
    card = AgentCard(
        name=f"peer-{a.mode}",
        description="cuga-flo A2A test peer",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC",
                           protocol_version="0.3" if a.v03 else "1.0")
        ],
        capabilities=AgentCapabilities(streaming=a.streaming),
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["application/json", "text/plain"],
        skills=[AgentSkill(id="fulfil", name="fulfil", description="fulfils a task", tags=["test"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=Peer(a.mode), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(
        handler, "/", enable_v0_3_compat=a.v03
    )
    app = Starlette(routes=routes)
    app.add_middleware(Gate, args=a)
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(port))
        os.replace(tmp, a.port_file)
    config = uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    sys.exit(main())
