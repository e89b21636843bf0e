"""Drives `baton serve` as an A2A server with the official A2A Python SDK (a2a-sdk), while
the agent on the board is driven by the `baton` command line.

Usage: BATON=<binary> LEAD_TOKEN=… EVE_TOKEN=… python scenario.py http://127.0.0.1:PORT
Run by tests/it/a2a.rs (the_python_a2a_sdk_hands_a_task_to_an_agent_on_the_board), which set
BATON_HOME for the commands this script runs, registered the agent `dev` and made the tokens
with `baton token add lead` and `baton token add eve`. `lead` is the A2A caller: it sends
`dev` tasks through dev's Agent Card and answers and reviews them through A2A; `eve` is
another caller, who sees none of lead's tasks. Exits non-zero with the failed check on any
mismatch; prints "a2a scenario: ok" at the end. The tokens are never printed.
"""

import asyncio
import importlib.metadata
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
from a2a.client import A2ACardResolver, A2AClientError, ClientConfig, ClientFactory
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    InvalidParamsError,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
)

URL = sys.argv[1].rstrip("/")
DEV = f"{URL}/a2a/agents/dev"
TIMEOUT = 60


def check_pinned_sdk():
    """The SDK under test is the version requirements.txt pins, not whatever is installed."""
    requirements = Path(__file__).with_name("requirements.txt").read_text()
    pinned = next(line.split("==")[1].strip() for line in requirements.splitlines()
                  if line.startswith("a2a-sdk=="))
    installed = importlib.metadata.version("a2a-sdk")
    assert installed == pinned, f"a2a-sdk {installed} is installed, {pinned} is pinned"
    print(f"a2a scenario: a2a-sdk {pinned}")


def agent(*args):
    """`baton --as dev ARGS…`: the agent on the board, at work."""
    done = subprocess.run([os.environ["BATON"], "--as", "dev", *args], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"baton {' '.join(args)}: {done.stderr}"


def number(task_id):
    """The board's number of an A2A task id (`default/T-3` is 3)."""
    project, name = task_id.rsplit("/", 1)
    assert project == "default", task_id
    return name.removeprefix("T-")


def state(value):
    return TaskState.Name(value)


def message(text, task_id="", metadata=None):
    sent = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)],
                   task_id=task_id)
    if metadata:
        sent.metadata.update(metadata)
    return sent


def http(token):
    return httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)


async def card_of(token, base=DEV):
    async with http(token) as client:
        return await A2ACardResolver(client, base).get_agent_card()


def client_for(card, token, **config):
    return ClientFactory(ClientConfig(httpx_client=http(token), **config)).create(card)


class Stream:
    """The events of one streamed call, read one at a time with a deadline."""

    def __init__(self, events):
        self.events = events.__aiter__()

    async def next(self):
        return await asyncio.wait_for(self.events.__anext__(), TIMEOUT)

    async def ended(self):
        try:
            extra = await asyncio.wait_for(self.events.__anext__(), TIMEOUT)
        except StopAsyncIteration:
            return
        raise AssertionError(f"the stream went on past its end: {extra}")


async def cards(lead):
    """The cards: dev's, with its skills and bearer auth; the hub's, listing dev; none
    without a token."""
    card = await card_of(lead)
    assert card.name == "dev", card
    assert [skill.id for skill in card.skills] == ["parsers", "rust"], card.skills
    assert "Rust and parsers" in card.skills[0].description, card.skills
    assert card.capabilities.streaming, card.capabilities
    scheme = card.security_schemes["bearer"].http_auth_security_scheme
    assert scheme.scheme.lower() == "bearer", card.security_schemes
    versions = {(i.protocol_version, i.url, i.protocol_binding) for i in card.supported_interfaces}
    assert versions == {("1.0", DEV, "JSONRPC"), ("0.3", DEV, "JSONRPC")}, versions
    hub = await card_of(lead, URL)
    assert "dev" in [skill.id for skill in hub.skills], hub.skills
    assert hub.supported_interfaces[0].url == f"{URL}/a2a", hub.supported_interfaces
    async with httpx.AsyncClient(timeout=TIMEOUT) as anonymous:
        response = await anonymous.get(f"{DEV}/.well-known/agent-card.json")
        assert response.status_code == 401, response.status_code
    return card


