#!/usr/bin/env python3
"""How long `baton import roundtable` takes as the source grows: a board of N tasks
(10,000, 20,000 and 40,000 by default) carried onto an empty project, wall seconds of one
run each. Linear work doubles with N; work that grows with its square quadruples.

    python3 bench/import.py --binary target/release/baton
    python3 bench/import.py --binary target/release/baton --sizes 40000

Nothing here asserts a time: it prints figures for people to read.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

STATUSES = ["pending", "working", "input_required", "review_requested",
            "changes_requested", "completed", "failed", "canceled"]
# Names as roundtable installs spell them: most valid in baton, some made over.
AGENTS = ["claude", "codex", "Gemini CLI", "opencode", "Claude Code", "ada"]


def board(size):
    """A roundtable v1.1 board of `size` tasks, with the words some keep as keys."""
    tasks = []
    for n in range(1, size + 1):
        status = STATUSES[n % len(STATUSES)]
        task = {
            "id": f"rt-{n}",
            "subject": f"Task number {n}: make the widget frobnicate correctly",
            "body": "A body of ordinary length that says what is wanted and why it matters.",
            "from": AGENTS[n % len(AGENTS)],
            "to": AGENTS[(n + 1) % len(AGENTS)],
            "status": status,
            "skill": "rust" if n % 3 == 0 else "",
            "created": "2026-11-01T09:00:00Z",
            "updated": "2026-11-02T09:00:00Z",
            "files": ["src/widget.rs"],
            "project": "api",
        }
        if status == "input_required":
            task["question"] = "which one?"
        if status == "completed":
            task["result"] = "done"
        tasks.append(task)
    return {"version": "1.1", "tasks": tasks}


def measure(binary, size):
    """Wall seconds, CPU seconds (user and system) and peak RSS in MiB of one import of a
    `size`-task board into a fresh home. CPU time tells the work apart from a busy
    machine's waiting."""
    root = tempfile.mkdtemp(prefix="baton-import-bench-")
    try:
        home = os.path.join(root, "home")
        source = os.path.join(root, "board.json")
        with open(source, "w") as out:
            json.dump(board(size), out)
        env = dict(os.environ, BATON_HOME=home, BATON_NOTIFY="0")
        for name in ("BATON_AGENT", "BATON_URL", "BATON_PROJECT"):
            env.pop(name, None)
        started = time.perf_counter()
        proc = subprocess.Popen([binary, "--as", "ada", "import", "roundtable", source],
                                cwd=root, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise RuntimeError(f"import of {size} tasks exited {code}")
        return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="target/release/baton")
    parser.add_argument("--sizes", default="10000,20000,40000",
                        help="comma-separated task counts")
    options = parser.parse_args()
    binary = os.path.abspath(options.binary)
    print(f"`baton import roundtable`, one run each: "
          f"{subprocess.check_output([binary, '--version'], text=True).strip()}, "
          f"{os.cpu_count()} cores")
    print()
    print("| tasks | wall s | CPU s | peak RSS MiB |")
    print("|---|---|---|---|")
    for size in (int(size) for size in options.sizes.split(",")):
        wall, cpu, peak = measure(binary, size)
        print(f"| {size:,} | {wall:.2f} | {cpu:.2f} | {peak:.0f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
