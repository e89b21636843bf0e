#!/usr/bin/env python3
"""A scripted model for the agent clients' end-to-end tests (tests/it/agents_e2e.rs).

It speaks the four model APIs the clients use, on 127.0.0.1 only:

  Claude Code   POST /v1/messages                 Anthropic Messages, server-sent events
  Codex         POST /v1/responses                OpenAI Responses, server-sent events
  Gemini CLI    POST /v1beta/models/M:streamGenerateContent?alt=sse (and :generateContent)
  opencode      POST /v1/chat/completions         OpenAI chat completions, streamed chunks

and plays one model in all of them: it reads the baton context the client sent (a hook's
text, or what baton's `inbox` tool or `baton --json inbox` answered), takes the first task
it has not dealt with, and answers with tool calls to baton through the tools the client
offers (`mcp__baton__claim`, `mcp_baton_claim`, `baton_claim`, Codex's `mcp__baton`
namespace, or Codex's shell running `baton`): claim, then done with the scripted result.
A task whose text says ASK FIRST and shows no answer yet gets the scripted question
instead. Where the conversation says to pass `project: X` to every baton tool (a wake
prompt of `baton listen`, whose tools reach the hub over HTTP), its tool calls name project
X. It deals with one task per turn, then ends the turn, so that a second task is only done
when something (a stop hook) makes the client go on.

With `--edit PATH` (once or more) and `--edit-root DIR`, it plays a model that only edits
files: it writes each PATH (relative to DIR) in turn with the client's own tool for writing a
file (Claude Code's `Write`, Gemini CLI's `write_file`, opencode's `write`, Codex's
`apply_patch` adding the file), `EDITED` and a newline, whatever the tool answered for the
one before, then ends its turn. A test sees what the client told it of each in the next
request. With `--edit-root work-in`, DIR is the one the conversation says to work in
(`work in DIR (branch …)`, as baton words a task's worktree). With `--then-run COMMAND` as
well, once every edit is made it runs COMMAND once with the client's shell tool, then ends
its turn.

With `--delegate AGENT`, it plays a model that hands the user's work to another agent
instead: where the client offers Gemini CLI's `invoke_agent` tool (its remote subagents,
which `baton setup --a2a` writes), it calls it once with `agent_name` AGENT and the prompt
`--delegate-prompt`, then, once the tool's result is back, ends the turn quoting it. With
`--delegate-answer TEXT` as well, a first result that asks (it holds the `--question`) is
answered with a second call to the same agent, prompt TEXT, before the turn ends.

Every request is appended to the log (`--log`, one JSON object a line: path, body and what
the model answered) so that a test can see what the client sent. The port is printed on
stdout as `PORT <n>`. The server stops by itself when its standard input closes or when no
request came for `--idle` seconds.

Standard library only: CI has python3 and nothing to install.
"""

import argparse
import json
import re
import shlex
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ACTIONS = ("inbox", "claim", "ask", "done")
# The clients' shell tools: Codex, Claude Code, Gemini CLI, opencode.
SHELLS = ("exec_command", "Bash", "run_shell_command", "bash")
ASK_MARKER = "ASK FIRST"
# A conversation that runs this long is going in circles: the model ends its turn.
MAX_CALLS = 16


class Script:
    """What the model says: the result it reports and the question it asks."""

    def __init__(
        self,
        result,
        question,
        route,
        baton,
        delegate=None,
        delegate_prompt="",
        delegate_answer=None,
        edits=(),
        edit_root=".",
        then_run=None,
    ):
        self.result = result
        self.question = question
        self.route = route  # "mcp" or "shell"
        self.baton = baton  # the program the shell route runs
        self.delegate = delegate  # the subagent to hand the work to, if any
        self.delegate_prompt = delegate_prompt
        self.delegate_answer = delegate_answer  # what to answer the subagent's question with
        self.edits = list(edits)  # the files to write, relative to edit_root
        self.edit_root = edit_root
        self.then_run = then_run  # a shell command to run once the edits are made


# ----------------------------------------------------------------------------------------
# The conversation, whatever the dialect: an ordered list of events.
#   ("user", text)         a user turn (the prompt, or a stop hook's word to go on)
#   ("context", text)      other text the model is shown (system prompt, reminders)
#   ("call", name, args)   a tool call the model made (name as the client spells it)
#   ("result", text)       what a tool call answered


