"""Drives one MCP session with the official MCP Python SDK through a load balancer in front
of two `baton serve` on one database, while the test SIGKILLs the hub holding its stream.

Usage: DEV_TOKEN=… python hubs_scenario.py http://127.0.0.1:PORT/mcp
Run by tests/it/mcp_hubs.rs (the_python_sdk_carries_on_through_haproxy_when_a_hub_is_killed),
which talks with it over stdin and stdout:
1. the script opens its session, waits for its stream (the GET) to be open, makes calls,
   and prints "opened";
2. the test SIGKILLs a hub and writes a line;
3. the script makes more calls, waits for its stream to be open again with `Last-Event-ID`
   (the SDK reconnects it by itself), makes more, and prints "python hubs scenario: ok".
Every request of the session must carry its one session id and be answered without an
error; exits non-zero with the failed check otherwise. The token is never printed.
"""

import os
import sys
from contextlib import AsyncExitStack

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from common import TOOLS, check_pinned_sdk, ok

# How long the stream may take to open again: the SDK waits the `retry` the server gave
# (3 s) before it reconnects.
STREAM_WITHIN = 30


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
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=60,
            event_hooks={"response": [exchanges.on_response]}))
        read, write = await stack.enter_async_context(
            streamable_http_client(url, http_client=http))
        session = await stack.enter_async_context(ClientSession(read, write))
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
        for round_ in range(3, 6):
            await calls(session, round_)
        await exchanges.wait_for_streams(2)
        again = exchanges.streams()[1]
        assert again["status"] == 200, again
        assert again["last_event_id"] is not None, "the stream resumes from where it was"
        for round_ in range(6, 9):
            await calls(session, round_)
        assert session.protocol_version == version, session.protocol_version

    sessions = {seen["session"] for seen in exchanges.seen[1:]}
    assert len(sessions) == 1 and None not in sessions, sessions
    refused = [seen for seen in exchanges.seen if seen["status"] >= 400]
    assert not refused, refused
    print(f"{len(exchanges.seen)} requests in one session, "
          f"{len(exchanges.streams())} streams opened")
    print("python hubs scenario: ok")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: DEV_TOKEN=… hubs_scenario.py URL_OF_MCP")
    check_pinned_sdk("python hubs scenario")
    anyio.run(main, sys.argv[1])
