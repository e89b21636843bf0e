#!/usr/bin/env python3
"""Reservations (SPEC section 18.2) under load: with 1,000 reservations held by other agents,
`reserved` and the pre-edit hook beside a bare `status`, and a claim of a task with a
20-pattern scope beside a claim of one without, on the files and on PostgreSQL.

    python3 bench/reservations.py --binary target/release/baton
    python3 bench/reservations.py --binary target/release/baton --store postgres://u@h/db
    python3 bench/reservations.py --binary target/release/baton --postgres   # a throwaway cluster
    python3 bench/reservations.py --binary target/release/baton --quick

Each figure is a median and a 99th percentile of runs of the real binary; nothing is
asserted. The machine's other load shows in them: compare the rows of one run.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import has_command, percentile, table  # noqa: E402
from postgres import Cluster, Home  # noqa: E402

HELD = 1000
SCOPE = 20


def hold(home, count):
    """`count` reservations by hand, each of its own path, by ten agents other than dev."""
    for agent in range(10):
        home.run(["--as", f"holder{agent}", "whoami"])
    per_agent = count // 10
    for agent in range(10):
        patterns = [f"held/a{agent}/f{n}.rs" for n in range(per_agent)]
        # 64 patterns a call at most: the limit of one scope.
        for start in range(0, len(patterns), 50):
            home.run(["--as", f"holder{agent}", "reserve",
                      ",".join(patterns[start:start + 50]), "--for", "7d"])


def timed(home, args, repeats, stdin=None):
    """Milliseconds of `repeats` runs of `args` (stdin fed where given)."""
    figures = []
    for _ in range(repeats):
        if stdin is None:
            figures.append(home.measure(args))
            continue
        started = time.perf_counter()
        subprocess.run([home.binary] + args, cwd=home.work, env=home.env, input=stdin,
                       capture_output=True, text=True)
        figures.append((time.perf_counter() - started) * 1000)
    return figures


def row(name, figures, base=None):
    median = statistics.median(figures)
    ratio = f"{median / base:.2f}×" if base else "1×"
    return [name, f"{median:.2f}", f"{percentile(figures, 0.99):.2f}", ratio]


def run(binary, store, repeats, claims):
    home = Home(binary, store)
    try:
        for agent in ("lead", "dev"):
            home.run(["--as", agent, "whoami"])
        hold(home, HELD)
        # Tasks for dev to claim: half with a scope of 20 free patterns, half without.
        scoped, plain = [], []
        for n in range(claims):
            scope = ",".join(f"work/t{n}/p{k}/**" for k in range(SCOPE))
            out = home.run(["--as", "lead", "--json", "send", "--to", "dev", "--subject",
                            f"scoped {n}", "--touches", scope, "--no-wake"])
            scoped.append(json.loads(out)["task"]["id"])
            out = home.run(["--as", "lead", "--json", "send", "--to", "dev", "--subject",
                            f"plain {n}", "--no-wake"])
            plain.append(json.loads(out)["task"]["id"])
        rows = []
        status = timed(home, ["--as", "dev", "status"], repeats)
        base = statistics.median(status)
        rows.append(row("status (bare)", status))
        # `reserved` exits 1 when someone holds the path: timed here, its exit checked.
        reserved = []
        for _ in range(repeats):
            started = time.perf_counter()
            proc = subprocess.run([binary, "--as", "dev", "reserved", "held/a3/f7.rs"],
                                  cwd=home.work, env=home.env, capture_output=True)
            reserved.append((time.perf_counter() - started) * 1000)
            assert proc.returncode == 1, proc.stderr
        rows.append(row(f"reserved (held; {HELD} held)", reserved, base))
        free = timed(home, ["--as", "dev", "reserved", "free/x.rs"], repeats)
        rows.append(row(f"reserved (free; {HELD} held)", free, base))
        if has_command(binary, "hook", "pre-edit"):
            call = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Edit",
                               "cwd": home.work, "session_id": "bench",
                               "tool_input": {"file_path": os.path.join(home.work, "free/x.rs"),
                                              "old_string": "a", "new_string": "b"}})
            hook = timed(home, ["--as", "dev", "hook", "pre-edit", "--client", "claude"],
                         repeats, stdin=call)
            rows.append(row(f"hook pre-edit (claude; {HELD} held)", hook, base))
        with_scope = [home.measure(["--as", "dev", "claim", str(id)]) for id in scoped]
        without = [home.measure(["--as", "dev", "claim", str(id)]) for id in plain]
        rows.append(row("claim, no scope", without))
        rows.append(row(f"claim, {SCOPE}-pattern scope", with_scope,
                        statistics.median(without)))
        return rows
    finally:
        home.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--store", help="a PostgreSQL URL to run on as well as the files")
    parser.add_argument("--postgres", action="store_true",
                        help="run on a throwaway cluster as well as the files")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats, claims = (15, 10) if args.quick else (101, 40)
    columns = ["what", "median ms", "p99 ms", "vs base"]
    table(f"files: {HELD} reservations held", columns, run(args.binary, None, repeats, claims))
    if args.store or args.postgres:
        cluster = Cluster(args.store)
        try:
            table(f"PostgreSQL: {HELD} reservations held", columns,
                  run(args.binary, cluster.database(), repeats, claims))
        finally:
            cluster.close()


if __name__ == "__main__":
    main()