def strings_in(value):
    """Every string inside a JSON value, in order; objects that are not text are dumped."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in strings_in(item)]
    if isinstance(value, dict):
        return [json.dumps(value)]
    return []


def claude_events(body):
    events = [("context", text) for text in strings_in(body.get("system", []))]
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if message.get("role") == "assistant":
            for block in blocks:
                if block.get("type") == "tool_use":
                    events.append(("call", block.get("name"), block.get("input") or {}))
            continue
        has_result = any(block.get("type") == "tool_result" for block in blocks)
        for block in blocks:
            if block.get("type") == "tool_result":
                text = "\n".join(
                    item if isinstance(item, str) else item.get("text", json.dumps(item))
                    for item in (
                        [block["content"]]
                        if isinstance(block.get("content"), str)
                        else block.get("content") or []
                    )
                )
                events.append(("result", text))
            elif block.get("type") == "text":
                kind = "context" if has_result else "user"
                events.append((kind, block.get("text", "")))
    return events


def claude_tools(body):
    return [tool.get("name") for tool in body.get("tools", []) if tool.get("name")]


def codex_events(body):
    events = [("context", body.get("instructions") or "")]
    for item in body.get("input", []):
        kind = item.get("type")
        if kind == "message":
            text = "\n".join(strings_in([part.get("text", "") for part in item.get("content", [])]))
            if item.get("role") == "user":
                events.append(("user", text))
            elif item.get("role") != "assistant":
                events.append(("context", text))
        elif kind == "function_call":
            try:
                args = json.loads(item.get("arguments") or "{}")
            except ValueError:
                args = {}
            name = item.get("name", "")
            if item.get("namespace"):
                name = item["namespace"] + "__" + name
            events.append(("call", name, args))
        elif kind == "function_call_output":
            events.append(("result", "\n".join(strings_in(item.get("output")))))
        elif kind == "custom_tool_call":
            events.append(("call", item.get("name", ""), {"input": item.get("input", "")}))
        elif kind == "custom_tool_call_output":
            events.append(("result", "\n".join(strings_in(item.get("output")))))
    return events


def codex_tools(body):
    names = []
    for tool in body.get("tools", []):
        if tool.get("type") == "namespace":
            names += [tool["name"] + "__" + inner.get("name", "") for inner in tool.get("tools", [])]
        elif tool.get("name"):
            names.append(tool["name"])
    return names


def gemini_events(body):
    events = [("context", text) for text in strings_in(body.get("systemInstruction", {}))]
    for content in body.get("contents", []):
        parts = content.get("parts", [])
        if content.get("role") == "model":
            for part in parts:
                if "functionCall" in part:
                    call = part["functionCall"]
                    events.append(("call", call.get("name"), call.get("args") or {}))
            continue
        has_result = any("functionResponse" in part for part in parts)
        for part in parts:
            if "functionResponse" in part:
                events.append(("result", "\n".join(strings_in(part["functionResponse"]))))
            elif "text" in part:
                events.append(("context" if has_result else "user", part["text"]))
    return events


def gemini_tools(body):
    return [
        declaration.get("name")
        for tool in body.get("tools", [])
        for declaration in tool.get("functionDeclarations", [])
    ]


def chat_events(body):
    events = []
    for message in body.get("messages", []):
        role = message.get("role")
        text = "\n".join(
            strings_in(
                [
                    part.get("text", "") if isinstance(part, dict) else part
                    for part in (
                        message.get("content")
                        if isinstance(message.get("content"), list)
                        else [message.get("content") or ""]
                    )
                ]
            )
        )
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                try:
                    args = json.loads(function.get("arguments") or "{}")
                except ValueError:
                    args = {}
                events.append(("call", function.get("name"), args))
        elif role == "tool":
            events.append(("result", text))
        elif role == "user":
            events.append(("user", text))
        else:
            events.append(("context", text))
    return events


def chat_tools(body):
    return [tool.get("function", {}).get("name") for tool in body.get("tools", [])]


# ----------------------------------------------------------------------------------------
# Reading baton's context.

HOOK_TASK = re.compile(r"^T-(\d+) \[\w+\] ([^:\n]+): (.*)$", re.MULTILINE)


def hook_view(text):
    """The tasks a hook's text shows, or None when it shows no inbox."""
    if "waiting for you" not in text or not HOOK_TASK.search(text):
        return None
    tasks = []
    starts = list(HOOK_TASK.finditer(text))
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        block = text[match.start() : end]
        answer = re.search(r"last answer by [^:\n]*\): (.*)", block)
        tasks.append(
            {
                "id": int(match.group(1)),
                "text": block,
                "answer": answer.group(1).strip() if answer else None,
            }
        )
    return tasks


