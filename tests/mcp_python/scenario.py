"""Drives two `baton mcp` servers with the official MCP Python SDK through a task's whole life.

Usage: python scenario.py PATH_TO_BATON
Run by tests/it/mcp.rs (the_python_sdk_drives_the_same_scenario) in a private BATON_HOME,
from a directory outside the workspace of a bound project `api`. One client uses the
`initialize` handshake; the other probes the stateless 2026-07-28 era first
(`server/discover`, as Claude Code does), is refused with -32601 and falls back to
`initialize` (baton stays on the handshake era, where channel pushes work).
Exits non-zero with the failed check on any mismatch; prints "python scenario: ok" at the end.
"""

import os
import sys
from contextlib import AsyncExitStack

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

from common import TOOLS, check_pinned_sdk, ok, refused, unknown_tool_is_a_protocol_error


async def open_server(stack, baton, agent, lifecycle):
    params = StdioServerParameters(
        command=baton,
        args=["--as", agent, "mcp"],
        env={key: os.environ[key] for key in ("BATON_HOME", "BATON_NOTIFY")},
        cwd=os.getcwd(),
    )
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    if lifecycle == "discover":
        try:
            await session.discover()
        except MCPError as error:
            assert error.code == -32601, error
        else:
            raise AssertionError("server/discover must be refused")
    result = await session.initialize()
    assert result.server_info.name == "baton", result
    assert result.capabilities.experimental == {"claude/channel": {}}, result.capabilities
    return session


async def main(baton):
    async with AsyncExitStack() as stack:
        claude = await open_server(stack, baton, "claude", "discover")
        codex = await open_server(stack, baton, "codex", "initialize")
        assert claude.protocol_version == "2025-11-25", claude.protocol_version
        assert codex.protocol_version == "2025-11-25", codex.protocol_version

        for session in (claude, codex):
            tools = await session.list_tools()
            assert {tool.name for tool in tools.tools} == TOOLS, tools

        inbox = await ok(codex, "inbox")
        assert inbox["agent"] == "codex" and inbox["tasks"] == [], inbox

        sent = await ok(claude, "send", to="codex", subject="Fix the date parser",
                        body="It drops the time zone", files=["src/date.rs"], review=True)
        task = sent["task"]
        assert (task["id"], task["from"], task["to"], task["status"]) == \
            (1, "claude", "codex", "pending"), task

        inbox = await ok(codex, "inbox")
        assert [(t["id"], t["reason"]) for t in inbox["tasks"]] == [(1, "assigned")], inbox

        assert (await ok(codex, "claim", id=1))["task"]["status"] == "working"
        asked = await ok(codex, "ask", id=1, body="Which zone is the default?")
        assert asked["task"]["status"] == "input_required"
        inbox = await ok(claude, "inbox")
        assert inbox["tasks"][0]["reason"] == "question", inbox
        assert inbox["tasks"][0]["last_word"]["text"] == "Which zone is the default?"

        assert (await ok(claude, "answer", id=1, body="UTC"))["task"]["status"] == "pending"
        await ok(codex, "claim", id=1)
        assert (await ok(codex, "review", id=1, body="Ready"))["task"]["status"] == "review_requested"
        inbox = await ok(claude, "inbox")
        assert inbox["tasks"][0]["reason"] == "review_requested", inbox

        changed = await ok(claude, "request_changes", id=1, body="Add a test")
        assert changed["task"]["status"] == "changes_requested"
        inbox = await ok(codex, "inbox")
        assert inbox["tasks"][0]["reason"] == "changes_requested", inbox
        await ok(codex, "claim", id=1)
        await ok(codex, "review", id=1, body="Test added")

        message = await refused(codex, "approve", id=1)
        assert message.startswith("error: T-1 is review_requested"), message
        assert "only claude (the reviewer) can approve it" in message, message

        approved = await ok(claude, "approve", id=1, body="Thanks")
        assert approved["task"]["status"] == "completed", approved
        shown = await ok(codex, "show", id=1)
        assert [entry["kind"] for entry in shown["thread"]] == [
            "claim", "question", "answer", "claim", "review_request",
            "changes_request", "claim", "review_request", "approval",
        ], shown
        board = await ok(codex, "board", all=True)
        assert [t["id"] for t in board["tasks"]] == [1], board

        # A message, read through the inbox (which marks it read).
        sent = await ok(claude, "message", to="codex", text="Thanks for the fix")
        assert (sent["message"]["from"], sent["message"]["to"]) == ("claude", "codex"), sent
        inbox = await ok(codex, "inbox")
        assert [m["body"] for m in inbox["messages"]] == ["Thanks for the fix"], inbox
        inbox = await ok(codex, "inbox")
        assert inbox["messages"] == [], inbox
        message = await refused(claude, "message", to="nobody", text="Hello")
        assert message.startswith("error: unknown agent `nobody`"), message

        # Isolation: project api is bound to a workspace this process is not in.
        message = await refused(claude, "board", project="api")
        assert message.startswith("error: project api is bound to "), message
        assert "; you are in " + os.getcwd() in message, message
        assert "\nhint: " in message, message

        # Bad arguments are tool results; an unknown tool is a protocol error.
        message = await refused(codex, "claim", id="soon")
        assert "is not a task id" in message, message
        for session in (claude, codex):
            await unknown_tool_is_a_protocol_error(session)

    print("python scenario: ok")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: scenario.py PATH_TO_BATON")
    check_pinned_sdk("python scenario")
    anyio.run(main, sys.argv[1])
