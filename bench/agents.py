"""The swarm's agents as one cheap client: every agent has its own kept HTTP/1.1 connection,
and one thread drives them all through a selector, writing each request from bytes made
once and reading each answer by its Content-Length.

Why not `http.client` with a thread an agent: on the 2-core machine the benchmarks run on,
that client spent about 0.23 ms of CPU per change (a quarter of the whole change's cost),
most of it in thread switches and header parsing. Every microsecond the client spends is
taken from the hubs and PostgreSQL it measures; this one spends a fraction of it.
"""

import json
import selectors
import socket
import time


class Refused(RuntimeError):
    """An answer other than 200, or one this client cannot read."""


class Agent:
    """One agent: its connection, where it is in its rounds, and its changes' latencies."""

    def __init__(self, host, port, token, name, rounds):
        self.socket = socket.create_connection((host, port), timeout=60)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.host = f"{host}:{port}".encode()
        self.authorization = f"Bearer {token}".encode()
        self.name = name
        self.rounds = rounds
        self.round = 0
        self.step = 0
        self.task = None
        self.buffer = b""
        self.began = 0.0
        self.latencies = []

    def again(self, rounds):
        """Ready for `rounds` more rounds on the same connection, latencies counted anew."""
        self.rounds, self.round, self.latencies = rounds, 0, []

    def request(self, path, body):
        payload = json.dumps(body).encode()
        head = (b"POST " + path.encode() + b" HTTP/1.1\r\nHost: " + self.host
                + b"\r\nAuthorization: " + self.authorization
                + b"\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(payload)).encode() + b"\r\n\r\n")
        self.began = time.perf_counter()
        self.socket.sendall(head + payload)

    def next(self, tasks):
        """Sends this agent's next change; False when its rounds are done."""
        if self.round == self.rounds:
            return False
        if self.step == 0:
            self.request(tasks, {"to": self.name, "subject": f"round {self.round}"})
        elif self.step == 1:
            self.request(f"{tasks}/{self.task}/claim", {})
        else:
            self.request(f"{tasks}/{self.task}/done", {"text": "done"})
        return True

    def answer(self):
        """The whole answer's body once it has all come, else None (more to read)."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = self.buffer[:end].decode("latin-1").split("\r\n")
        status = head[0].split(" ", 2)
        length = None
        for line in head[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if length is None:
            raise Refused(f"{self.name}: an answer without Content-Length: {head[0]}")
        if len(self.buffer) < end + 4 + length:
            return None
        body = self.buffer[end + 4:end + 4 + length]
        self.buffer = self.buffer[end + 4 + length:]
        if len(status) < 2 or status[1] != "200":
            raise Refused(f"{self.name}: {head[0]} {body[:200]!r}")
        return body

    def took(self, body):
        """Records the answered change and moves on to the next step."""
        self.latencies.append((time.perf_counter() - self.began) * 1000)
        if self.step == 0:
            self.task = json.loads(body)["task"]["id"]
        self.step = (self.step + 1) % 3
        if self.step == 0:
            self.round += 1


def run(agents, tasks):
    """Drives `agents` until each has done its rounds; raises on the first refusal."""
    selector = selectors.DefaultSelector()
    for agent in agents:
        selector.register(agent.socket, selectors.EVENT_READ, agent)
        agent.next(tasks)
    busy = len(agents)
    while busy:
        ready = selector.select(timeout=60)
        if not ready:
            raise Refused(f"no answer in 60 s ({busy} agents waiting)")
        for key, _ in ready:
            agent = key.data
            chunk = agent.socket.recv(65536)
            if not chunk:
                raise Refused(f"{agent.name}: the connection was closed")
            agent.buffer += chunk
            while (body := agent.answer()) is not None:
                agent.took(body)
                if not agent.next(tasks):
                    selector.unregister(agent.socket)
                    busy -= 1
