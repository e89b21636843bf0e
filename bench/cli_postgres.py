#!/usr/bin/env python3
"""A command's fixed cost on PostgreSQL, piece by piece (SPEC section 16): `baton send` and
`baton status` with BATON_STORE and 1,000 open tasks, beside the files, for each way a
command can log in (TCP with a password (scram-sha-256), TCP with TLS, TCP trusted, a Unix
socket trusted, a Unix socket with peer authentication), with the schema remembered from the
last command (as it is after the first) and with it checked every time (as before).

    python3 bench/cli_postgres.py --binary target/release/baton
    python3 bench/cli_postgres.py --binary target/release/baton --repeats 31
    python3 bench/cli_postgres.py --binary target/release/baton --against old/baton  # before/after

It starts a throwaway cluster with tests/postgres/cluster.sh (run as root: the server runs as
the `postgres` user; fsync on, as a real server has it), adds the roles and pg_hba lines the
ways need and a self-signed certificate for TLS, and stops it at the end. Each command runs
with BATON_PG_TIMINGS=1, which prints how long the connection's start and the schema's check
took, and each round trip: the pieces are those medians, and "the rest" is the run's median
less them (the process itself: reading and writing the tasks' JSON, the output). A build
from before BATON_PG_TIMINGS (`--against`) shows its runs whole. Nothing is asserted: the
figures are printed for people to read.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from postgres import Cluster, Home  # noqa: E402

TIMING = re.compile(r"baton: postgres: (.*): ([0-9.]+) ms")


def admin(cluster, port, *statements):
    """Runs `statements` as the cluster's superuser, over its socket."""
    for statement in statements:
        subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-h", cluster, "-p", port,
                        "-U", "postgres", "-d", "postgres", "-qc", statement],
                       check=True, capture_output=True)


def prepare_ways(cluster):
    """The URLs of each way in (a database of its own each), the cluster set up for them."""
    directory = os.path.join(cluster.dir, "cluster")
    data = os.path.join(directory, "data")
    port = cluster.url.rsplit(":", 1)[1].split("/")[0]
    password = cluster.url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
    # A self-signed certificate, for sslmode=require.
    subprocess.run(["openssl", "req", "-new", "-x509", "-days", "2", "-nodes", "-subj",
                    "/CN=localhost", "-keyout", os.path.join(data, "server.key"),
                    "-out", os.path.join(data, "server.crt")], check=True,
                   capture_output=True)
    for name in ("server.key", "server.crt"):
        shutil.chown(os.path.join(data, name), "postgres")
        os.chmod(os.path.join(data, name), 0o600)
    # Ahead of initdb's lines (the first that matches wins): a trusted TCP role, and peer
    # authentication on the socket for the user this runs as.
    user = os.environ.get("USER") or "root"
    hba = os.path.join(data, "pg_hba.conf")
    with open(hba) as existing:
        lines = existing.read()
    with open(hba, "w") as out:
        out.write(f"local all {user} peer\nhost all trusted 127.0.0.1/32 trust\n" + lines)
    admin(directory, port, "ALTER SYSTEM SET ssl = on", "SELECT pg_reload_conf()",
          f'CREATE ROLE "{user}" LOGIN CREATEDB', "CREATE ROLE trusted LOGIN CREATEDB")
    time.sleep(0.5)
    ways = {}

    def database(name, owner):
        admin(directory, port, f"CREATE DATABASE cli_{name} OWNER \"{owner}\"")
        return f"cli_{name}"

    ways["TCP, scram"] = (f"postgres://baton:{password}@127.0.0.1:{port}/"
                          f"{database('scram', 'baton')}?sslmode=disable")
    ways["TCP, TLS + scram"] = (f"postgres://baton:{password}@127.0.0.1:{port}/"
                                f"{database('tls', 'baton')}?sslmode=require")
    ways["TCP, trust"] = (f"postgres://trusted@127.0.0.1:{port}/"
                          f"{database('trust', 'trusted')}?sslmode=disable")
    ways["socket, trust"] = (f"postgres://baton@/{database('socket', 'baton')}"
                             f"?host={directory}&port={port}")
    ways["socket, peer"] = (f"postgres://{user}@/{database('peer', user)}"
                            f"?host={directory}&port={port}")
    return ways


