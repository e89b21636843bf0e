#!/usr/bin/env python3
"""Whole-process benchmarks for baton: latency, throughput, MCP calls (stdio and HTTP), the
delay of a change's event on `baton serve` and of `baton wait`, idle CPU, and peak memory.

    python3 bench/bench.py            # builds baton as install.sh does, prints the table
    python3 bench/bench.py --quick    # fewer repetitions, for a smoke run
    python3 bench/bench.py --binary target/release/baton
    python3 bench/bench.py --instructions   # adds instruction counts (valgrind)

Each figure is the median of several runs of the real binary against a private
BATON_HOME with boards generated to size. Peak memory is each process's max RSS (from
wait4). Nothing here asserts a time: it prints figures for people to read.
"""

import argparse
import http.client
import json
import queue
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HAS_TIME = os.access("/usr/bin/time", os.X_OK)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stamp(seconds_ago=0):
    t = time.gmtime(time.time() - seconds_ago)
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", t)


def task(n, status="pending", to="dev", finished_ago=0):
    return {
        "id": n,
        "subject": f"Task number {n}: make the widget frobnicate correctly",
        "body": "A body of ordinary length that says what is wanted and why it matters.",
        "files": ["src/widget.rs"],
        "from": "lead",
        "to": to,
        "reviewer": None,
        "status": status,
        "priority": "normal",
        "after": [],
        "skill": None,
        "review": False,
        "created_at": stamp(3600 + finished_ago),
        "updated_at": stamp(finished_ago),
        "claimed_at": None,
        "lease_expires_at": None,
        "result": "done" if status == "completed" else None,
        "thread": [],
    }