def json_objects(text):
    """The JSON objects that start somewhere in `text` (a tool's output may wrap them)."""
    decoder = json.JSONDecoder()
    found = []
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def inbox_view(text):
    """The tasks an inbox answer (`baton --json inbox`, the `inbox` tool) shows, or None."""
    for value in json_objects(text):
        if isinstance(value.get("tasks"), list) and "agent" in value:
            tasks = []
            for task in value["tasks"]:
                answers = [
                    entry.get("text")
                    for entry in task.get("thread", [])
                    if entry.get("kind") == "answer"
                ]
                tasks.append(
                    {
                        "id": task.get("id"),
                        "text": "{} {}".format(task.get("subject", ""), task.get("body", "")),
                        "answer": answers[-1] if answers else None,
                    }
                )
            return tasks
    return None


def action_of(name, args):
    """baton's action and arguments for a call the model made, or None for other tools."""
    if name in SHELLS:
        command = args.get("cmd") or args.get("command") or ""
        if isinstance(command, list):
            command = " ".join(command)
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        programs = [i for i, word in enumerate(words) if word.rsplit("/", 1)[-1] == "baton"]
        if not programs:
            return None
        words = [word for word in words[programs[0] + 1 :] if word != "--json"]
        if not words or words[0] not in ACTIONS:
            return None
        numbers = [int(word) for word in words[1:] if word.isdigit()]
        return words[0], {"id": numbers[0]} if numbers else {}
    match = re.search(r"baton_+(\w+)$", name or "")
    if match and match.group(1) in ACTIONS:
        return match.group(1), args
    return None


# ----------------------------------------------------------------------------------------
# The model.


# The answers the model was shown, by task id, over every request so far. A client that
# puts the context in the system prompt afresh before each model call (opencode's plugin)
# sends a later request without what an earlier one showed; the model remembers it, as a
# model remembers what it read earlier in its turn.
SHOWN_ANSWERS = {}
SHOWN_LOCK = threading.Lock()


def shown_answers(events):
    """The answers `events` show, by task id."""
    answers = {}
    for event in events:
        if event[0] in ("user", "context", "result"):
            shown = inbox_view(event[1]) if event[0] == "result" else hook_view(event[1])
            for item in shown or []:
                if item["answer"]:
                    answers[item["id"]] = item["answer"]
    return answers


DELEGATE_TOOL = "invoke_agent"


def delegate(events, tools, script):
    """The next step of a model that hands the work to `script.delegate`."""
    if DELEGATE_TOOL not in tools:
        return ("text", "I have no {} tool; offered: {}".format(DELEGATE_TOOL, tools))
    calls = sum(1 for event in events if event[0] == "call" and event[1] == DELEGATE_TOOL)
    results = [event[1] for event in events if event[0] == "result"]
    if calls == 0:
        args = {"agent_name": script.delegate, "prompt": script.delegate_prompt}
        return ("call", DELEGATE_TOOL, args)
    asked = calls == 1 and results and script.question in results[-1]
    if asked and script.delegate_answer:
        args = {"agent_name": script.delegate, "prompt": script.delegate_answer}
        return ("call", DELEGATE_TOOL, args)
    return ("text", "The subagent answered: {}".format(results[-1] if results else "nothing"))


# The clients' tools that write a whole file, and how each takes the path and the text.
WRITERS = (
    ("Write", lambda path, text: {"file_path": path, "content": text}),
    ("write_file", lambda path, text: {"file_path": path, "content": text}),
    ("write", lambda path, text: {"filePath": path, "content": text}),
)