def timed(home, args, forget):
    """One run: (wall ms, connect ms, check ms, round trips, round trips' ms)."""
    if forget:
        shutil.rmtree(os.path.join(home.home, "cache"), ignore_errors=True)
    env = dict(home.env, BATON_PG_TIMINGS="1")
    started = time.perf_counter()
    proc = subprocess.run([home.binary] + args, cwd=home.work, env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = (time.perf_counter() - started) * 1000
    if proc.returncode != 0:
        raise RuntimeError(f"baton {args[:3]}… exited {proc.returncode}: {proc.stderr[-300:]}")
    connect = check = trips = 0.0
    count = 0 if "baton: postgres:" in proc.stderr else float("nan")
    for what, ms in TIMING.findall(proc.stderr):
        if what.startswith("connect"):
            connect += float(ms)
        elif what == "schema check":
            check += float(ms)
        elif what == "round trip":
            trips += float(ms)
            count += 1
    return wall, connect, check, count, trips


def measure(binary, store, repeats, forget):
    """The medians of each piece of `send` and of `status`, 1,000 open tasks."""
    home = Home(binary, store)
    try:
        home.run(["--as", "lead", "whoami"])
        home.run(["--as", "dev", "whoami"])
        home.fill(1000)
        start = statistics.median(home.measure(["--version"]) for _ in range(repeats))
        rows = {}
        for name, args in (("send", lambda i: ["--as", "lead", "send", "--to", "dev",
                                               "--subject", f"cli {i}"]),
                           ("status", lambda i: ["--as", "dev", "status"])):
            runs = [timed(home, args(i), forget) for i in range(repeats)]
            rows[name] = [statistics.median(run[k] for run in runs) for k in range(5)]
        return start, rows
    finally:
        home.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True, help="a built baton (release)")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--against", help="another build (an older one), measured in the same "
                        "run, each of its rows beside this one's")
    options = parser.parse_args()
    binary = os.path.abspath(options.binary)
    if os.geteuid() != 0:
        sys.exit("error: run as root (the cluster runs as the postgres user)")
    cluster = Cluster()
    try:
        ways = prepare_ways(cluster)
        print(f"baton: {subprocess.run([binary, '--version'], capture_output=True, text=True).stdout.strip()}")
        print(f"machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} at the start")
        print(f"median ms of {options.repeats} runs, 1,000 open tasks; 'rest' = run - connect - "
              "check - round trips (the process: start, JSON, output)")
        print()
        header = (f"{'store':<18} {'schema':<10} {'cmd':<7} {'run':>6} {'connect':>8} "
                  f"{'check':>6} {'trips':>6} {'trips ms':>9} {'rest':>6}")
        print(header)
        rows = [("files", None, False, binary)]
        for name, url in ways.items():
            if options.against:
                rows.append((name, url, False, os.path.abspath(options.against)))
            rows += [(name, url, True, binary), (name, url, False, binary)]
        for name, url, forget, build in rows:
            start, measured = measure(build, url, options.repeats, forget)
            schema = "" if url is None else ("checked" if forget else "remembered")
            if build != binary:
                schema = "before"
            for command, (wall, connect, check, count, trips) in measured.items():
                if count != count:  # no timings printed: an older build
                    print(f"{name:<18} {schema:<10} {command:<7} {wall:>6.2f}")
                    continue
                rest = wall - connect - check - trips
                print(f"{name:<18} {schema:<10} {command:<7} {wall:>6.2f} {connect:>8.2f} "
                      f"{check:>6.2f} {count:>6.0f} {trips:>9.2f} {rest:>6.2f}")
        print(f"\nprocess start (`baton --version`): {start:.2f} ms")
    finally:
        cluster.close()


if __name__ == "__main__":
    main()
