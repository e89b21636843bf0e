"""What both MCP scenarios (scenario.py over stdio, http_scenario.py over HTTP) check alike."""

import json
from importlib.metadata import version
from pathlib import Path

from mcp import MCPError

# The tools baton serves, over either transport.
TOOLS = {
    "agents", "answer", "approve", "ask", "board", "cancel", "claim", "diff", "done", "edit",
    "fail", "inbox", "message", "reassign", "release", "request_changes", "reservations",
    "reserve", "review", "send", "show", "unreserve",
}


def text_of(result):
    assert len(result.content) == 1 and result.content[0].type == "text", result
    return result.content[0].text


async def ok(session, tool, **arguments):
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} refused: {text_of(result)}"
    data = json.loads(text_of(result))
    if isinstance(data, list):
        # The text is the CLI's --json list; structured content holds it under one key.
        assert list(result.structured_content.values()) == [data], result
    else:
        assert result.structured_content == data, result
    return result.structured_content


async def refused(session, tool, **arguments):
    result = await session.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should be refused: {text_of(result)}"
    return text_of(result)


async def unknown_tool_is_a_protocol_error(session):
    try:
        await session.call_tool("register_wake", {})
    except MCPError as error:
        assert error.code == -32602, error
    else:
        raise AssertionError("an unknown tool must be a protocol error")


def check_pinned_sdk(label):
    """The SDK under test is the version requirements.txt pins, not whatever is installed."""
    requirements = Path(__file__).with_name("requirements.txt").read_text()
    pinned = next(line.split("==")[1].strip() for line in requirements.splitlines()
                  if line.startswith("mcp=="))
    assert version("mcp") == pinned, f"mcp {version('mcp')} is installed, {pinned} is pinned"
    print(f"{label}: mcp {pinned}")