def edit(events, tools, script):
    """The next step of a model that writes each of `script.edits` once."""
    writer = next((entry for entry in WRITERS if entry[0] in tools), None)
    name = writer[0] if writer else "apply_patch"
    if writer is None and name not in tools:
        return ("text", "I have no tool to write a file; offered: {}".format(tools))
    made = sum(1 for event in events if event[0] == "call" and event[1] == name)
    if made >= len(script.edits):
        ran = any(event[0] == "call" and event[1] in SHELLS for event in events)
        if script.then_run and not ran:
            shell = next((name for name in SHELLS if name in tools), None)
            if shell is None:
                return ("text", "I have no shell tool; offered: {}".format(tools))
            if shell == "exec_command":
                return ("call", shell, {"cmd": script.then_run})
            return ("call", shell, {"command": script.then_run, "description": "run"})
        return ("text", "I tried every edit.")
    path = script.edits[made]
    if writer:
        root = script.edit_root
        if root == "work-in":
            said = " ".join(event[1] for event in events if event[0] in ("user", "context"))
            found = WORK_IN.findall(said)
            if not found:
                return ("text", "Nobody told me where to work.")
            root = found[-1]
        whole = root.rstrip("/") + "/" + path
        return ("call", name, writer[1](whole, "EDITED\n"))
    patch = "*** Begin Patch\n*** Add File: {}\n+EDITED\n*** End Patch\n".format(path)
    return ("call", name, {CUSTOM_INPUT: patch})


# Where baton says a task's work is done: `work in DIR (branch baton/T-3)`.
WORK_IN = re.compile(r"work in (\S+) \(branch ")

# A call of a freeform tool (Codex's apply_patch) carries its whole input under this key.
CUSTOM_INPUT = "__custom_input"


def decide(events, tools, script):
    """The next step: ("call", name, args) or ("text", words)."""
    if script.delegate and tools:
        return delegate(events, tools, script)
    if script.edits and tools:
        return edit(events, tools, script)
    with SHOWN_LOCK:
        SHOWN_ANSWERS.update(shown_answers(events))
    if not tools:
        # A side request (opencode names its session first): no tools, no baton.
        return ("text", "Baton tasks")
    calls = [event for event in events if event[0] == "call"]
    if len(calls) >= MAX_CALLS or (len(calls) >= 3 and calls[-1] == calls[-2] == calls[-3]):
        return ("text", "I am going in circles; stopping here.")
    # The turn starts at the last user message; what came before it is history.
    turn_start = max((i for i, event in enumerate(events) if event[0] == "user"), default=0)
    done, asked, claimed = set(), set(), set()
    acted_this_turn = False
    for index, event in enumerate(events):
        if event[0] != "call":
            continue
        action = action_of(event[1], event[2])
        if not action:
            continue
        name, args = action
        task = args.get("id")
        task = int(str(task).lstrip("Tt-")) if task is not None else None
        if name == "done":
            done.add(task)
        elif name == "ask":
            asked.add(task)
        elif name == "claim":
            claimed.add(task)
        if name in ("done", "ask") and index > turn_start:
            acted_this_turn = True

    def call(action, args):
        if script.route == "shell":
            return shell_call(tools, script.baton, action, args)
        return tool_call(events, tools, action, args)

    for task in sorted(claimed - done):
        return call("done", {"id": task, "result": result_text(events, task, script)})
    if acted_this_turn:
        return ("text", "Finished with that task for now.")
    view, view_index = None, -1
    for index, event in enumerate(events):
        if event[0] in ("user", "context", "result"):
            shown = inbox_view(event[1]) if event[0] == "result" else hook_view(event[1])
            if shown is not None:
                view, view_index = shown, index
    # A word after the last look that names a task not in it (a stop hook's) asks for a
    # fresh look.
    later = " ".join(event[1] for event in events[view_index + 1 :] if event[0] == "user")
    named = {int(number) for number in re.findall(r"\bT-(\d+)\b", later)}
    known = {task["id"] for task in view or []}
    if view is None or (named - known - done - asked):
        return call("inbox", {})
    for task in view:
        if task["id"] in done or task["id"] in asked:
            continue
        if ASK_MARKER in task["text"] and not task["answer"]:
            return call("ask", {"id": task["id"], "body": script.question})
        return call("claim", {"id": task["id"]})
    return ("text", "Nothing waits for me on baton.")


def result_text(events, task, script):
    """The scripted result, with the answer the model was given, if any."""
    answer = shown_answers(events).get(task)
    if answer is None:
        with SHOWN_LOCK:
            answer = SHOWN_ANSWERS.get(task)
    return script.result + (" (answer used: {})".format(answer) if answer else "")


# What a wake prompt says when baton's tools cannot tell the project by themselves (they
# reach a hub over HTTP, or the run's directory is no project's).
PASS_PROJECT = re.compile(r"Pass `project: ([A-Za-z0-9_.-]+)` to every baton tool")


