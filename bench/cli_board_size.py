#!/usr/bin/env python3
"""What the size of a board costs a command on PostgreSQL (SPEC section 16): `baton send` and
`baton status` with BATON_STORE on a board of 10 open tasks and on one of 1,000, each timed
whole (wall), by the CPU the baton process spent (user + system), and by the round trip that
carries the board (BATON_PG_TIMINGS=1: status's third, send's fourth, the change's first
pipeline); then the bytes of the board's task texts beside those of their heads alone (the
fields `store::head` reads: id, status, priority, from, to, reviewer, after, the times,
touches) and how long psql takes to fetch either, the heads put in a column of a copy of
the board for it.

    python3 bench/cli_board_size.py --binary target/release/baton --repeats 21

A throwaway cluster (tests/postgres/cluster.sh, fsync on, TCP with SCRAM, as
bench/postgres.py --only cli). Nothing is asserted: the figures are printed for people to
read (docs/performance.md, "What a heads column would save").
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from postgres import Cluster, Home  # noqa: E402

HEAD = ["id", "status", "priority", "from", "to", "reviewer", "after", "created_at",
        "updated_at", "lease_expires_at", "touches"]
TRIP = re.compile(r"round trip: ([0-9.]+) ms")
# Which round trip carries the board, counted from 0.
BOARD_TRIP = {"status": 2, "send": 3}


def run(binary, home, args):
    """Wall ms, CPU ms and the round trips' ms of one run."""
    env = dict(home.env, BATON_PG_TIMINGS="1")
    started = time.perf_counter()
    proc = subprocess.Popen([binary] + args, cwd=home.work, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - started) * 1000
    if status != 0:
        raise RuntimeError(f"baton {args[:3]} failed: {err.strip()[:300]}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, [float(t) for t in TRIP.findall(err)]


def fetch_ms(url, column, repeats):
    """psql's median time to fetch every task's id and `column`."""
    script = "\\timing on\n" + f"SELECT id, {column} FROM tasks ORDER BY id;\n" * repeats
    out = subprocess.run(["psql", url, "-o", "/dev/null"], input=script, capture_output=True,
                         text=True, check=True).stdout
    return statistics.median(float(t) for t in re.findall(r"Time: ([0-9.]+) ms", out))


def heads_beside_texts(url, repeats):
    out = subprocess.run(["psql", url, "-Atc", "SELECT task FROM tasks"], capture_output=True,
                         text=True, check=True).stdout
    texts = [line for line in out.splitlines() if line.startswith("{")]
    heads = [json.dumps({k: v for k, v in json.loads(text).items() if k in HEAD},
                        separators=(",", ":")) for text in texts]
    print(f"{len(texts)} tasks: texts {sum(map(len, texts)):,} bytes "
          f"({statistics.mean(map(len, texts)):.0f} each), heads {sum(map(len, heads)):,} bytes "
          f"({statistics.mean(map(len, heads)):.0f} each)")
    rows = "".join(f"{json.loads(t)['id']}\t{h.replace(chr(92), chr(92) * 2)}\n"
                   for t, h in zip(texts, heads))
    subprocess.run(["psql", url, "-q", "-v", "ON_ERROR_STOP=1"], text=True, check=True,
                   capture_output=True,
                   input="ALTER TABLE tasks ADD COLUMN head text;\n"
                         "CREATE TEMP TABLE h (id bigint, head text);\n"
                         "COPY h FROM STDIN;\n" + rows + "\\.\n"
                         "UPDATE tasks SET head = h.head FROM h WHERE tasks.id = h.id;\n")
    print(f"psql fetch, median of {repeats}: texts {fetch_ms(url, 'task', repeats):.2f} ms, "
          f"heads {fetch_ms(url, 'head', repeats):.2f} ms")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True, help="a built baton (release)")
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} at the start")
    cluster = Cluster()
    rows = {}
    try:
        for open_tasks in (10, 1000):
            url = cluster.database()
            home = Home(args.binary, url)
            try:
                home.run(["--as", "lead", "whoami"])
                home.run(["--as", "dev", "whoami"])
                home.fill(open_tasks)
                runs = {"send": [], "status": []}
                for i in range(args.repeats):
                    runs["send"].append(run(args.binary, home, ["--as", "lead", "send", "--to",
                                                                "dev", "--subject", f"s{i}"]))
                    runs["status"].append(run(args.binary, home, ["--as", "dev", "status"]))
                for command, taken in runs.items():
                    at = BOARD_TRIP[command]
                    rows[(open_tasks, command)] = (
                        statistics.median(r[0] for r in taken),
                        statistics.median(r[1] for r in taken),
                        statistics.median(r[2][at] for r in taken if len(r[2]) > at),
                        statistics.median(len(r[2]) for r in taken))
                if open_tasks == 1000:
                    heads_beside_texts(url, args.repeats)
            finally:
                home.close()
    finally:
        cluster.close()
    print(f"median of {args.repeats}: {'tasks':>6} {'command':<8} {'wall ms':>8} {'CPU ms':>7} "
          f"{'board trip ms':>13} {'trips':>5}")
    for (open_tasks, command), (wall, cpu, trip, trips) in sorted(rows.items()):
        print(f"{'':>14}{open_tasks:>6} {command:<8} {wall:8.2f} {cpu:7.2f} {trip:13.2f} "
              f"{trips:>5.0f}")


if __name__ == "__main__":
    main()
