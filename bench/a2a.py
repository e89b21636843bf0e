#!/usr/bin/env python3
"""A2A on `baton serve` beside `/api/v1` (SPEC section 17): milliseconds, median and p99.

- send: a task handed to `dev`, from the request's start to its answer (the task is on the
  board by then): A2A 1.0 `SendMessage` (returnImmediately), A2A 0.3 `message/send`
  (blocking false), and `POST /api/v1/projects/default/tasks`, in turns over one keep-alive
  connection (each send adds a task: the board grows from 0 to 3 × repeats).
- event: a change on the board (dev claims the task through `/api/v1`) to its event, from
  the claim's start: the `statusUpdate` on an A2A stream of that task (`SubscribeToTask`)
  and the `{kind: "claim"}` change on `/api/v1/events`, both open while it happens.

    python3 bench/a2a.py --binary target/release/baton
    python3 bench/a2a.py --binary target/debug/baton --repeats 50

Nothing here asserts a time: it prints figures for people to read.
"""

import argparse
import http.client
import json
import os
import queue
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


class Hub:
    """A private BATON_HOME with `dev` registered and tokens for lead and dev, served."""

    def __init__(self, binary):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="baton-a2a-bench-")
        self.env = dict(os.environ, BATON_HOME=os.path.join(self.dir, "home"), BATON_NOTIFY="0")
        for name in ("BATON_AGENT", "BATON_URL", "BATON_TOKEN"):
            self.env.pop(name, None)
        self.run("--as", "dev", "agent", "add", "dev", "--strengths", "Rust", "--skills", "rust")
        self.lead = self.run("token", "add", "lead").strip()
        self.dev = self.run("token", "add", "dev").strip()
        self.proc = subprocess.Popen(
            [binary, "--as", "alice", "serve", "--listen", "127.0.0.1:0"], cwd=self.dir,
            env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True)
        url = self.proc.stdout.readline().strip()
        if "/#token=" not in url:
            self.close()
            raise RuntimeError(f"baton serve printed no URL: {url!r}")
        self.host, port = url.split("/#token=")[0].removeprefix("http://").rsplit(":", 1)
        self.port = int(port)

    def run(self, *args):
        return subprocess.run([self.binary, *args], cwd=self.dir, env=self.env, check=True,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL).stdout

    def connection(self):
        return http.client.HTTPConnection(self.host, self.port, timeout=60)

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def headers(token, stream=False):
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
            "Accept": "text/event-stream" if stream else "application/json"}


def post(connection, path, token, body):
    connection.request("POST", path, json.dumps(body), headers(token))
    response = connection.getresponse()
    answer = json.loads(response.read())
    if response.status != 200 or "error" in answer:
        raise RuntimeError(f"POST {path}: {response.status} {answer}")
    return answer


def a2a_send(version, n):
    message = {"messageId": f"m-{n}", "parts": [{"text": f"Task {n}\nA body."}]}
    if version == "1.0":
        message["role"] = "ROLE_USER"
        return {"jsonrpc": "2.0", "id": n, "method": "SendMessage",
                "params": {"message": message, "configuration": {"returnImmediately": True}}}
    message.update(role="user", kind="message")
    for part in message["parts"]:
        part["kind"] = "text"
    return {"jsonrpc": "2.0", "id": n, "method": "message/send",
            "params": {"message": message, "configuration": {"blocking": False}}}


def sends(hub, repeats):
    """Milliseconds per send, by way: (median, p99)."""
    connection = hub.connection()
    ways = {
        "A2A 1.0 SendMessage": lambda n: post(connection, "/a2a/agents/dev", hub.lead,
                                              a2a_send("1.0", n)),
        "A2A 0.3 message/send": lambda n: post(connection, "/a2a/agents/dev", hub.lead,
                                               a2a_send("0.3", n)),
        "/api/v1 POST tasks": lambda n: post(connection, "/api/v1/projects/default/tasks",
                                             hub.lead, {"to": "dev", "subject": f"Task {n}",
                                                        "body": "A body."}),
    }
    times = {way: [] for way in ways}
    try:
        for send in ways.values():
            send(0)  # the first of each pays for nothing the others do not
        # In turns, so that each way meets boards of the same sizes (each send adds a task).
        for n in range(1, repeats + 1):
            for way, send in ways.items():
                started = time.perf_counter()
                send(n)
                times[way].append((time.perf_counter() - started) * 1000)
    finally:
        connection.close()
    return {way: (statistics.median(taken), percentile(taken, 0.99))
            for way, taken in times.items()}