def project_to_pass(events):
    """The project the conversation says to name in every baton tool call, or None."""
    project = None
    for event in events:
        if event[0] in ("user", "context"):
            for match in PASS_PROJECT.finditer(event[1]):
                project = match.group(1)
    return project


def tool_call(events, tools, action, args):
    wanted = [name for name in tools if re.search(r"(^|_)baton_+{}$".format(action), name or "")]
    if wanted:
        project = project_to_pass(events)
        if project:
            args = dict(args, project=project)
        return ("call", wanted[0], args)
    # Claude Code defers MCP tools behind ToolSearch: load baton's (again, if the server was
    # still connecting the first time, as a model would).
    searches = sum(1 for event in events if event[0] == "call" and event[1] == "ToolSearch")
    if "ToolSearch" in tools and searches < 3:
        names = ",".join("mcp__baton__" + name for name in ACTIONS)
        return ("call", "ToolSearch", {"query": "select:" + names})
    return ("text", "I have no baton tool called {}; offered: {}".format(action, tools))


def shell_call(tools, baton, action, args):
    shell = next((name for name in SHELLS if name in tools), None)
    if shell is None:
        return ("text", "I have no shell tool; offered: {}".format(tools))
    words = [baton, "--json", action]
    if "id" in args:
        words.append(str(args["id"]))
    if action == "ask":
        words += ["--body", args["body"]]
    if action == "done":
        words += ["--result", args["result"]]
    command = " ".join(shlex.quote(word) for word in words)
    if shell == "exec_command":
        return ("call", shell, {"cmd": command})
    return ("call", shell, {"command": command, "description": "baton " + action})


# ----------------------------------------------------------------------------------------
# The wire: one answer per dialect.


def sse(events):
    return "".join(
        ("event: {}\n".format(name) if name else "") + "data: {}\n\n".format(json.dumps(data))
        for name, data in events
    ).encode()