async def a_task_through_its_life(card, lead):
    """lead streams a task's statuses while dev claims it, asks (lead answers through
    A2A), asks for a review (lead approves through A2A) and so completes it."""
    client = client_for(card, lead)
    stream = Stream(client.send_message(SendMessageRequest(
        message=message("Fix the parser\nIt drops the commas of src/parse.rs."))))
    first = await stream.next()
    task = first.task
    assert state(task.status.state) == "TASK_STATE_SUBMITTED", task
    assert task.context_id == "default", task
    assert task.metadata["baton"]["status"] == "pending", task.metadata
    assert [p.text for p in task.history[0].parts] == [
        "Fix the parser", "It drops the commas of src/parse.rs."], task.history
    n = number(task.id)
    agent("claim", n)
    working = (await stream.next()).status_update
    assert state(working.status.state) == "TASK_STATE_WORKING", working
    agent("ask", n, "--body", "Which commas: in lists, or in calls too?")
    asked = (await stream.next()).status_update
    assert state(asked.status.state) == "TASK_STATE_INPUT_REQUIRED", asked
    assert asked.status.message.parts[0].text == "Which commas: in lists, or in calls too?", asked
    assert asked.metadata["baton"]["status"] == "input_required", asked.metadata
    # Waiting on its caller, the task's stream ends: the caller answers in a new message.
    await stream.ended()

    stream = Stream(client.send_message(SendMessageRequest(
        message=message("Both.", task_id=task.id))))
    answered = (await stream.next()).task
    assert state(answered.status.state) == "TASK_STATE_SUBMITTED", answered
    assert answered.history[-1].parts[0].text == "Both.", answered.history
    agent("claim", n)
    assert state((await stream.next()).status_update.status.state) == "TASK_STATE_WORKING"
    agent("review", n, "--body", "Commas kept in lists and calls.")
    review = (await stream.next()).status_update
    assert state(review.status.state) == "TASK_STATE_INPUT_REQUIRED", review
    assert review.status.message.parts[0].text == "Commas kept in lists and calls.", review
    assert review.metadata["baton"]["status"] == "review_requested", review.metadata
    await stream.ended()

    stream = Stream(client.send_message(SendMessageRequest(
        message=message("Looks right.", task_id=task.id,
                        metadata={"baton": {"action": "approve"}}))))
    done = (await stream.next()).task
    assert state(done.status.state) == "TASK_STATE_COMPLETED", done
    assert [p.text for p in done.artifacts[0].parts] == ["Commas kept in lists and calls."], done
    await stream.ended()

    # GetTask shows it as it ended, the thread as its history.
    got = await client.get_task(GetTaskRequest(id=task.id))
    assert state(got.status.state) == "TASK_STATE_COMPLETED", got
    said = [message.parts[0].text for message in got.history]
    assert said == ["Fix the parser", "Which commas: in lists, or in calls too?", "Both.",
                    "Commas kept in lists and calls.", "Looks right."], said
    await client.close()
    return task.id


async def changes_asked_for(card, lead):
    """A review that is not approved sends the work back with the caller's words."""
    client = client_for(card, lead, streaming=False, polling=True)
    sent = [event async for event in client.send_message(SendMessageRequest(
        message=message("Rename the module")))][0].task
    n = number(sent.id)
    agent("claim", n)
    agent("review", n, "--body", "Renamed to parse.")
    back = [event async for event in client.send_message(SendMessageRequest(
        message=message("Call it parser, please.", task_id=sent.id)))][0].task
    assert state(back.status.state) == "TASK_STATE_WORKING", back
    assert back.metadata["baton"]["status"] == "changes_requested", back.metadata
    assert back.status.message.parts[0].text == "Call it parser, please.", back.status
    await client.close()
    return sent.id


