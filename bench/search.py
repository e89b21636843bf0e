#!/usr/bin/env python3
"""Labels and search at scale (SPEC section 19): `baton board --all --search/--label` on a
project of 100 open tasks and 100,000 archived ones, on the files and on PostgreSQL.

    python3 bench/search.py --binary target/release/baton
    python3 bench/search.py --binary target/release/baton --store postgres://u@h/db
    python3 bench/search.py --binary target/release/baton --archived 20000 --repeats 3

The archive is written as baton writes it (`archive/<YYYY-MM>.jsonl`, twelve months, each
task about 600 bytes: a subject, a 300-byte body, one to three thread entries, zero to two
labels), then copied into the database with `baton store copy` (without --store, into a
throwaway cluster of tests/postgres/cluster.sh, run as root). Each search is a whole
`baton --json board --all …` process, start to exit; the figure is its median over
--repeats runs, beside the number of tasks it found. Nothing is asserted: the figures are
printed for people to read, and the machine's other load shows in them.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Hub, stamp  # noqa: E402
from postgres import Cluster, shown  # noqa: E402

WORDS = ("the parser lexer widget token column line newline test result caller fix add "
         "remove rename module crate build release review merge branch commit config "
         "server client request answer error message board task agent hook event stream "
         "store file lock write read cache index search label query filter page table").split()
LABELS = ["bug", "ui", "docs", "perf", "api", "infra"]

# What is searched for, and how many archived tasks hold it (placed at random).
RARE = "Zanzibar"           # in 10 bodies
SOME = "kumquat"            # in 1,000 thread entries
UNICODE = "Ünïcode"         # in 20 subjects
QUOTED = '"quoted"'         # in 20 bodies: JSON escapes its quotes
SECURITY = "security"       # a label on 50 tasks

SEARCHES = [
    ("a word in 10 bodies", ["--search", RARE.lower()]),
    ("a word in 1,000 threads", ["--search", SOME.upper()]),
    ("a word outside ASCII, in 20 subjects", ["--search", UNICODE.lower()]),
    ("words with quotes, in 20 bodies", ["--search", QUOTED]),
    ("a word in no task", ["--search", "xylophone"]),
    ("a label on 50 tasks", ["--label", SECURITY]),
    ("a label on 1 in 6 and a word in 1,000", ["--label", "bug", "--search", SOME]),
]


def without_password(url):
    """The URL without its password, and the password (None when it has none)."""
    scheme, rest = url.split("://", 1)
    authority, slash, path = rest.partition("/")
    user, at, hosts = authority.rpartition("@")
    if not at or ":" not in user:
        return url, None
    name, _, password = user.partition(":")
    return f"{scheme}://{name}@{hosts}{slash}{path}", password


def sentence(rng, count):
    return " ".join(rng.choice(WORDS) for _ in range(count))


def archived_task(n, rng, marks):
    body = sentence(rng, 45)[:300]
    subject = f"Task {n}: {sentence(rng, 6)}"
    thread = [{"at": stamp(86400), "by": "dev", "kind": "question", "text": sentence(rng, 12)}
              for _ in range(rng.randint(1, 3))]
    labels = sorted(set(rng.sample(LABELS, rng.randint(0, 2))))
    if n in marks["rare"]:
        body = f"{RARE} {body}"
    if n in marks["some"]:
        thread[0]["text"] += f" {SOME}"
    if n in marks["unicode"]:
        subject += f" {UNICODE}"
    if n in marks["quoted"]:
        body = f"a {QUOTED} word {body}"
    if n in marks["security"]:
        labels.append(SECURITY)
    return {
        "id": n, "subject": subject, "body": body, "files": [], "from": "lead", "to": "dev",
        "reviewer": None, "status": "completed", "priority": "normal", "after": [],
        "skill": None, "review": False, "created_at": stamp(90000), "updated_at": stamp(86400),
        "claimed_at": stamp(88000), "lease_expires_at": None, "result": "done",
        "thread": thread, "labels": labels,
    }


def write_archive(hub, archived, first_id):
    rng = random.Random(19)
    ids = range(first_id, first_id + archived)
    marks = {name: set(rng.sample(ids, min(count, archived))) for name, count in
             [("rare", 10), ("some", 1000), ("unicode", 20), ("quoted", 20), ("security", 50)]}
    directory = os.path.join(hub.home, "projects", "default", "archive")
    os.makedirs(directory, exist_ok=True)
    per_month = -(-archived // 12)
    for month in range(12):
        with open(os.path.join(directory, f"2025-{month + 1:02}.jsonl"), "w") as out:
            for n in ids[month * per_month:(month + 1) * per_month]:
                out.write(json.dumps(archived_task(n, rng, marks), ensure_ascii=False,
                                     separators=(",", ":")) + "\n")
    board = os.path.join(hub.home, "projects", "default", "board.json")
    with open(board) as file:
        state = json.load(file)
    state["next_id"] = first_id + archived
    with open(board, "w") as out:
        json.dump(state, out, indent=2)


def found(hub, args, env):
    proc = subprocess.run([hub.binary, "--as", "dev", "--json", "board", "--all"] + args,
                          cwd=hub.work, env=env, capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"board {args} failed: {proc.stderr.decode()}")
    return len(json.loads(proc.stdout))


def measure(hub, env, repeats):
    rows = []
    saved = hub.env
    hub.env = env
    try:
        for name, args in SEARCHES:
            count = found(hub, args, env)
            times = [hub.measure(["--as", "dev", "--json", "board", "--all"] + args)
                     for _ in range(repeats)]
            rows.append((name, count, statistics.median(times)))
        rows.append(("the board alone, no search (100 open)", 100,
                     statistics.median(hub.measure(["--as", "dev", "--json", "board"])
                                       for _ in range(repeats))))
    finally:
        hub.env = saved
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--store", help="a postgres:// URL (default: a throwaway cluster)")
    parser.add_argument("--archived", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--files-only", action="store_true")
    options = parser.parse_args()
    binary = os.path.abspath(options.binary)
    hub = Hub(binary, 100)
    began = time.perf_counter()
    write_archive(hub, options.archived, 101)
    size = sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(os.path.join(hub.home, "projects", "default",
                                                          "archive"))
               for name in names if name.endswith(".jsonl"))
    print(f"{options.archived:,} archived tasks, {size / 2**20:.1f} MiB of archive files, "
          f"written in {time.perf_counter() - began:.1f} s", flush=True)
    tables = [("files", measure(hub, hub.env, options.repeats))]
    cluster = None
    if not options.files_only:
        cluster = Cluster(options.store)
        try:
            began = time.perf_counter()
            # The password in PGPASSWORD: baton refuses one on its command line.
            bare, password = without_password(cluster.url)
            saved = hub.env
            hub.env = dict(saved, PGPASSWORD=password) if password else saved
            try:
                hub.run(["store", "copy", "--to", bare])
            finally:
                hub.env = saved
            print(f"copied to {shown(cluster.url)} in {time.perf_counter() - began:.1f} s",
                  flush=True)
            env = dict(hub.env, BATON_STORE=cluster.url)
            tables.append(("PostgreSQL", measure(hub, env, options.repeats)))
        finally:
            cluster.close()
    hub.close()
    names = [name for name, _ in tables]
    print(f"\n`baton --json board --all …`, {options.archived:,} archived tasks, median ms of "
          f"{options.repeats} runs (tasks found)\n")
    print("| search | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for place, (name, count, _) in enumerate(tables[0][1]):
        cells = [f"{rows[place][2]:.1f}" for _, rows in tables]
        print(f"| {name} ({count:,}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