def claude_answer(step, stream, model, serial):
    if step[0] == "call":
        block = {"type": "tool_use", "id": "toolu_{:04d}".format(serial), "name": step[1], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(step[2])}
        stop = "tool_use"
        whole = dict(block, input=step[2])
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": step[1]}
        stop = "end_turn"
        whole = {"type": "text", "text": step[1]}
    usage = {"input_tokens": 10, "output_tokens": 10}
    message = {
        "id": "msg_{:04d}".format(serial),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    if not stream:
        return "application/json", json.dumps(
            dict(message, content=[whole], stop_reason=stop)
        ).encode()
    return "text/event-stream", sse(
        [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 10},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


def codex_answer(step, serial):
    response_id = "resp_{:04d}".format(serial)
    if step[0] == "call" and CUSTOM_INPUT in step[2]:
        item = {
            "type": "custom_tool_call",
            "id": "ctc_{:04d}".format(serial),
            "call_id": "call_{:04d}".format(serial),
            "name": step[1],
            "input": step[2][CUSTOM_INPUT],
        }
    elif step[0] == "call":
        namespace, _, name = step[1].rpartition("__")
        item = {
            "type": "function_call",
            "id": "fc_{:04d}".format(serial),
            "call_id": "call_{:04d}".format(serial),
            "name": name if namespace else step[1],
            "arguments": json.dumps(step[2]),
        }
        if namespace:
            item["namespace"] = namespace
    else:
        item = {
            "type": "message",
            "id": "msg_{:04d}".format(serial),
            "role": "assistant",
            "content": [{"type": "output_text", "text": step[1], "annotations": []}],
        }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 20,
    }
    return "text/event-stream", sse(
        [
            ("response.created", {"type": "response.created", "response": {"id": response_id}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            (
                "response.completed",
                {"type": "response.completed", "response": {"id": response_id, "usage": usage}},
            ),
        ]
    )


def gemini_answer(step, stream, model):
    if step[0] == "call":
        part = {"functionCall": {"name": step[1], "args": step[2]}}
    else:
        part = {"text": step[1]}
    chunk = {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
        "modelVersion": model,
    }
    if not stream:
        return "application/json", json.dumps(chunk).encode()
    return "text/event-stream", sse([(None, chunk)])


def chat_answer(step, model, serial):
    base = {
        "id": "chatcmpl-{:04d}".format(serial),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    if step[0] == "call":
        delta = {
            "role": "assistant",
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_{:04d}".format(serial),
                    "type": "function",
                    "function": {"name": step[1], "arguments": json.dumps(step[2])},
                }
            ],
        }
        finish = "tool_calls"
    else:
        delta = {"role": "assistant", "content": step[1]}
        finish = "stop"
    chunks = [
        dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
        dict(
            base,
            choices=[{"index": 0, "delta": {}, "finish_reason": finish}],
            usage={"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        ),
    ]
    body = "".join("data: {}\n\n".format(json.dumps(chunk)) for chunk in chunks)
    return "text/event-stream", (body + "data: [DONE]\n\n").encode()


# ----------------------------------------------------------------------------------------
# The server.


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script, log_path):
        super().__init__(("127.0.0.1", 0), Handler)
        self.script = script
        self.log_path = log_path
        self.lock = threading.Lock()
        self.serial = 0
        self.last_request = time.monotonic()

    def record(self, entry):
        with self.lock:
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps(entry) + "\n")

    def next_serial(self):
        with self.lock:
            self.serial += 1
            self.last_request = time.monotonic()
            return self.serial


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, content_type, data):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        # No model list, no update check: the clients go on without them.
        self.server.record({"method": "GET", "path": self.path})
        self.reply(404, "application/json", b'{"error":{"message":"not here"}}')

    def do_POST(self):
        serial = self.server.next_serial()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        entry = {"n": serial, "method": "POST", "path": self.path, "body": body}
        script = self.server.script
        if path.endswith("/count_tokens"):
            step = None
            content_type, data = "application/json", b'{"input_tokens": 10}'
        elif path.endswith(":countTokens"):
            step = None
            content_type, data = "application/json", b'{"totalTokens": 10}'
        elif path.endswith("/messages"):
            step = decide(claude_events(body), claude_tools(body), script)
            content_type, data = claude_answer(step, body.get("stream", False), body.get("model", ""), serial)
        elif path.endswith("/responses"):
            step = decide(codex_events(body), codex_tools(body), script)
            content_type, data = codex_answer(step, serial)
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            model = path.rsplit("/", 1)[-1].split(":")[0]
            step = decide(gemini_events(body), gemini_tools(body), script)
            content_type, data = gemini_answer(step, ":streamGenerateContent" in path, model)
        elif path.endswith("/chat/completions"):
            step = decide(chat_events(body), chat_tools(body), script)
            content_type, data = chat_answer(step, body.get("model", ""), serial)
        else:
            entry["answer"] = "404"
            self.server.record(entry)
            self.reply(404, "application/json", b'{"error":{"message":"unknown path"}}')
            return
        entry["answer"] = list(step) if step else None
        self.server.record(entry)
        self.reply(200, content_type, data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--log", required=True, help="file to append each request to")
    parser.add_argument("--result", default="Done as asked.", help="the result done reports")
    parser.add_argument("--question", default="Which way do you want it?", help="what ask asks")
    parser.add_argument("--route", choices=("mcp", "shell"), default="mcp", help="how to call baton")
    parser.add_argument("--baton", default="baton", help="the program the shell route runs")
    parser.add_argument("--idle", type=float, default=600, help="stop after this many idle seconds")
    parser.add_argument("--delegate", help="hand the work to this subagent (Gemini's invoke_agent)")
    parser.add_argument("--delegate-prompt", default="", help="what to ask the subagent")
    parser.add_argument("--delegate-answer", help="what to answer the subagent's question with")
    parser.add_argument("--edit", action="append", default=[], help="a file to write, in order")
    parser.add_argument("--edit-root", default=".", help="the directory the edits are under")
    parser.add_argument("--then-run", help="a shell command to run once the edits are made")
    options = parser.parse_args()
    script = Script(
        options.result,
        options.question,
        options.route,
        options.baton,
        options.delegate,
        options.delegate_prompt,
        options.delegate_answer,
        options.edit,
        options.edit_root,
        options.then_run,
    )
    server = Server(script, options.log)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("PORT {}".format(server.server_address[1]), flush=True)

    stop = threading.Event()

    def watch_stdin():
        # The test holds our stdin: when it ends (the test finished or died), so do we.
        sys.stdin.read()
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    while not stop.wait(1):
        if time.monotonic() - server.last_request > options.idle:
            break
    server.shutdown()
    server.server_close()


if __name__ == "__main__":
    main()