def read_events(response, arrived, label):
    """Puts each `data:` line of an event stream on `arrived` with the time it came."""
    try:
        for raw in response:
            line = raw.decode().strip()
            if line.startswith("data:"):
                arrived.put((time.perf_counter(), label, json.loads(line[5:])))
    except (OSError, ValueError, AttributeError):
        pass


def events(hub, repeats):
    """Milliseconds from a claim's start to its event on each stream: (median, p99)."""
    arrived = queue.Queue()
    feed = hub.connection()
    feed.request("GET", "/api/v1/events", headers=headers(hub.lead, stream=True))
    feed_response = feed.getresponse()
    threading.Thread(target=read_events, args=(feed_response, arrived, "api"), daemon=True).start()
    writer = hub.connection()
    a2a_times, api_times = [], []
    try:
        for n in range(repeats):
            task = post(writer, "/api/v1/projects/default/tasks", hub.lead,
                        {"to": "dev", "subject": f"Event {n}"})["task"]["id"]
            stream = hub.connection()
            stream.request("POST", "/a2a/agents/dev", json.dumps(
                {"jsonrpc": "2.0", "id": n, "method": "SubscribeToTask",
                 "params": {"id": f"default/T-{task}"}}), headers(hub.lead, stream=True))
            response = stream.getresponse()
            threading.Thread(target=read_events, args=(response, arrived, "a2a"),
                             daemon=True).start()
            # The stream is open once its first event (the task as it is) has come.
            while True:
                _, label, event = arrived.get(timeout=30)
                if label == "a2a" and "task" in event.get("result", {}):
                    break
            started = time.perf_counter()
            post(writer, f"/api/v1/projects/default/tasks/{task}/claim", hub.dev, {})
            got = {}
            while len(got) < 2:
                at, label, event = arrived.get(timeout=30)
                if label == "a2a" and "statusUpdate" in event.get("result", {}):
                    got["a2a"] = at
                if label == "api" and event.get("kind") == "claim" and event.get("id") == task:
                    got["api"] = at
            a2a_times.append((got["a2a"] - started) * 1000)
            api_times.append((got["api"] - started) * 1000)
            # Its reader holds the connection's file: the socket is shut under it.
            stream.sock.shutdown(socket.SHUT_RDWR)
            stream.close()
    finally:
        writer.close()
        feed.sock.shutdown(socket.SHUT_RDWR)
        feed.close()
    return {
        "A2A SubscribeToTask statusUpdate": (statistics.median(a2a_times),
                                             percentile(a2a_times, 0.99)),
        "/api/v1/events change": (statistics.median(api_times), percentile(api_times, 0.99)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default="target/release/baton")
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no baton at {args.binary}: build it (cargo build --release) or pass --binary")
    hub = Hub(os.path.abspath(args.binary))
    try:
        send_figures = sends(hub, args.repeats)
        event_figures = events(hub, max(20, args.repeats // 4))
    finally:
        hub.close()
    print(f"{'ms, median and p99':<40} {'median':>8} {'p99':>8}")
    print(f"send: a task for dev, request to answer ({args.repeats} each)")
    for way, (median, p99) in send_figures.items():
        print(f"  {way:<38} {median:8.2f} {p99:8.2f}")
    print(f"event: dev's claim (POST /api/v1) to its event ({max(20, args.repeats // 4)} claims)")
    for way, (median, p99) in event_figures.items():
        print(f"  {way:<38} {median:8.2f} {p99:8.2f}")


if __name__ == "__main__":
    main()