async def the_old_method_names(card, lead):
    """A 0.3 client (message/stream, tasks/get, tasks/resubscribe): the agent finishes with a
    result, which arrives as an artifact before the final status."""
    legacy = AgentCard()
    legacy.CopyFrom(card)
    del legacy.supported_interfaces[:]
    legacy.supported_interfaces.add(url=DEV, protocol_binding="JSONRPC", protocol_version="0.3")
    client = client_for(legacy, lead)
    assert type(client._transport).__name__ == "CompatJsonRpcTransport", client._transport
    stream = Stream(client.send_message(SendMessageRequest(message=message("Add a test"))))
    task = (await stream.next()).task
    assert state(task.status.state) == "TASK_STATE_SUBMITTED", task
    n = number(task.id)
    # A second caller's view of the same task, opened with tasks/resubscribe.
    again = Stream(client.subscribe(SubscribeToTaskRequest(id=task.id)))
    assert (await again.next()).task.id == task.id
    agent("claim", n)
    agent("done", n, "--result", "tests/parse_commas.rs passes")
    for events in (stream, again):
        assert state((await events.next()).status_update.status.state) == "TASK_STATE_WORKING"
        artifact = (await events.next()).artifact_update.artifact
        assert artifact.parts[0].text == "tests/parse_commas.rs passes", artifact
        assert state((await events.next()).status_update.status.state) == "TASK_STATE_COMPLETED"
        await events.ended()
    got = await client.get_task(GetTaskRequest(id=task.id))
    assert state(got.status.state) == "TASK_STATE_COMPLETED", got
    await client.close()


async def cancel_and_subscribe(card, lead):
    """lead cancels a task it sent (once: a second cancel is refused in baton's words); a
    subscription follows another until the agent fails it."""
    client = client_for(card, lead, streaming=False, polling=True)
    sent = [event async for event in client.send_message(SendMessageRequest(
        message=message("Drop the legacy flag")))][0].task
    canceled = await client.cancel_task(CancelTaskRequest(id=sent.id))
    assert state(canceled.status.state) == "TASK_STATE_CANCELED", canceled
    try:
        await client.cancel_task(CancelTaskRequest(id=sent.id))
        raise AssertionError("a second cancel went through")
    except TaskNotCancelableError as refused:
        assert "it is finished, and nothing moves it again" in refused.message, refused

    other = [event async for event in client.send_message(SendMessageRequest(
        message=message("Port the lexer")))][0].task
    streaming = client_for(card, lead)
    stream = Stream(streaming.subscribe(SubscribeToTaskRequest(id=other.id)))
    assert state((await stream.next()).task.status.state) == "TASK_STATE_SUBMITTED"
    n = number(other.id)
    agent("claim", n)
    agent("fail", n, "--reason", "The lexer is generated.")
    assert state((await stream.next()).status_update.status.state) == "TASK_STATE_WORKING"
    failed = (await stream.next()).status_update
    assert state(failed.status.state) == "TASK_STATE_FAILED", failed
    assert failed.status.message.parts[0].text == "The lexer is generated.", failed
    await stream.ended()
    await client.close()
    await streaming.close()
    return sent.id, other.id


async def only_ones_own(card, lead, eve, lead_tasks):
    """ListTasks shows the caller its own tasks; another caller finds none of them."""
    client = client_for(card, lead)
    listed = await client.list_tasks(ListTasksRequest())
    ids = {task.id for task in listed.tasks}
    assert set(lead_tasks) <= ids, (lead_tasks, ids)
    assert listed.next_page_token == "", listed
    completed = await client.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_COMPLETED))
    assert all(state(t.status.state) == "TASK_STATE_COMPLETED" for t in completed.tasks)
    await client.close()
    stranger = client_for(card, eve)
    assert list((await stranger.list_tasks(ListTasksRequest())).tasks) == []
    try:
        await stranger.get_task(GetTaskRequest(id=lead_tasks[0]))
        raise AssertionError("eve saw lead's task")
    except TaskNotFoundError as refused:
        assert refused.message.startswith("no task T-"), refused
    await stranger.close()


