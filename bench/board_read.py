#!/usr/bin/env python3
"""A board read over HTTP against a process start: GET /api/v1/projects/default/board on a
running `baton serve`, the board holding N open tasks with 300-byte bodies.

    python3 bench/board_read.py --binary target/release/baton
    python3 bench/board_read.py --binary OLD --binary NEW     # before and after, one table

For each binary and size it prints the median milliseconds of: `baton --version` (a process
start); `baton board --json` (the CLI); the server's first read (it parses the board); reads
of the unchanged board, one after the other on one keep-alive connection; reads each right
after a CLI change of the board (a `send`: the server encodes it again); and, when the
server sends an ETag, reads with If-None-Match (304, no body). Each figure is a median of
`--repeats` runs; nothing is asserted, the figures are printed for people to read.
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Hub, Served, stamp  # noqa: E402

BOARD = "/api/v1/projects/default/board"
# 300 bytes of body, as the board has.
BODY = ("Make the widget frobnicate correctly: the parser drops the last token when a line "
        "ends without a newline, and the lexer counts columns from one in some places and "
        "from zero in others. Fix both, add a test for each, and say in the result what the "
        "old behaviour was so that callers can tell. Thanks a lot!")[:300]
assert len(BODY) == 300


def task(n):
    return {
        "id": n,
        "subject": f"Task number {n}: make the widget frobnicate correctly",
        "body": BODY,
        "files": ["src/widget.rs"],
        "from": "lead",
        "to": "dev",
        "reviewer": None,
        "status": "pending",
        "priority": "normal",
        "after": [],
        "skill": None,
        "review": False,
        "created_at": stamp(3600),
        "updated_at": stamp(0),
        "claimed_at": None,
        "lease_expires_at": None,
        "result": None,
        "thread": [],
    }


def hub_of(binary, size):
    hub = Hub(binary, 0)
    board = {"schema": 1, "project": "default", "next_id": size + 1,
             "tasks": [task(n) for n in range(1, size + 1)]}
    with open(os.path.join(hub.home, "projects", "default", "board.json"), "w") as out:
        json.dump(board, out, indent=2)
    return hub


def get(connection, token, etag=None):
    """One GET of the board: milliseconds, status, body length, ETag."""
    headers = {"Authorization": f"Bearer {token}"}
    if etag:
        headers["If-None-Match"] = etag
    began = time.perf_counter()
    connection.request("GET", BOARD, headers=headers)
    response = connection.getresponse()
    body = response.read()
    elapsed = (time.perf_counter() - began) * 1000
    if response.status not in (200, 304):
        raise RuntimeError(f"board over HTTP: {response.status} {body[:200]!r}")
    return elapsed, response.status, len(body), response.getheader("ETag")


def measure(binary, size, repeats):
    hub = hub_of(binary, size)
    figures = {}
    try:
        figures["start"] = statistics.median(hub.measure(["--version"]) for _ in range(repeats))
        figures["cli"] = statistics.median(
            hub.measure(["--as", "dev", "--json", "board"]) for _ in range(repeats))
        served = Served(hub)
        connection = served.connection()
        try:
            first, _, length, etag = get(connection, served.token)
            figures["first"], figures["bytes"] = first, length
            figures["kept"] = statistics.median(
                get(connection, served.token)[0] for _ in range(repeats))
            changed = []
            for i in range(repeats):
                hub.run(["--as", "lead", "send", "--to", "dev", "--subject", f"Change {i}",
                         "--body", BODY])
                changed.append(get(connection, served.token)[0])
            figures["changed"] = statistics.median(changed)
            _, _, _, etag = get(connection, served.token)
            if etag:
                revalidated = []
                for _ in range(repeats):
                    elapsed, status, _, _ = get(connection, served.token, etag)
                    if status != 304:
                        raise RuntimeError(f"If-None-Match of the current ETag gave {status}")
                    revalidated.append(elapsed)
                figures["304"] = statistics.median(revalidated)
        finally:
            connection.close()
            served.close()
    finally:
        hub.close()
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", action="append", required=True,
                        help="a built baton; give it twice to compare two builds")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--sizes", default="1000,10000", help="open tasks, comma-separated")
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    print(f"A board read over HTTP, {os.cpu_count()} cores, median ms of {options.repeats}")
    print()
    columns = ["binary", "open tasks", "JSON KB", "process start", "CLI", "HTTP first",
               "HTTP unchanged", "unchanged / start", "HTTP after a change", "304"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    # Resolved now: a measurement runs in the private home's directory, gone after it.
    for binary in [os.path.abspath(binary) for binary in options.binary]:
        for size in sizes:
            f = measure(binary, size, options.repeats)
            revalidated = f"{f['304']:.2f}" if "304" in f else "–"
            print(f"| {os.path.basename(binary)} | {size:,} | {f['bytes'] / 1000:.0f} | "
                  f"{f['start']:.2f} | {f['cli']:.2f} | {f['first']:.2f} | {f['kept']:.2f} | "
                  f"{f['kept'] / f['start']:.2f} | {f['changed']:.2f} | {revalidated} |")
            sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
