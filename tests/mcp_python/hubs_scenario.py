"""Drives one MCP session with the official MCP Python SDK through a load balancer in front
of two `baton serve` on one database, while the test SIGKILLs the hub holding its stream.

Usage: DEV_TOKEN=… python hubs_scenario.py http://127.0.0.1:PORT/mcp
Run by tests/it/mcp_hubs.rs (the_python_sdk_carries_on_through_haproxy_when_a_hub_is_killed),
which talks with it over stdin and stdout:
1. the script opens its session as Claude Code (its `clientInfo` name, which baton pushes
   new work to: notifications/claude/channel on the session's stream), waits for its
   stream (the GET) to be open, makes calls, and prints "opened";
2. the test has another agent send a task to the session's agent; the script prints
   "pushed T-N SUBJECT" for each push it is sent, as it comes;
3. the test SIGKILLs the hub holding the stream and writes a line;
4. the script waits for its stream to be open again with `Last-Event-ID` (the SDK
   reconnects it by itself, through the other hub) and prints "reopened"; the test sends
   another task, and the script waits for it to be pushed there;
5. the script makes more calls and prints "python hubs scenario: ok".
(A task sent while the session has no stream is shown by the next call's answer, if a call
comes first, or pushed once the stream is open again: either way once.)
Every request of the session must carry its one session id and be answered without an
error, and no task may be pushed twice; exits non-zero with the failed check otherwise.
The token is never printed.
"""

import os
import sys
from contextlib import AsyncExitStack

import anyio
import httpx2
import mcp_types
from mcp import ClientSession
from mcp.client import NotificationBinding
from mcp.client.streamable_http import streamable_http_client
from pydantic import BaseModel, ConfigDict

from common import TOOLS, check_pinned_sdk, ok

# How long the stream may take to open again: the SDK waits the `retry` the server gave
# before it reconnects.
STREAM_WITHIN = 30
# The subject of the task the test sends once the hub is killed.
AFTER_THE_KILL = "After the kill"


class Channel(BaseModel):
    """A push of Claude Code's channel: the task as text, its id and subject as meta."""

    model_config = ConfigDict(extra="allow")
    content: str
    meta: dict[str, str]


class Pushes:
    """The pushes the session was sent, in order, each printed as it comes."""

    def __init__(self):
        self.seen = []

    async def on_push(self, params):
        task, subject = params.meta["task_id"], params.meta["subject"]
        self.seen.append((task, subject))
        print(f"pushed {task} {subject}", flush=True)

    async def wait_for(self, subject):
        with anyio.fail_after(STREAM_WITHIN):
            while subject not in [pushed for _, pushed in self.seen]:
                await anyio.sleep(0.05)


class Exchanges:
    """What the session's HTTP client sent and was answered, request by request."""

    def __init__(self):
        self.seen = []

    async def on_response(self, response):
        request = response.request
        self.seen.append({
            "method": request.method,
            "status": response.status_code,
            "session": request.headers.get("mcp-session-id"),
            "last_event_id": request.headers.get("last-event-id"),
        })

    def streams(self):
        return [seen for seen in self.seen if seen["method"] == "GET"]

    async def wait_for_streams(self, count):
        with anyio.fail_after(STREAM_WITHIN):
            while len(self.streams()) < count:
                await anyio.sleep(0.05)


async def calls(session, round_):
    """A few calls, each checked: a task sent to itself is in its inbox."""
    sent = await ok(session, "send", to="dev", subject=f"Round {round_}")
    assert sent["task"]["from"] == "dev", sent
    inbox = await ok(session, "inbox", peek=True)
    assert sent["task"]["id"] in [task["id"] for task in inbox["tasks"]], inbox
    tools = await session.list_tools()
    assert {tool.name for tool in tools.tools} == TOOLS, tools


async def main(url):
    token = os.environ["DEV_TOKEN"]
    exchanges = Exchanges()
    pushes = Pushes()
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=60,
            event_hooks={"response": [exchanges.on_response]}))
        read, write = await stack.enter_async_context(
            streamable_http_client(url, http_client=http))
        session = await stack.enter_async_context(ClientSession(
            read, write,
            client_info=mcp_types.Implementation(name="claude-code", version="2.1.0"),
            notification_bindings=[NotificationBinding(
                method="notifications/claude/channel", params_type=Channel,
                handler=pushes.on_push)]))
        opened = await session.initialize()
        assert opened.server_info.name == "baton", opened
        version = session.protocol_version
        await exchanges.wait_for_streams(1)
        first = exchanges.streams()[0]
        assert first["status"] == 200 and first["last_event_id"] is None, first
        for round_ in range(3):
            await calls(session, round_)
        print("opened", flush=True)

        await anyio.to_thread.run_sync(sys.stdin.readline)
        await exchanges.wait_for_streams(2)
        again = exchanges.streams()[1]
        assert again["status"] == 200, again
        assert again["last_event_id"] is not None, "the stream resumes from where it was"
        print("reopened", flush=True)
        await pushes.wait_for(AFTER_THE_KILL)
        for round_ in range(3, 6):
            await calls(session, round_)
        for round_ in range(6, 9):
            await calls(session, round_)
        assert session.protocol_version == version, session.protocol_version

    sessions = {seen["session"] for seen in exchanges.seen[1:]}
    assert len(sessions) == 1 and None not in sessions, sessions
    refused = [seen for seen in exchanges.seen if seen["status"] >= 400]
    assert not refused, refused
    tasks = [task for task, _ in pushes.seen]
    assert len(tasks) == len(set(tasks)), f"a task pushed twice: {pushes.seen}"
    print(f"{len(exchanges.seen)} requests in one session, "
          f"{len(exchanges.streams())} streams opened")
    print("python hubs scenario: ok")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: DEV_TOKEN=… hubs_scenario.py URL_OF_MCP")
    check_pinned_sdk("python hubs scenario")
    anyio.run(main, sys.argv[1])
