"""Drives `/mcp` of a running `baton serve` with the official MCP Python SDK over Streamable
HTTP, as two tokens, through a task's whole life.

Usage: LEAD_TOKEN=… DEV_TOKEN=… python http_scenario.py http://127.0.0.1:PORT/mcp
Run by tests/it/mcp_http.rs (the_python_sdk_drives_a_task_over_http), which made the tokens
with `baton token add lead` and `baton token add dev`. `lead` opens its session in the
stateless 2026-07-28 era (`server/discover`, no `initialize`), `dev` with `initialize`; each
call acts as its token's agent whatever it names. Exits non-zero with the failed check on any
mismatch; prints "python http scenario: ok" at the end. The tokens are never printed.
"""

import os
import sys
from contextlib import AsyncExitStack

import anyio
import httpx2
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client

from common import TOOLS, check_pinned_sdk, ok, refused, unknown_tool_is_a_protocol_error


async def open_session(stack, url, token, lifecycle, extra_headers=None, statuses=None):
    """A session whose every request carries `token`; `statuses` collects HTTP statuses."""
    headers = {"Authorization": f"Bearer {token}", **(extra_headers or {})}

    async def record(response):
        if statuses is not None:
            statuses.append(response.status_code)

    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers=headers, timeout=60, event_hooks={"response": [record]}))
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write))
    if lifecycle == "discover":
        result = await session.discover()
        assert session.protocol_version == "2026-07-28", session.protocol_version
    else:
        result = await session.initialize()
        assert result.server_info.name == "baton", result
        assert session.protocol_version in ("2025-06-18", "2025-11-25"), session.protocol_version
    return session


def leaves(error):
    """The errors inside `error`, which anyio may have grouped."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


async def refused_token(url):
    """A session with a token nobody holds does not open: the server answers 401."""
    statuses = []
    try:
        with anyio.fail_after(60):
            async with AsyncExitStack() as stack:
                await open_session(stack, url, "baton_0000", "initialize", statuses=statuses)
    except BaseException as error:  # noqa: B036 - anyio groups what the SDK raises
        found = leaves(error)
        assert not any(isinstance(leaf, TimeoutError) for leaf in found), found
        refusals = [leaf for leaf in found if isinstance(leaf, MCPError)]
        assert refusals, found
        assert statuses == [401], statuses
        return
    raise AssertionError("a wrong token opened a session")


async def main(url):
    lead_token, dev_token = os.environ["LEAD_TOKEN"], os.environ["DEV_TOKEN"]
    async with AsyncExitStack() as stack:
        lead = await open_session(stack, url, lead_token, "discover")
        dev = await open_session(stack, url, dev_token, "initialize")

        for session in (lead, dev):
            tools = await session.list_tools()
            assert {tool.name for tool in tools.tools} == TOOLS, tools

        inbox = await ok(dev, "inbox")
        assert inbox["agent"] == "dev" and inbox["tasks"] == [], inbox
        assert (await ok(lead, "inbox"))["agent"] == "lead"

        sent = await ok(lead, "send", to="dev", subject="Fix the parser",
                        body="It drops zones", review=True)
        task = sent["task"]
        assert (task["id"], task["from"], task["to"], task["review"]) == \
            (1, "lead", "dev", True), task

        inbox = await ok(dev, "inbox")
        assert [(t["id"], t["reason"]) for t in inbox["tasks"]] == [(1, "assigned")], inbox
        assert (await ok(dev, "claim", id=1))["task"]["status"] == "working"
        asked = await ok(dev, "ask", id=1, body="Which zone?")
        assert asked["task"]["status"] == "input_required"
        inbox = await ok(lead, "inbox")
        assert inbox["tasks"][0]["reason"] == "question", inbox
        assert inbox["tasks"][0]["last_word"]["text"] == "Which zone?", inbox
        assert (await ok(lead, "answer", id=1, body="UTC"))["task"]["status"] == "pending"
        await ok(dev, "claim", id=1)

        # Sent with review: done is refused, review hands it to lead, who approves.
        message = await refused(dev, "done", id=1, result="Fixed")
        assert "it was sent with --review" in message, message
        reviewed = await ok(dev, "review", id=1, body="Fixed")
        assert reviewed["task"]["status"] == "review_requested", reviewed
        message = await refused(dev, "approve", id=1)
        assert message.startswith("error: T-1 is review_requested"), message
        approved = await ok(lead, "approve", id=1, body="Thanks")
        assert approved["task"]["status"] == "completed", approved

        shown = await ok(dev, "show", id=1)
        assert (shown["from"], shown["to"]) == ("lead", "dev"), shown
        assert [(e["kind"], e["by"]) for e in shown["thread"]] == [
            ("claim", "dev"), ("question", "dev"), ("answer", "lead"), ("claim", "dev"),
            ("review_request", "dev"), ("approval", "lead"),
        ], shown
        board = await ok(lead, "board", all=True)
        assert [t["id"] for t in board["tasks"]] == [1], board

        # Naming another agent, in arguments and headers, still acts as the token's agent.
        mallory = await open_session(stack, url, lead_token, "initialize",
                                     {"X-Baton-Agent": "mallory", "X-Agent": "mallory"})
        sent = await ok(mallory, "send", to="dev", subject="As mallory?", **{
            "as": "mallory", "agent": "mallory", "from": "mallory"})
        assert sent["task"]["from"] == "lead", sent
        assert (await ok(mallory, "inbox", agent="mallory"))["agent"] == "lead"

        for session in (lead, dev):
            await unknown_tool_is_a_protocol_error(session)

    await refused_token(url)
    print("python http scenario: ok")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: LEAD_TOKEN=… DEV_TOKEN=… http_scenario.py URL_OF_MCP")
    check_pinned_sdk("python http scenario")
    anyio.run(main, sys.argv[1])