class Hub:
    """A private BATON_HOME holding one generated board."""

    def __init__(self, binary, open_tasks, finished_history=0):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="baton-bench-")
        self.home = os.path.join(self.dir, "home")
        self.work = os.path.join(self.dir, "work")
        os.makedirs(self.work)
        self.env = dict(os.environ, BATON_HOME=self.home, BATON_NOTIFY="0")
        self.env.pop("BATON_AGENT", None)
        for agent in ("lead", "dev"):
            self.run(["--as", agent, "whoami"])
        project = os.path.join(self.home, "projects", "default")
        tasks = [task(n) for n in range(1, open_tasks + 1)]
        next_id = open_tasks + 1
        if finished_history:
            # History: all but the newest 200 finished tasks live in the archive.
            archived = finished_history - 200
            archive_dir = os.path.join(project, "archive")
            os.makedirs(archive_dir, exist_ok=True)
            with open(os.path.join(archive_dir, "2026-01.jsonl"), "w") as out:
                for n in range(next_id, next_id + archived):
                    out.write(json.dumps(task(n, "completed", finished_ago=86400)) + "\n")
            next_id += archived
            tasks += [task(n, "completed", finished_ago=60) for n in range(next_id, next_id + 200)]
            next_id += 200
        board = {"schema": 1, "project": "default", "next_id": next_id, "tasks": tasks}
        with open(os.path.join(project, "board.json"), "w") as out:
            json.dump(board, out, indent=2)
        self.next_pending = 1

    def run(self, args):
        """Runs baton for setup or load; returns its stdout."""
        proc = subprocess.run([self.binary] + args, cwd=self.work, env=self.env,
                              stdin=subprocess.DEVNULL, capture_output=True)
        if proc.returncode != 0:
            raise RuntimeError(f"baton {' '.join(args)} failed: {proc.stderr.decode()}")
        return proc.stdout

    def measure(self, args):
        """Runs baton once in the hub's workspace; returns wall milliseconds."""
        os.chdir(self.work)
        started = time.perf_counter()
        pid = os.posix_spawn(self.binary, [self.binary] + args, self.env,
                             file_actions=[(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                                           (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
                                           (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0)])
        _, status, _ = os.wait4(pid, 0)
        elapsed = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"baton {' '.join(args)} exited {os.waitstatus_to_exitcode(status)}")
        return elapsed * 1000

    def peak_memory(self, args):
        """Peak RSS in MiB of one run, from GNU time. (wait4 on a child spawned from Python
        would report Python's own RSS: the kernel keeps the larger of the pre-exec and
        post-exec peaks, and a spawned child starts as a view of this process.)"""
        report = os.path.join(self.dir, "time.out")
        proc = subprocess.run(["/usr/bin/time", "-o", report, "-f", "%M", self.binary] + args,
                              cwd=self.work, env=self.env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise RuntimeError(f"baton {' '.join(args)} exited {proc.returncode}")
        with open(report) as text:
            return int(text.read().split()[-1]) / 1024

    def instructions(self, args):
        """Millions of instructions one run executes, counted by callgrind: unlike seconds,
        the count repeats exactly whatever else the machine is doing."""
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                               self.binary] + args, cwd=self.work, env=self.env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        for line in proc.stderr.splitlines():
            if "refs:" in line:
                return int(line.split("refs:")[1].replace(",", "").strip()) / 1e6
        raise RuntimeError(f"callgrind gave no count for baton {' '.join(args)}")

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def has_command(binary, *words):
    probe = subprocess.run([binary, *words, "--help"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    return probe.returncode == 0


def command_args(hub, command, i, claimed):
    """The argument list for one run of `command` against `hub`."""
    if command == "send":
        return ["--as", "lead", "send", "--to", "dev", "--subject", f"bench {i}"]
    if command == "claim":
        claimed.append(hub.next_pending)
        hub.next_pending += 1
        return ["--as", "dev", "claim", str(claimed[-1])]
    if command == "done":
        return ["--as", "dev", "done", str(claimed.pop(0)), "--result", "ok"]
    if command == "inbox":
        return ["--as", "dev", "inbox", "--peek"]
    if command == "status":
        return ["--as", "dev", "status"]
    return ["--as", "dev", "hook", "prompt", "--client", "claude"]


def latency_rows(binary, repeats, count_instructions):
    scales = [("10 open", 10, 0), ("1,000 open", 1000, 0), ("10,000 open", 10000, 0),
              ("1,000 open + 50,000 finished", 1000, 50000)]
    commands = ["send", "claim", "done", "inbox", "status"]
    hook = has_command(binary, "hook")
    if hook:
        commands.append("hook prompt")
    rows = []
    for label, open_tasks, history in scales:
        hub = Hub(binary, open_tasks, history)
        figures = {}
        counts = {}
        claimed = []
        for command in commands:
            times = []
            peak = 0.0
            for i in range(repeats + 1):
                args = command_args(hub, command, i, claimed)
                if i == repeats:
                    peak = hub.peak_memory(args) if HAS_TIME else float("nan")
                else:
                    times.append(hub.measure(args))
            if count_instructions:
                counts[command] = hub.instructions(command_args(hub, command, repeats + 1, claimed))
            figures[command] = (statistics.median(times), peak)
        rows.append((label, figures, counts))
        hub.close()
    return commands, rows


class Bare:
    """A directory to run a stand-in for baton in, to measure the harness alone."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="baton-bench-")
        self.work = self.dir
        self.env = dict(os.environ)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def throughput(binary, writers, per_writer, hub=None):
    """Changes a second from `writers` threads each running `per_writer` sends in turn.
    Each send is spawned straight, output to /dev/null, so the harness spends as little of
    the two cores as it can (spawning /bin/true the same way shows its own ceiling)."""
    hub = hub or Hub(binary, 100)
    errors = []

    def writer(index):
        log = os.path.join(hub.dir, f"writer-{index}.err")
        for n in range(per_writer):
            args = [binary, "--as", "lead", "send", "--to", "dev", "--subject", f"w{index}-{n}"]
            pid = os.posix_spawn(binary, args, hub.env,
                                 file_actions=[(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                                               (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
                                               (os.POSIX_SPAWN_OPEN, 2, log,
                                                os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)])
            _, status, _ = os.wait4(pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                with open(log) as text:
                    errors.append(f"send exited {os.waitstatus_to_exitcode(status)}: {text.read()}")

    os.chdir(hub.work)
    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    hub.close()
    if errors:
        raise RuntimeError(errors[0])
    return writers * per_writer / elapsed


def mcp_latency(binary, calls):
    if not has_command(binary, "mcp"):
        return None
    hub = Hub(binary, 1000)
    proc = subprocess.Popen([binary, "--as", "dev", "mcp"], cwd=hub.work, env=hub.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def rpc(message):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        if "id" not in message:
            return None
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("baton mcp closed its output")
            reply = json.loads(line)
            if reply.get("id") == message["id"]:
                return reply

    rpc({"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"}}})
    rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})
    figures = {}
    for tool, arguments in (("show", {"id": 1}), ("inbox", {"peek": True}), ("board", {})):
        times = []
        for i in range(calls):
            started = time.perf_counter()
            reply = rpc({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                         "params": {"name": tool, "arguments": arguments}})
            times.append((time.perf_counter() - started) * 1000)
            if "error" in reply:
                raise RuntimeError(f"tools/call {tool}: {reply['error']}")
        figures[tool] = statistics.median(times)
    proc.stdin.close()
    proc.wait(timeout=10)
    hub.close()
    return figures


def percentile(values, fraction):
    """The value below which `fraction` of `values` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


class Served:
    """`baton --as AGENT serve --listen 127.0.0.1:0` on a hub (dev unless told), and the login
    token it printed (which acts as that agent). `hub` has the binary, a workspace and an
    environment: bench.py's Hub, or another script's home."""

    def __init__(self, hub, agent="dev", args=()):
        self.proc = subprocess.Popen([hub.binary, "--as", agent, "serve", "--listen", "127.0.0.1:0",
                                      *args],
                                     cwd=hub.work, env=hub.env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        url = self.proc.stdout.readline().strip()
        if "/#token=" not in url:
            self.proc.kill()
            raise RuntimeError(f"baton serve printed no login URL: {url!r}")
        base, self.token = url.split("/#token=")
        self.host, port = base.removeprefix("http://").rsplit(":", 1)
        self.port = int(port)

    def connection(self):
        return http.client.HTTPConnection(self.host, self.port, timeout=60)

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def mcp_reply(response, request_id):
    """The JSON-RPC answer to `request_id` in a `/mcp` response, JSON or a short SSE stream."""
    body = response.read().decode()
    if response.status != 200:
        raise RuntimeError(f"/mcp answered {response.status}: {body[:200]}")
    if not response.getheader("Content-Type", "").startswith("text/event-stream"):
        return json.loads(body)
    for line in body.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if message.get("id") == request_id:
                return message
    raise RuntimeError(f"/mcp gave no answer to request {request_id}: {body[:200]}")


def mcp_http_latency(binary, calls):
    """Milliseconds per `tools/call` on one `/mcp` session of `baton serve` over one
    keep-alive connection (1,000 open tasks): median and p99 for `inbox` and `board`."""
    if not has_command(binary, "serve"):
        return None
    hub = Hub(binary, 1000)
    served = Served(hub)
    connection = served.connection()
    headers = {"Authorization": f"Bearer {served.token}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}

    def post(message):
        connection.request("POST", "/mcp", json.dumps(message), headers)
        response = connection.getresponse()
        if "id" not in message:
            response.read()
            return response, None
        return response, mcp_reply(response, message["id"])

    try:
        response, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "bench", "version": "1"}}})
        session = response.getheader("Mcp-Session-Id")
        if session:
            headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = "2025-11-25"
        post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        figures = {}
        for tool, arguments in (("inbox", {"peek": True}), ("board", {})):
            times = []
            for i in range(calls):
                started = time.perf_counter()
                _, reply = post({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                                 "params": {"name": tool, "arguments": arguments}})
                times.append((time.perf_counter() - started) * 1000)
                if "error" in reply or reply["result"].get("isError"):
                    raise RuntimeError(f"tools/call {tool}: {reply}")
            figures[tool] = (statistics.median(times), percentile(times, 0.99))
    finally:
        connection.close()
        served.close()
        hub.close()
    return figures


def event_delay(binary, sends):
    """Milliseconds from a `baton send` starting, and from it exiting, to its event arriving
    on a connected `/api/v1/events` stream: (median, p99) of each over `sends` sends. The
    change is on disk before the send exits (after-effects follow it), so an event may come
    before the exit: a delay below 0."""
    if not has_command(binary, "serve"):
        return None
    hub = Hub(binary, 100)
    served = Served(hub)
    connection = served.connection()
    connection.request("GET", "/api/v1/events", headers={
        "Authorization": f"Bearer {served.token}", "Accept": "text/event-stream"})
    stream = connection.getresponse()
    if stream.status != 200:
        raise RuntimeError(f"/api/v1/events answered {stream.status}")
    arrived = queue.Queue()

    def read():
        try:
            for raw in stream:
                line = raw.decode().strip()
                if line.startswith("data:"):
                    arrived.put((time.perf_counter(), json.loads(line[5:])))
        except (OSError, ValueError, AttributeError):
            # The stream closed under the reader (the run is over): nothing more to read.
            pass

    threading.Thread(target=read, daemon=True).start()
    from_start, from_exit = [], []
    try:
        for i in range(sends):
            started = time.perf_counter()
            out = hub.run(["--as", "lead", "--json", "send", "--to", "dev", "--subject", f"event {i}"])
            sent_at = time.perf_counter()
            task = json.loads(out)["task"]["id"]
            while True:
                at, change = arrived.get(timeout=30)
                if change.get("kind") == "send" and change.get("id") == task:
                    from_start.append((at - started) * 1000)
                    from_exit.append((at - sent_at) * 1000)
                    break
    finally:
        connection.close()
        served.close()
        hub.close()
    return ((statistics.median(from_start), percentile(from_start, 0.99)),
            (statistics.median(from_exit), percentile(from_exit, 0.99)))


def swarm(binary, agents, per_agent, open_tasks=1000):
    """`agents` agents, registered, each with its own token (used once before) and keep-alive
    connection to `baton serve`, claiming and finishing `per_agent` tasks each through the
    JSON API at once, on a board of `open_tasks` other open tasks. Returns changes a second, median and p99 milliseconds
    per change; raises if any change was refused or lost."""
    if not has_command(binary, "serve"):
        return None
    hub = Hub(binary, open_tasks)
    names = [f"swarm{i}" for i in range(agents)]
    tokens = {name: hub.run(["token", "add", name]).decode().strip() for name in names}
    # Agents at work all day: registered, and their tokens' last use recorded (a first
    # sighting is written durably, once; the bench measures the day, not its first minute).
    for name in names:
        hub.run(["--as", name, "whoami"])
    board_path = os.path.join(hub.home, "projects", "default", "board.json")
    with open(board_path) as text:
        board = json.load(text)
    mine = {}
    for name in names:
        ids = list(range(board["next_id"], board["next_id"] + per_agent))
        board["tasks"] += [task(n, to=name) for n in ids]
        board["next_id"] += per_agent
        mine[name] = ids
    with open(board_path, "w") as out:
        json.dump(board, out, indent=2)
    served = Served(hub)
    times, errors = [], []
    lock = threading.Lock()
    start = threading.Barrier(agents + 1)

    def agent(name):
        connection = served.connection()
        headers = {"Authorization": f"Bearer {tokens[name]}", "Content-Type": "application/json"}
        mine_times = []
        connection.request("GET", "/api/v1/whoami", headers=headers)
        connection.getresponse().read()
        start.wait()
        try:
            for n in mine[name]:
                for action, body in (("claim", "{}"), ("done", '{"text": "ok"}')):
                    began = time.perf_counter()
                    connection.request("POST", f"/api/v1/projects/default/tasks/{n}/{action}",
                                       body, headers)
                    response = connection.getresponse()
                    answer = response.read()
                    mine_times.append((time.perf_counter() - began) * 1000)
                    if response.status != 200:
                        raise RuntimeError(f"{action} T-{n} as {name}: {response.status} {answer[:200]}")
        except Exception as error:  # noqa: BLE001 - reported after the run
            with lock:
                errors.append(str(error))
        finally:
            connection.close()
        with lock:
            times.extend(mine_times)

    threads = [threading.Thread(target=agent, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    served.close()
    try:
        if errors:
            raise RuntimeError(errors[0])
        # Finished tasks beyond the newest 200 move to the archive: the log tells them all.
        logged = {}
        with open(os.path.join(hub.home, "projects", "default", "activity.jsonl")) as log:
            for line in log:
                record = json.loads(line)
                logged.setdefault(record.get("task"), []).append(record["action"])
        lost = [n for ids in mine.values() for n in ids if logged.get(n) != ["claim", "done"]]
        if lost:
            raise RuntimeError(f"{len(lost)} swarm tasks were not claimed and done once each, "
                               f"e.g. T-{lost[0]}: {logged.get(lost[0])}")
    finally:
        hub.close()
    return len(times) / elapsed, statistics.median(times), percentile(times, 0.99)


def board_read(binary, repeats):
    """Median milliseconds of the open board as JSON: `baton board --json` (a process) and
    GET /api/v1/projects/default/board on a running `baton serve` over one keep-alive
    connection (the first read, which parses the board, and the median of the rest, which
    find it kept), at 1,000 and 10,000 open tasks; and `baton --version`, a process start."""
    if not has_command(binary, "serve"):
        return None
    figures = {}
    for size in (1000, 10000):
        hub = Hub(binary, size)
        start = statistics.median(hub.measure(["--version"]) for _ in range(repeats))
        cli = statistics.median(hub.measure(["--as", "dev", "--json", "board"]) for _ in range(repeats))
        served = Served(hub)
        connection = served.connection()
        headers = {"Authorization": f"Bearer {served.token}"}
        times = []
        try:
            for _ in range(repeats + 1):
                began = time.perf_counter()
                connection.request("GET", "/api/v1/projects/default/board", headers=headers)
                response = connection.getresponse()
                response.read()
                times.append((time.perf_counter() - began) * 1000)
                if response.status != 200:
                    raise RuntimeError(f"board over HTTP: {response.status}")
        finally:
            connection.close()
            served.close()
            hub.close()
        # The first read parses the board; the rest find it kept.
        figures[size] = (start, cli, times[0], statistics.median(times[1:]))
    return figures


def change_breakdown(binary, repeats):
    """Where the time of a change (`send`) goes at 1,000 and 10,000 open tasks, median ms:
    the process start (`--version`), reading the board (`status` less the start), the
    fsyncs (their time inside one `send`, from `strace -T`), and the rest of the write
    (building and writing the new board, the log line, the rename). None without strace."""
    if shutil.which("strace") is None:
        return None
    figures = {}
    for size in (1000, 10000):
        hub = Hub(binary, size)
        try:
            start = statistics.median(hub.measure(["--version"]) for _ in range(repeats))
            status = statistics.median(hub.measure(["--as", "dev", "status"]) for _ in range(repeats))
            send = statistics.median(
                hub.measure(["--as", "lead", "send", "--to", "dev", "--subject", "timed"])
                for _ in range(repeats))
            synced = []
            for _ in range(5):
                trace = os.path.join(hub.dir, "strace.out")
                subprocess.run(["strace", "-f", "-T", "-e", "trace=fsync,fdatasync", "-o", trace,
                                binary, "--as", "lead", "send", "--to", "dev", "--subject", "traced"],
                               cwd=hub.work, env=hub.env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                with open(trace) as text:
                    synced.append(sum(float(line.rsplit("<", 1)[1].rstrip(">\n")) * 1000
                                      for line in text if "sync(" in line and "<" in line))
            fsync = statistics.median(synced)
        finally:
            hub.close()
        figures[size] = (send, start, status - start, fsync, send - status - fsync)
    return figures


def measure_with(hub, args, env):
    """As Hub.measure, with another environment (a remote agent's machine)."""
    saved = hub.env
    hub.env = env
    try:
        return hub.measure(args)
    finally:
        hub.env = saved


def remote_latency(binary, repeats):
    """Median milliseconds of `status`, `send` and `hook prompt` on the hub's own machine
    (its files) and from another machine's home through `BATON_URL` (`baton serve` on
    loopback), 1,000 open tasks."""
    if not has_command(binary, "listen"):
        return None
    hub = Hub(binary, 1000)
    served = Served(hub)
    tokens = {agent: hub.run(["token", "add", agent]).decode().strip() for agent in ("lead", "dev")}
    elsewhere = os.path.join(hub.dir, "agent-home")
    remote = {agent: dict(hub.env, BATON_HOME=elsewhere, BATON_URL=f"http://{served.host}:{served.port}",
                          BATON_TOKEN=tokens[agent]) for agent in tokens}
    runs = {
        "status": (["--as", "dev", "status"], ["status"], "dev"),
        "send": (["--as", "lead", "send", "--to", "dev", "--subject", "bench"],
                 ["send", "--to", "dev", "--subject", "bench"], "lead"),
        "hook prompt": (["--as", "dev", "hook", "prompt", "--client", "claude"],
                        ["hook", "prompt", "--client", "claude"], "dev"),
    }
    figures = {}
    try:
        for name, (local_args, remote_args, agent) in runs.items():
            local = statistics.median(hub.measure(local_args) for _ in range(repeats))
            over = statistics.median(measure_with(hub, remote_args, remote[agent])
                                     for _ in range(repeats))
            figures[name] = (local, over)
    finally:
        served.close()
        hub.close()
    return figures


def wake_delay(binary, sends):
    """Milliseconds from a hand-over on the hub (`baton send` exits) to the wake command
    starting on a machine that runs `baton listen` against it: median and p99."""
    if not has_command(binary, "listen"):
        return None
    hub = Hub(binary, 100)
    served = Served(hub)
    token = hub.run(["token", "add", "dev"]).decode().strip()
    stamps = os.path.join(hub.dir, "woken.txt")
    script = os.path.join(hub.dir, "wake.sh")
    with open(script, "w") as out:
        out.write(f"#!/bin/sh\ndate +%s.%N >> '{stamps}'\n")
    os.chmod(script, 0o755)
    env = dict(hub.env, BATON_HOME=os.path.join(hub.dir, "agent-home"),
               BATON_URL=f"http://{served.host}:{served.port}", BATON_TOKEN=token)
    listen = subprocess.Popen([binary, "listen", "--wake", "--", script], cwd=hub.work, env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    delays = []
    try:
        time.sleep(1)
        for i in range(sends):
            seen = len(open(stamps).read().split()) if os.path.exists(stamps) else 0
            hub.run(["--as", "lead", "send", "--to", "dev", "--subject", f"wake {i}"])
            sent_at = time.time()
            deadline = time.time() + 30
            while time.time() < deadline:
                lines = open(stamps).read().split() if os.path.exists(stamps) else []
                if len(lines) > seen:
                    delays.append((float(lines[seen]) - sent_at) * 1000)
                    break
                time.sleep(0.005)
            else:
                raise RuntimeError("listen never started the wake command")
            # Apart from the next send by more than a burst.
            time.sleep(0.5)
    finally:
        listen.kill()
        listen.wait()
        served.close()
        hub.close()
    return statistics.median(delays), percentile(delays, 0.99)


def wait_delay(binary, sends, env=None):
    """Milliseconds from the start of a `baton send` to the return of the `baton wait` it
    hands work to (each send to an agent of its own with an empty inbox, its `wait` started
    half a second before): median and p99 over `sends` sends. `env` adds variables (such as
    BATON_FILE_EVENTS=poll) to the `wait`s' environment."""
    hub = Hub(binary, 100)
    wait_env = dict(hub.env, **(env or {}))
    delays = []
    try:
        for i in range(sends):
            agent = f"waiter{i}"
            hub.run(["--as", agent, "whoami"])
            waiter = subprocess.Popen([binary, "--as", agent, "wait", "--timeout", "30"],
                                      cwd=hub.work, env=wait_env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            returned = []
            watcher = threading.Thread(target=lambda: returned.append((waiter.wait(), time.perf_counter())))
            watcher.start()
            time.sleep(0.5)
            started = time.perf_counter()
            hub.run(["--as", "lead", "send", "--to", agent, "--subject", f"wait {i}"])
            watcher.join(timeout=60)
            if not returned or returned[0][0] != 0:
                waiter.kill()
                raise RuntimeError(f"baton wait did not return 0 after a send: {returned}")
            delays.append((returned[0][1] - started) * 1000)
    finally:
        hub.close()
    return statistics.median(delays), percentile(delays, 0.99)


def cpu_ms(pid):
    """CPU milliseconds the threads of process `pid` now running have used so far (Linux
    /proc schedstat, in nanoseconds: clock ticks would round an idle process to 0)."""
    total = 0
    for thread in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{thread}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except (OSError, ValueError, IndexError):
            # The thread ended between the listing and the read.
            pass
    return total / 1e6


def idle_cpu(binary, seconds, env=None):
    """CPU milliseconds an idle `baton wait` and an idle `baton serve` (no change anywhere)
    spend over `seconds`, after a second to settle; None where /proc is not there."""
    if not os.path.exists("/proc/self/task"):
        return None
    hub = Hub(binary, 100)
    hub.env = dict(hub.env, **(env or {}))
    hub.run(["--as", "idle", "whoami"])
    waiter = subprocess.Popen([binary, "--as", "idle", "wait"], cwd=hub.work, env=hub.env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    served = Served(hub) if has_command(binary, "serve") else None
    try:
        time.sleep(1)
        before = {"wait": cpu_ms(waiter.pid)}
        if served:
            before["serve"] = cpu_ms(served.proc.pid)
        time.sleep(seconds)
        spent = {"wait": cpu_ms(waiter.pid) - before["wait"]}
        if served:
            spent["serve"] = cpu_ms(served.proc.pid) - before["serve"]
    finally:
        waiter.kill()
        waiter.wait()
        if served:
            served.close()
        hub.close()
    return spent


# The two ways a waiter learns of a change, as the bench names them and sets them.
SOURCES = (("kernel file events", None), ("BATON_FILE_EVENTS=poll", {"BATON_FILE_EVENTS": "poll"}))


def table(title, columns, rows):
    """Prints `rows` (each a list of cells, already formatted) as a Markdown table with
    `columns` for its header, under `title`."""
    print(title)
    print()
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def delay_table(title, median, p99):
    """Prints one delay's median and p99 as a table under `title`."""
    table(title, ["median ms", "p99 ms"], [[f"{median:.1f}", f"{p99:.1f}"]])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", help="a built baton (default: build it as install.sh does)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each command's instructions with callgrind")
    options = parser.parse_args()
    binary = options.binary
    if not binary:
        # The binary install.sh installs (install/build.sh says how it is built).
        binary = subprocess.check_output(["bash", os.path.join(ROOT, "install", "build.sh")],
                                         cwd=ROOT, text=True).strip()
    binary = os.path.abspath(binary)
    repeats = 5 if options.quick else 15

    print(f"baton benchmarks: {subprocess.check_output([binary, '--version'], text=True).strip()}, "
          f"{os.cpu_count()} cores, median of {repeats} runs")
    print()
    count_instructions = options.instructions and shutil.which("valgrind") is not None
    commands, rows = latency_rows(binary, repeats, count_instructions)
    header = "| board | " + " | ".join(commands) + " |"
    print("Latency per command, median ms (peak RSS MiB)")
    print()
    print(header)
    print("|" + "---|" * (len(commands) + 1))
    peak_overall = 0.0
    for label, figures, _ in rows:
        cells = []
        for command in commands:
            ms, peak = figures[command]
            peak_overall = max(peak_overall, peak)
            cells.append(f"{ms:.2f} ({peak:.1f})")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    if count_instructions:
        print("Instructions per command, millions (callgrind; repeatable on any load)")
        print()
        print(header)
        print("|" + "---|" * (len(commands) + 1))
        for label, _, counts in rows:
            print(f"| {label} | " + " | ".join(f"{counts[c]:.1f}" for c in commands) + " |")
        print()
    per_writer = 20 if options.quick else 50
    table("Throughput, `send` from N processes at once onto one board (100 open tasks)",
          ["writers", "changes/s", "the harness alone, spawning /bin/true, per s"],
          [[str(writers), f"{throughput(binary, writers, per_writer):.0f}",
            f"{throughput('/bin/true', writers, per_writer, Bare()):.0f}"]
           for writers in (1, 4, 16)])
    print()
    mcp = mcp_latency(binary, 20 if options.quick else 100)
    if mcp is None:
        print("MCP: this binary has no `mcp` command")
    else:
        table("MCP tool call on a running `baton mcp`, 1,000 open tasks, median ms",
              ["tool", "ms"], [[tool, f"{ms:.2f}"] for tool, ms in mcp.items()])
    print()
    calls = 20 if options.quick else 200
    over_http = mcp_http_latency(binary, calls)
    if over_http is None:
        print("MCP over HTTP: this binary has no `serve` command")
    else:
        table(f"MCP tool call over HTTP (`baton serve`, one /mcp session on one keep-alive "
              f"connection), 1,000 open tasks, {calls} calls", ["tool", "median ms", "p99 ms"],
              [[tool, f"{median:.2f}", f"{p99:.2f}"] for tool, (median, p99) in over_http.items()])
        print()
        per_agent = 2 if options.quick else 5
        table(f"A swarm through `baton serve`: N agents, each with its own token and connection, "
              f"claiming and finishing {per_agent} tasks each through the JSON API at once, "
              f"1,000 other open tasks", ["agents", "changes/s", "median ms", "p99 ms"],
              [[str(agents), f"{rate:.0f}", f"{median:.1f}", f"{p99:.1f}"]
               for agents in (50, 100)
               for rate, median, p99 in [swarm(binary, agents, per_agent)]])
        print()
        table("The open board as JSON: a `baton board --json` process against GET "
              "/api/v1/projects/default/board on `baton serve` (its first read, then the "
              f"median of {repeats} more), with `baton --version` as a process start, median ms",
              ["open tasks", "process start", "CLI", "HTTP, first", "HTTP, kept"],
              [[f"{size:,}"] + [f"{figure:.2f}" for figure in figures]
               for size, figures in board_read(binary, repeats).items()])
        print()
        sends = 10 if options.quick else 100
        from_start, from_exit = event_delay(binary, sends)
        delay_table(f"From a CLI change (`baton send` starts) to its event on a connected "
                    f"/api/v1/events stream, {sends} sends", *from_start)
        print()
        delay_table(f"The same from `baton send` exiting (below 0: the event came before the "
                    f"exit)", *from_exit)
    print()
    remote = remote_latency(binary, repeats)
    if remote is not None:
        table("A command on the hub's machine against the same command from another machine's "
              "home through BATON_URL (`baton serve` on loopback), 1,000 open tasks, median ms",
              ["command", "local", "remote", "remote / local"],
              [[name, f"{local:.2f}", f"{over:.2f}", f"{over / local:.2f}"]
               for name, (local, over) in remote.items()])
        print()
        sends = 5 if options.quick else 30
        delay_table(f"From a hand-over on the hub (`baton send` exits) to the wake command "
                    f"starting under `baton listen` on another machine's home, {sends} hand-overs",
                    *wake_delay(binary, sends))
        print()
    sends = 5 if options.quick else 30
    for label, env in SOURCES:
        delay_table(f"From the start of a `baton send` to the return of the `baton wait` it hands "
                    f"work to ({label}), {sends} sends", *wait_delay(binary, sends, env))
        print()
    seconds = 2 if options.quick else 5
    idle = {label: idle_cpu(binary, seconds, env) for label, env in SOURCES}
    if all(idle.values()):
        table(f"CPU ms spent by an idle `baton wait` and an idle `baton serve` over {seconds} s "
              f"with nothing changing", ["", "wait", "serve"],
              [[label, f"{spent['wait']:.0f}", f"{spent.get('serve', float('nan')):.0f}"]
               for label, spent in idle.items()])
        print()
    breakdown = change_breakdown(binary, repeats)
    if breakdown is not None:
        table("Where the time of a change goes (`send`), median ms: the process start "
              "(`--version`), reading (`status` less the start), the fsyncs (`strace -T`), "
              "and the rest of the write",
              ["open tasks", "send", "process start", "reading", "fsyncs", "the rest of the write"],
              [[f"{size:,}"] + [f"{figure:.2f}" for figure in figures]
               for size, figures in breakdown.items()])
        print()
    print(f"Peak RSS over every command measured: {peak_overall:.1f} MiB")


if __name__ == "__main__":
    sys.exit(main())