async def a_wrong_token(card):
    """A token nobody holds is refused: HTTP 401, with a JSON-RPC error in baton's words."""
    client = client_for(card, "baton_0000000000", streaming=False)
    try:
        [event async for event in client.send_message(SendMessageRequest(
            message=message("Sneak in")))]
        raise AssertionError("a wrong token was let in")
    except A2AClientError as refused:
        assert "401" in str(refused), refused
    await client.close()
    async with http("baton_0000000000") as raw:
        response = await raw.post(DEV, json={"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                                             "params": {"id": "default/T-1"}})
        assert response.status_code == 401, response.status_code
        error = response.json()["error"]
        assert error["message"].startswith("the token is not known"), error


async def hostile_text(card, lead):
    """Text from either side comes back as data: markup as the characters it is (JSON, never
    HTML), control characters and bidirectional overrides as visible escapes, never raw; a
    subject that holds one is refused in baton's words."""
    client = client_for(card, lead, streaming=False, polling=True)
    subject = "<script>alert('x')</script> **bold** [x](javascript:alert(1)) &amp;"
    sent = [event async for event in client.send_message(SendMessageRequest(
        message=message(f"{subject}\nred \x1b[31mtext\x1b[0m and \u202egnirts")))][0].task
    parts = [part.text for part in sent.history[0].parts]
    assert parts == [subject, "red \\u{1b}[31mtext\\u{1b}[0m and \\u{202e}gnirts"], parts
    assert sent.metadata["baton"]["subject"] == subject, sent.metadata
    n = number(sent.id)
    agent("claim", n)
    agent("ask", n, "--body", "Which \x1b]8;;file:///etc\x07link\x1b]8;;\x07?")
    got = await client.get_task(GetTaskRequest(id=sent.id))
    asked = got.status.message.parts[0].text
    assert asked == "Which \\u{1b}]8;;file:///etc\\u{7}link\\u{1b}]8;;\\u{7}?", asked
    for text in parts + [asked]:
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text, text
    async with http(lead) as raw:
        response = await raw.post(DEV, json={"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                                             "params": {"id": sent.id}})
        assert response.headers["content-type"].startswith("application/json"), response.headers
        assert "<script>" in response.text, "the markup is data, as it was sent"
    try:
        [event async for event in client.send_message(SendMessageRequest(
            message=message("Clear \x1b[2J the screen")))]
        raise AssertionError("a subject with a control character was taken")
    except InvalidParamsError as refused:
        assert refused.message.startswith("the subject must be one line: it holds a control "
                                          "character (\\u{1b}) at byte 6"), refused
    await client.close()


async def main():
    check_pinned_sdk()
    lead, eve = os.environ["LEAD_TOKEN"], os.environ["EVE_TOKEN"]
    card = await cards(lead)
    print("a2a scenario: cards")
    first = await a_task_through_its_life(card, lead)
    print("a2a scenario: a task through its life, streamed")
    second = await changes_asked_for(card, lead)
    await the_old_method_names(card, lead)
    print("a2a scenario: the 0.3 method names")
    canceled, failed = await cancel_and_subscribe(card, lead)
    print("a2a scenario: cancel, subscribe")
    await only_ones_own(card, lead, eve, [first, second, canceled, failed])
    await a_wrong_token(card)
    print("a2a scenario: tokens")
    await hostile_text(card, lead)
    print("a2a scenario: hostile text")
    print("a2a scenario: ok")


if __name__ == "__main__":
    asyncio.run(main())
