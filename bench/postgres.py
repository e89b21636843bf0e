#!/usr/bin/env python3
"""The store on PostgreSQL beside the files (SPEC section 16): a swarm through two hubs on one
database, the delay of a change on hub A to its event on hub B, the CLI with BATON_STORE, and
a board read over HTTP.

    python3 bench/postgres.py --binary target/release/baton            # a throwaway cluster
    python3 bench/postgres.py --binary target/release/baton --store postgres://u@h/db
    python3 bench/postgres.py --binary target/release/baton --quick
    python3 bench/postgres.py --binary target/release/baton --against old/baton   # before/after

Without --store it starts a cluster of its own with tests/postgres/cluster.sh (run as root:
the server runs as the `postgres` user) and stops it at the end. The password, if the URL
holds one, is never printed. Each figure is a median (or a rate over the whole run); nothing
is asserted: the figures are printed for people to read. The machine's other load shows in
them, so compare the columns of one run rather than runs of different days.
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Served  # noqa: E402
from board_read import BODY  # noqa: E402
import agents as agents_client  # noqa: E402


def shown(url):
    """The URL without its password, as baton itself names a store."""
    if "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    authority, _, path = rest.partition("/")
    if "@" in authority:
        user, _, hosts = authority.rpartition("@")
        authority = f"{user.split(':')[0]}@{hosts}"
    return f"{scheme}://{authority}/{path.split('?')[0]}"


class Cluster:
    """A throwaway PostgreSQL cluster (tests/postgres/cluster.sh), or one given by URL."""

    def __init__(self, url=None):
        self.dir = None
        if url:
            self.url = url
            return
        self.dir = tempfile.mkdtemp(prefix="baton-bench-pg-")
        os.chmod(self.dir, 0o755)
        out = subprocess.run(["bash", os.path.join(ROOT, "tests/postgres/cluster.sh"), "start",
                              os.path.join(self.dir, "cluster")],
                             capture_output=True, text=True, check=True)
        self.url = out.stdout.strip().splitlines()[-1]
        self.count = 0
        # The test cluster runs with fsync off; a benchmark beside the files (which sync
        # each write) turns it on, as any real server has it.
        port = self.url.rsplit(":", 1)[1].split("/")[0]
        for statement in ("ALTER SYSTEM SET fsync = on", "SELECT pg_reload_conf()"):
            subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-h",
                            os.path.join(self.dir, "cluster"), "-p", port, "-U", "postgres",
                            "-d", "postgres", "-qc", statement], check=True,
                           capture_output=True)

    def database(self):
        """A fresh database's URL (on a given cluster: its own database, emptied by the caller)."""
        if self.dir is None:
            return self.url
        self.count += 1
        name = f"bench_{os.getpid()}_{self.count}"
        base, _, query = self.url.partition("?")
        admin = base.rsplit("/", 1)[0] + "/postgres" + (f"?{query}" if query else "")
        subprocess.run(["psql", admin, "-qc", f"CREATE DATABASE {name}"], check=True,
                       capture_output=True)
        return base.rsplit("/", 1)[0] + f"/{name}" + (f"?{query}" if query else "")

    def close(self):
        if self.dir:
            subprocess.run(["bash", os.path.join(ROOT, "tests/postgres/cluster.sh"), "stop",
                            os.path.join(self.dir, "cluster")], capture_output=True)
            shutil.rmtree(self.dir, ignore_errors=True)


class Home:
    """A private BATON_HOME; its state in the files, or in the database at `store`."""

    def __init__(self, binary, store=None):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="baton-bench-")
        self.home = os.path.join(self.dir, "home")
        self.work = os.path.join(self.dir, "work")
        os.makedirs(self.work)
        self.env = dict(os.environ, BATON_HOME=self.home, BATON_NOTIFY="0")
        for name in ("BATON_AGENT", "BATON_URL", "BATON_TOKEN", "BATON_STORE"):
            self.env.pop(name, None)
        if store:
            self.env["BATON_STORE"] = store

    def run(self, args, stdin=None):
        proc = subprocess.run([self.binary] + args, cwd=self.work, env=self.env,
                              input=stdin, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"baton {args[:3]}… exited {proc.returncode}: "
                               f"{shown(proc.stderr.strip())[:300]}")
        return proc.stdout

    def measure(self, args, env=None):
        """Wall milliseconds of one run (in `env`, else the home's)."""
        started = time.perf_counter()
        proc = subprocess.run([self.binary] + args, cwd=self.work, env=env or self.env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        elapsed = (time.perf_counter() - started) * 1000
        if proc.returncode != 0:
            raise RuntimeError(f"baton {args[:3]}… exited {proc.returncode}")
        return elapsed

    def fill(self, open_tasks):
        """`open_tasks` pending tasks from lead to dev, 300-byte bodies, through `baton import`
        (one change, whichever the store)."""
        tasks = [{"id": f"t{n}", "subject": f"Task number {n}: make the widget frobnicate",
                  "body": BODY, "status": "pending", "from": "lead", "to": "dev",
                  "created": "2026-12-01T10:00:00Z", "updated": "2026-12-01T10:00:00Z"}
                 for n in range(1, open_tasks + 1)]
        source = os.path.join(self.dir, "import.json")
        with open(source, "w") as out:
            json.dump({"tasks": tasks}, out)
        self.run(["--as", "lead", "import", "roundtable", source])

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class Haproxy:
    """Debian's haproxy on loopback in front of `hubs` (Served, started with --allow-host
    127.0.0.1), configured as docs/load-balancer.md says: its block, with only its addresses
    and name this run's (as tests/it/common/haproxy.rs runs it)."""

    def __init__(self, hubs):
        page = open(os.path.join(ROOT, "docs/load-balancer.md")).read()
        block = page.split("```haproxy\n", 1)[1].split("```", 1)[0]
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        lines, servers = [], False
        for line in block.splitlines():
            word = (line.split() or [""])[0]
            if word == "bind":
                lines.append(f"    bind 127.0.0.1:{self.port}")
            elif word == "server":
                if not servers:
                    lines += [f"    server hub{n + 1} {hub.host}:{hub.port}"
                              for n, hub in enumerate(hubs)]
                    servers = True
            else:
                lines.append(line.replace("baton.example.com", "127.0.0.1"))
        self.dir = tempfile.mkdtemp(prefix="baton-bench-haproxy-")
        config = os.path.join(self.dir, "haproxy.cfg")
        with open(config, "w") as out:
            out.write("\n".join(lines) + "\n")
        self.proc = subprocess.Popen([shutil.which("haproxy") or "/usr/sbin/haproxy", "-db",
                                      "-f", config], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.host = "127.0.0.1"
        deadline = time.time() + 10
        while True:
            try:
                connection = self.connection()
                connection.request("GET", "/healthz")
                if connection.getresponse().status == 200:
                    connection.close()
                    break
            except OSError:
                pass
            if time.time() > deadline:
                self.close()
                raise RuntimeError("haproxy did not answer /healthz within 10 s")
            time.sleep(0.1)

    def connection(self):
        return http.client.HTTPConnection(self.host, self.port, timeout=60)

    def close(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def cpu_seconds(pid):
    """User and system CPU seconds of process `pid` so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def cluster_pids(cluster):
    """The processes of a throwaway cluster: its postmaster and every child (backends)."""
    if cluster is None or cluster.dir is None:
        return []
    try:
        with open(os.path.join(cluster.dir, "cluster", "data", "postmaster.pid")) as pid:
            master = int(pid.readline())
    except (OSError, ValueError):
        return []
    pids = [master]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == master:
                        pids.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return pids


def p99(values):
    """The 99th percentile of `values`."""
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))]


def post(connection, token, path, body):
    connection.request("POST", path, body=json.dumps(body), headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    response = connection.getresponse()
    answer = response.read()
    if response.status != 200:
        raise RuntimeError(f"POST {path}: {response.status} {answer[:200]!r}")
    return json.loads(answer)


def swarm(binary, store, hubs, agents, rounds, balanced=False, cluster=None):
    """`agents` agents, spread over `hubs` hubs (or all through haproxy in front of them,
    `balanced`), each sending itself a task, claiming it and finishing it, `rounds` times
    after a first round of its own, all driven by one cheap client (bench/agents.py): the
    `rounds`' changes per second, the median and p99 milliseconds of one change, the first
    round's p99 (each agent's first change, and the hubs' first connections), and the CPU
    milliseconds per change of the hubs, the database's processes (a throwaway
    `cluster`'s), haproxy and this client."""
    home = Home(binary, store)
    served = []
    balancer = None
    try:
        home.run(["--as", "lead", "whoami"])
        tokens = [home.run(["token", "add", f"agent{n}"]).strip() for n in range(agents)]
        args = ("--allow-host", "127.0.0.1") if balanced else ()
        served = [Served(home, agent="lead", args=args) for _ in range(hubs)]
        if balanced:
            balancer = Haproxy(served)
        ways = [balancer or served[n % hubs] for n in range(agents)]
        crowd = [agents_client.Agent(way.host, way.port, tokens[n], f"agent{n}", 1)
                 for n, way in enumerate(ways)]
        # The first round, apart: each agent's first change registers it, and the hubs open
        # their connections to the database under the crowd's first burst.
        agents_client.run(crowd, "/api/v1/projects/default/tasks")
        first = sorted(latency for agent in crowd for latency in agent.latencies)
        for agent in crowd:
            agent.again(rounds)
        database = cluster_pids(cluster)
        watched = {"hubs": [hub.proc.pid for hub in served], "PostgreSQL": database,
                   "haproxy": [balancer.proc.pid] if balancer else []}
        cpu_before = {name: sum(map(cpu_seconds, pids)) for name, pids in watched.items()}
        client_before = sum(os.times()[:2])
        began = time.perf_counter()
        agents_client.run(crowd, "/api/v1/projects/default/tasks")
        elapsed = time.perf_counter() - began
        watched["PostgreSQL"] = sorted(set(database) | set(cluster_pids(cluster)))
        cpu = {name: sum(map(cpu_seconds, pids)) - cpu_before.get(name, 0.0)
               for name, pids in watched.items()}
        cpu["client"] = sum(os.times()[:2]) - client_before
        every = sorted(latency for agent in crowd for latency in agent.latencies)
        for agent in crowd:
            agent.socket.close()
        per_change = {name: seconds * 1000 / len(every) for name, seconds in cpu.items()}
        return (len(every) / elapsed, statistics.median(every), p99(every), p99(first),
                per_change)
    finally:
        if balancer:
            balancer.close()
        for hub in served:
            hub.close()
        home.close()


def balancer_cost(binary, store, requests):
    """What haproxy costs one request: two hubs on `store` and haproxy in front, one kept
    connection straight to the first hub, one through haproxy, and one through a haproxy in
    front of the first hub alone (its own cost, without round robin's), used in turn: the
    median and p99 milliseconds of a board read and of a change (a send), each way."""
    home = Home(binary, store)
    served = []
    balancer = alone = None
    try:
        home.run(["--as", "lead", "whoami"])
        home.run(["--as", "dev", "whoami"])
        served = [Served(home, agent="lead", args=("--allow-host", "127.0.0.1"))
                  for _ in range(2)]
        balancer = Haproxy(served)
        alone = Haproxy(served[:1])
        token = served[0].token
        ways = {"straight": served[0].connection(), "haproxy": balancer.connection(),
                "haproxy, hub 1": alone.connection()}
        times = {(way, what): [] for way in ways for what in ("read", "change")}
        board = "/api/v1/projects/default/board"
        for i in range(requests):
            for way, connection in ways.items():
                began = time.perf_counter()
                connection.request("GET", board, headers={"Authorization": f"Bearer {token}"})
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    raise RuntimeError(f"board: {response.status}")
                times[(way, "read")].append((time.perf_counter() - began) * 1000)
                began = time.perf_counter()
                post(connection, token, "/api/v1/projects/default/tasks",
                     {"to": "dev", "subject": f"cost {i}"})
                times[(way, "change")].append((time.perf_counter() - began) * 1000)
        for connection in ways.values():
            connection.close()
        return {key: (statistics.median(values), p99(values)) for key, values in times.items()}
    finally:
        for proxy in (balancer, alone):
            if proxy:
                proxy.close()
        for hub in served:
            hub.close()
        home.close()


def events_on(served, arrived):
    connection = served.connection()
    connection.request("GET", "/api/v1/events", headers={
        "Authorization": f"Bearer {served.token}", "Accept": "text/event-stream"})
    stream = connection.getresponse()
    if stream.status != 200:
        raise RuntimeError(f"/api/v1/events answered {stream.status}")

    def read():
        try:
            for raw in stream:
                line = raw.decode().strip()
                if line.startswith("data:"):
                    arrived.put((time.perf_counter(), json.loads(line[5:])))
        except (OSError, ValueError, AttributeError):
            pass

    threading.Thread(target=read, daemon=True).start()
    return connection


def cross_hub_delay(binary, store, changes):
    """Milliseconds from a change acknowledged by hub A (its POST answered) to its event on
    hub B's stream, and from the POST sent; medians and p99 over `changes` changes. On the
    files both hubs serve one home (file events); on PostgreSQL they share the database
    (LISTEN/NOTIFY)."""
    home = Home(binary, store)
    a = b = None
    try:
        home.run(["--as", "lead", "whoami"])
        home.run(["--as", "dev", "whoami"])
        a, b = Served(home, agent="lead"), Served(home, agent="lead")
        arrived = queue.Queue()
        stream = events_on(b, arrived)
        time.sleep(0.3)
        connection = a.connection()
        from_send, from_answer = [], []
        for i in range(changes):
            began = time.perf_counter()
            sent = post(connection, a.token, "/api/v1/projects/default/tasks",
                        {"to": "dev", "subject": f"event {i}"})
            answered = time.perf_counter()
            task = sent["task"]["id"]
            while True:
                at, change = arrived.get(timeout=30)
                if change.get("kind") == "send" and change.get("id") == task:
                    from_send.append((at - began) * 1000)
                    from_answer.append((at - answered) * 1000)
                    break
            time.sleep(0.02)
        connection.close()
        stream.close()
        return from_send, from_answer
    finally:
        for hub in (a, b):
            if hub:
                hub.close()
        home.close()


def cli(binary, store, open_tasks, repeats, through_hub=False):
    """Median milliseconds of `baton send` and `baton status` with `open_tasks` open tasks;
    `through_hub`: each command sent to a hub of this machine serving the store (BATON_URL
    and each agent's token, no BATON_STORE in the command's environment)."""
    home = Home(binary, store)
    served = None
    try:
        home.run(["--as", "lead", "whoami"])
        home.run(["--as", "dev", "whoami"])
        home.fill(open_tasks)
        env = {"lead": home.env, "dev": home.env}
        if through_hub:
            served = Served(home, agent="lead")
            for agent in env:
                token = home.run(["token", "add", agent]).strip()
                env[agent] = {name: value for name, value in home.env.items()
                              if name != "BATON_STORE"}
                env[agent].update(BATON_URL=f"http://{served.host}:{served.port}",
                                  BATON_TOKEN=token)
        send = statistics.median(
            home.measure(["--as", "lead", "send", "--to", "dev", "--subject", f"cli {i}"],
                         env["lead"])
            for i in range(repeats))
        status = statistics.median(home.measure(["--as", "dev", "status"], env["dev"])
                                   for _ in range(repeats))
        return send, status
    finally:
        if served:
            served.close()
        home.close()


def board_reads(binary, store, open_tasks, repeats):
    """Median milliseconds of a process start, of the server's reads of an unchanged board,
    and of a read right after a change, with `open_tasks` open tasks of 300-byte bodies."""
    home = Home(binary, store)
    served = None
    try:
        home.run(["--as", "lead", "whoami"])
        home.run(["--as", "dev", "whoami"])
        home.fill(open_tasks)
        start = statistics.median(home.measure(["--version"]) for _ in range(repeats))
        served = Served(home, agent="lead")
        connection = served.connection()
        board = "/api/v1/projects/default/board"

        def get():
            began = time.perf_counter()
            connection.request("GET", board, headers={"Authorization": f"Bearer {served.token}"})
            response = connection.getresponse()
            body = response.read()
            if response.status != 200:
                raise RuntimeError(f"board: {response.status}")
            return (time.perf_counter() - began) * 1000, len(body)

        _, size = get()
        kept = statistics.median(get()[0] for _ in range(repeats))
        changed = []
        for i in range(repeats):
            post(connection, served.token, "/api/v1/projects/default/tasks",
                 {"to": "dev", "subject": f"change {i}", "body": BODY})
            changed.append(get()[0])
        connection.close()
        return start, kept, statistics.median(changed), size
    finally:
        if served:
            served.close()
        home.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True, help="a built baton (release)")
    parser.add_argument("--store", help="a postgres:// URL (default: a throwaway cluster)")
    parser.add_argument("--quick", action="store_true", help="smaller runs, for a smoke test")
    parser.add_argument("--against", help="another build (an older one), whose PostgreSQL rows "
                        "are measured in the same run, each beside this one's")
    parser.add_argument("--open-tasks", default="1000,10000",
                        help="the boards' sizes the CLI is measured at (comma-separated)")
    parser.add_argument("--haproxy", action="store_true",
                        help="the two-hub swarm through haproxy too (Debian's, configured as "
                        "docs/load-balancer.md says), and what haproxy costs a request")
    parser.add_argument("--only", default="swarm,delay,cli,board",
                        help="the parts to run (comma-separated, of swarm, delay, cli, board)")
    options = parser.parse_args()
    parts = set(options.only.split(","))
    binary = os.path.abspath(options.binary)
    builds = [("", binary)]
    if options.against:
        builds = [(" (against)", os.path.abspath(options.against)), ("", binary)]
    cluster = Cluster(options.store)
    print(f"baton: {subprocess.run([binary, '--version'], capture_output=True, text=True).stdout.strip()}")
    print(f"database: {shown(cluster.url)}" + ("" if options.store else " (a throwaway cluster, fsync on)"))
    print(f"machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} at the start")
    print()
    agents, rounds = (20, 5) if options.quick else (100, 20)
    repeats = 5 if options.quick else 15
    try:
        if "swarm" in parts:
            print(f"Swarm: {agents} agents each sending itself a task, claiming and finishing "
                  f"it, {rounds} times (3 changes a round) after a first round apart ('first': "
                  f"its p99 ms), over HTTP keep-alive; CPU ms per change of each side")
            print(f"{'store':<44} {'changes/s':>10} {'median ms':>10} {'p99 ms':>8} {'first':>8} "
                  f"{'hubs':>6} {'pg':>6} {'hapx':>6} {'client':>6}")
            rows = [("files, one hub", binary, None, 1, False)]
            for suffix, build in builds:
                rows += [("PostgreSQL, one hub" + suffix, build, 1, False),
                         ("PostgreSQL, two hubs" + suffix, build, 2, False)]
                if options.haproxy:
                    rows.append(("PostgreSQL, two hubs through haproxy" + suffix, build, 2, True))
            rows = [rows[0]] + [(label, build, cluster.database(), hubs, balanced)
                                for label, build, hubs, balanced in rows[1:]]
            for label, build, store, hubs, balanced in rows:
                rate, median, slowest, cold, cpu = swarm(build, store, hubs, agents, rounds,
                                                         balanced, cluster if store else None)
                print(f"{label:<44} {rate:>10.0f} {median:>10.2f} {slowest:>8.2f} {cold:>8.2f} "
                      f"{cpu['hubs']:>6.2f} {cpu['PostgreSQL']:>6.2f} {cpu['haproxy']:>6.2f} "
                      f"{cpu['client']:>6.2f}")
            print()
        if options.haproxy:
            requests = 100 if options.quick else 500
            print(f"What haproxy costs a request: two hubs on PostgreSQL, {requests} board reads "
                  f"and sends in turn, one kept connection each way, ms")
            print(f"{'way':<16} {'read median':>12} {'p99':>7} {'send median':>12} {'p99':>7}")
            cost = balancer_cost(binary, cluster.database(), requests)
            for way in ("straight", "haproxy", "haproxy, hub 1"):
                (read, read_p99), (send, send_p99) = cost[(way, "read")], cost[(way, "change")]
                print(f"{way:<16} {read:>12.2f} {read_p99:>7.2f} {send:>12.2f} {send_p99:>7.2f}")
            print()
        if "delay" in parts:
            changes = 10 if options.quick else 50
            print(f"From a change on hub A to its event on hub B's /api/v1/events, {changes} changes")
            print(f"{'store':<30} {'from POST median':>17} {'p99':>7} {'from answer median':>19} {'p99':>7}")
            rows = [("files (one home)", binary, None)]
            rows += [("PostgreSQL" + suffix, build, cluster.database()) for suffix, build in builds]
            for label, build, store in rows:
                from_send, from_answer = cross_hub_delay(build, store, changes)
                print(f"{label:<30} {statistics.median(from_send):>17.2f} {p99(from_send):>7.2f} "
                      f"{statistics.median(from_answer):>19.2f} {p99(from_answer):>7.2f}")
            print()
        if "cli" in parts:
            sizes = (1000,) if options.quick else tuple(int(n) for n in options.open_tasks.split(","))
            print("The CLI, median ms of one run")
            print(f"{'open tasks':>10} {'store':<22} {'send':>8} {'status':>8}")
            for size in sizes:
                rows = [("files", binary, None, False)]
                rows += [("PostgreSQL" + suffix, build, cluster.database(), False)
                         for suffix, build in builds]
                rows.append(("PostgreSQL, via a hub", binary, cluster.database(), True))
                for label, build, store, through_hub in rows:
                    send, status = cli(build, store, size, repeats, through_hub)
                    print(f"{size:>10} {label:<22} {send:>8.2f} {status:>8.2f}")
            print()
        if "board" in parts:
            print("A board read over HTTP, 1,000 open tasks of 300-byte bodies, median ms")
            print(f"{'store':<22} {'process start':>14} {'unchanged':>10} {'after a change':>15} {'bytes':>9}")
            rows = [("files", binary, None)]
            rows += [("PostgreSQL" + suffix, build, cluster.database()) for suffix, build in builds]
            for label, build, store in rows:
                start, kept, changed, size = board_reads(build, store, 1000, repeats)
                print(f"{label:<22} {start:>14.2f} {kept:>10.2f} {changed:>15.2f} {size:>9}")
    finally:
        cluster.close()


if __name__ == "__main__":
    main()
