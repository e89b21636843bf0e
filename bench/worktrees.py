#!/usr/bin/env python3
"""Where the work lands (SPEC sections 18.4 and 18.5), measured with the release binary on
real git repositories made here.

1. What a worktree costs: a claim that makes one on a repository of 10,000 files beside a
   plain claim; landing a one-commit task (approve, no verify) beside a plain approve.
2. Conflicts, counted: N scripted agents (plain processes doing what agents do: claim,
   edit lines, commit, ask for review) on M tasks whose files overlap in part. Once in one
   shared checkout with no scopes, as agents are run today, and once with scopes (`send
   --touches`), worktrees on and landing with a verify; and, between the two, worktrees and
   landing without scopes. Counted: lines written, lines that
   reached main, lines lost, landings sent back, and main's verify after every commit that
   reached it.

    python3 bench/worktrees.py --binary target/release/baton
    python3 bench/worktrees.py --binary target/release/baton --quick
    python3 bench/worktrees.py --binary target/release/baton --agents 6 --tasks 18

An agent edits as an editor buffer or a whole-file write does: it reads the file, thinks
(a short random sleep), and writes the file back with its lines changed; it commits with
`git add -A`. Nothing is asserted; the figures are printed. Times are medians of runs and
carry the machine's other load: compare the rows of one run.
"""

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import table  # noqa: E402

FILES = 6          # source files of the conflicts repository
LINES = 80         # lines in each
PER_FILE = 4       # lines a task changes in each of its two files
MARK = re.compile(r"# (T\d+) (\d+)/(\d+)$")

VERIFY = r'''
import os, re, sys
mark = re.compile(r"# (T\d+) (\d+)/(\d+)$")
seen, want, bad = {}, {}, []
for name in sorted(os.listdir("src")):
    lines = open(os.path.join("src", name)).read().splitlines()
    if len(lines) != %d:
        bad.append(f"{name} has {len(lines)} lines")
    for line in lines:
        found = mark.search(line)
        if found:
            seen[found[1]] = seen.get(found[1], 0) + 1
            want[found[1]] = int(found[3])
for task, total in want.items():
    if seen[task] != total:
        bad.append(f"{task}: {seen[task]} of its {total} lines")
if bad:
    print("; ".join(bad))
    sys.exit(1)
''' % LINES


def git(cwd, *args, check=True):
    proc = subprocess.run(["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.com",
                           "-c", "commit.gpgsign=false", *args], cwd=cwd, capture_output=True,
                          text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {args[:2]} in {cwd}: {proc.stderr.strip()[:300]}")
    return proc


class Hub:
    """A private BATON_HOME and a repository to work on."""

    def __init__(self, binary):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="baton-bench-wt-")
        self.repo = os.path.join(self.dir, "repo")
        os.makedirs(self.repo)
        self.env = dict(os.environ, BATON_HOME=os.path.join(self.dir, "home"), BATON_NOTIFY="0",
                        GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
        for name in ("BATON_AGENT", "BATON_URL", "BATON_TOKEN", "BATON_STORE"):
            self.env.pop(name, None)
        os.environ.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")

    def baton(self, agent, *args, cwd=None, check=True):
        proc = subprocess.run([self.binary, "--as", agent, *args], cwd=cwd or self.repo,
                              env=self.env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
        if check and proc.returncode != 0:
            raise RuntimeError(f"baton {args[:2]}: {proc.stderr.strip()[:300]}")
        return proc

    def measure(self, agent, *args, cwd=None):
        started = time.perf_counter()
        self.baton(agent, *args, cwd=cwd)
        return (time.perf_counter() - started) * 1000

    def send(self, *args):
        out = self.baton("lead", "--json", "send", "--to", "dev", "--no-wake", *args).stdout
        return str(json.loads(out)["task"]["id"])

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def init_repo(repo, files):
    git(repo, "init", "-q", "-b", "main")
    for path, text in files.items():
        full = os.path.join(repo, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as out:
            out.write(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")


def costs(binary, runs):
    """Part 1: claim with a worktree on 10,000 files beside a plain claim; landing beside a
    plain approve."""
    hub = Hub(binary)
    try:
        init_repo(hub.repo, {f"src/d{d:03}/f{f:03}.txt": f"file {d} {f}\n"
                             for d in range(100) for f in range(100)})
        hub.baton("lead", "project", "init", "--name", "big")
        hub.baton("dev", "whoami")
        plain = [hub.send("--subject", f"plain {n}", "--review") for n in range(runs)]
        plain_claims = [hub.measure("dev", "claim", id) for id in plain]
        for id in plain:
            hub.baton("dev", "review", id)
        plain_approves = [hub.measure("lead", "approve", id) for id in plain]
        hub.baton("lead", "project", "set", "--worktrees", "on")
        tasks = [hub.send("--subject", f"worktree {n}", "--review") for n in range(runs)]
        claims, landings = [], []
        for n, id in enumerate(tasks):
            claims.append(hub.measure("dev", "claim", id))
            tree = os.path.join(hub.env["BATON_HOME"], "worktrees", "big", f"T-{id}")
            with open(os.path.join(tree, f"src/d{n:03}/f000.txt"), "a") as out:
                out.write("changed\n")
            git(tree, "commit", "-q", "-am", f"task {id}")
            hub.baton("dev", "review", id, cwd=tree)
            landings.append(hub.measure("lead", "approve", id))
        base_claim = statistics.median(plain_claims)
        base_approve = statistics.median(plain_approves)

        def row(name, figures, base):
            median = statistics.median(figures)
            return [name, f"{median:.1f}", f"{median / base:.1f}×" if base else "1×"]
        return [
            row("claim (no worktree)", plain_claims, None),
            row("claim, making a worktree of 10,000 files", claims, base_claim),
            row("approve (nothing to land)", plain_approves, None),
            row("approve, landing a one-commit task (squash, no verify)", landings,
                base_approve),
        ]
    finally:
        hub.close()


def plan(tasks):
    """Each task's two files and its lines in them: task t changes files t and t+1 (mod
    FILES), lines PER_FILE*t… in each: tasks share files, never lines."""
    return {t: [(f"src/m{t % FILES}.py", [PER_FILE * t + k for k in range(PER_FILE)]),
                (f"src/m{(t + 1) % FILES}.py", [PER_FILE * t + k for k in range(PER_FILE)])]
            for t in range(1, tasks + 1)}


def conflicts_repo(hub):
    files = {f"src/m{f}.py": "".join(f"value_{f}_{n} = 0\n" for n in range(LINES))
             for f in range(FILES)}
    init_repo(hub.repo, files)
    verify = os.path.join(hub.dir, "verify.py")
    with open(verify, "w") as out:
        out.write(VERIFY)
    return verify


def edit(tree, task, files, think):
    """Does task `task`'s edit in the checkout `tree` as an agent does: per file, read it,
    think, write it back with the task's lines changed. The lines written."""
    total = PER_FILE * len(files)
    written, index = 0, 0
    for path, lines in files:
        full = os.path.join(tree, path)
        with open(full) as source:
            text = source.read().splitlines()
        time.sleep(think())
        for line in lines:
            index += 1
            text[line] = f"value_{task}_{line} = {task}  # T{task} {index}/{total}"
            written += 1
        with open(full, "w") as out:
            out.write("\n".join(text) + "\n")
    return written


def commit(tree, message):
    """`git add -A` and commit, as agents do; a held index lock is waited out."""
    for _ in range(50):
        added = git(tree, "add", "-A", check=False)
        done = added.returncode == 0 and git(tree, "commit", "-q", "-m", message,
                                              check=False)
        if done and (done.returncode == 0 or "nothing to commit" in done.stdout):
            return
        time.sleep(0.05)


def agent(args):
    """One scripted agent (a process of its own): works its tasks, prints what it wrote."""
    hub = Hub.__new__(Hub)
    hub.binary, hub.repo, hub.dir = args.binary, args.repo, os.path.dirname(args.repo)
    hub.env = dict(os.environ, BATON_HOME=args.home, BATON_NOTIFY="0")
    rng = random.Random(args.seed)
    think = lambda: rng.uniform(0.05, 0.25)  # noqa: E731
    tasks = plan(args.total)
    mine = [int(t) for t in args.ids.split(",")]
    name = args.name
    written, sent_back = 0, 0
    todo = list(mine)
    while todo:
        for task in list(todo):
            claimed = hub.baton(name, "--json", "claim", str(task), check=False)
            if claimed.returncode != 0:
                continue  # held: another agent's task holds its files
            tree = json.loads(claimed.stdout)["task"].get("worktree") or {}
            tree = tree.get("path") or hub.repo
            while True:
                written += edit(tree, task, tasks[task], think)
                commit(tree, f"T-{task}")
                hub.baton(name, "review", str(task), cwd=tree)
                status = wait_decided(hub, name, task)
                if status != "changes_requested":
                    break
                # Sent back: start again from main, as an agent would.
                sent_back += 1
                git(tree, "reset", "-q", "--hard", "main")
                hub.baton(name, "claim", str(task), cwd=tree, check=False)
            todo.remove(task)
        time.sleep(0.05)
    print(json.dumps({"written": written, "sent_back": sent_back}))


def wait_decided(hub, name, task):
    while True:
        shown = json.loads(hub.baton(name, "--json", "show", str(task)).stdout)
        status = shown["task"]["status"] if "task" in shown else shown["status"]
        if status not in ("review_requested",):
            return status
        time.sleep(0.05)


def reviewer(hub, total):
    """Approves every task asked for review until all are completed; after each approval
    that moved main, runs the verify on main's tip. main's verify results."""
    verdicts = []
    while True:
        board = json.loads(hub.baton("lead", "--json", "board", "--all").stdout)
        tasks = board["tasks"] if isinstance(board, dict) else board
        done = sum(1 for task in tasks if task["status"] == "completed")
        if done >= total:
            return verdicts
        for task in tasks:
            if task["status"] == "review_requested":
                hub.baton("lead", "approve", str(task["id"]), check=False)
        time.sleep(0.05)


def verify_history(repo, verify, since):
    """The verify's verdict on every commit main took after `since`, oldest first."""
    log = git(repo, "rev-list", "--reverse", f"{since}..main").stdout.split()
    scratch = tempfile.mkdtemp(prefix="baton-bench-verify-")
    verdicts = []
    try:
        for commit_id in log:
            shutil.rmtree(scratch)
            os.makedirs(scratch)
            archive = subprocess.run(["git", "archive", commit_id], cwd=repo,
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x"], cwd=scratch, input=archive, check=True)
            ran = subprocess.run([sys.executable, verify], cwd=scratch, capture_output=True)
            verdicts.append(ran.returncode == 0)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return verdicts


def reached(repo):
    """Task lines on main's tip."""
    count = 0
    listed = git(repo, "ls-tree", "-r", "--name-only", "main", "src").stdout.split()
    for path in listed:
        text = git(repo, "show", f"main:{path}").stdout
        count += sum(1 for line in text.splitlines() if MARK.search(line))
    return count


def conflicts(binary, agents, total, way, seed):
    """Part 2, one way (`shared`, `worktrees` without scopes, `baton`): the counts."""
    hub = Hub(binary)
    try:
        verify = conflicts_repo(hub)
        start = git(hub.repo, "rev-parse", "main").stdout.strip()
        hub.baton("lead", "project", "init", "--name", "app")
        names = [f"agent{n}" for n in range(agents)]
        for name in names:
            hub.baton(name, "whoami")
        if way != "shared":
            hub.baton("lead", "project", "set", "--worktrees", "on", "--verify",
                      f"{sys.executable} {verify}")
        ids = {name: [] for name in names}
        for task, files in plan(total).items():
            name = names[(task - 1) % agents]
            extra = ["--touches", ",".join(path for path, _ in files)] if way == "baton" else []
            out = hub.baton("lead", "--json", "send", "--to", name, "--no-wake", "--subject",
                            f"change lines of {files[0][0]} and {files[1][0]}", "--review",
                            *extra).stdout
            ids[name].append(json.loads(out)["task"]["id"])
        started = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--binary", binary,
                                   "agent", "--name", name, "--home", hub.env["BATON_HOME"],
                                   "--repo", hub.repo, "--total", str(total), "--seed",
                                   str(seed + n), "--ids", ",".join(map(str, ids[name]))],
                                  env=hub.env, stdout=subprocess.PIPE, text=True)
                 for n, name in enumerate(names)]
        reviewer(hub, total)
        results = [json.loads(proc.communicate()[0].strip().splitlines()[-1]) for proc in procs]
        seconds = time.perf_counter() - started
        written = sum(result["written"] for result in results)
        sent_back = sum(result["sent_back"] for result in results)
        # What the last agent left uncommitted in the shared checkout is not on main.
        on_main = reached(hub.repo)
        wanted = PER_FILE * 2 * total
        verdicts = verify_history(hub.repo, verify, start)
        return {"written": written, "wanted": wanted, "on_main": on_main,
                "lost": wanted - on_main, "sent_back": sent_back,
                "commits": len(verdicts), "red": verdicts.count(False), "seconds": seconds}
    finally:
        hub.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3, help="runs of each way, part 2")
    sub = parser.add_subparsers(dest="mode")
    one = sub.add_parser("agent")  # a scripted agent, started by part 2
    for flag in ("--name", "--home", "--repo", "--ids"):
        one.add_argument(flag, required=True)
    one.add_argument("--total", type=int, required=True)
    one.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.binary = os.path.abspath(args.binary)
    if args.mode == "agent":
        agent(args)
        return
    runs = 5 if args.quick else 15
    rounds = 1 if args.quick else args.rounds
    table(f"What a worktree costs (median of {runs} runs)", ["what", "median ms", "vs plain"],
          costs(args.binary, runs))
    print()
    rows = []
    for name, way in (("one shared checkout, no scopes", "shared"),
                      ("worktrees and landing with verify, no scopes", "worktrees"),
                      ("baton: scopes, worktrees, landing with verify", "baton")):
        figures = [conflicts(args.binary, args.agents, args.tasks, way, 100 * r)
                   for r in range(rounds)]
        total = lambda key: sum(f[key] for f in figures)  # noqa: E731
        rows.append([name, str(total("wanted")), str(total("on_main")), str(total("lost")),
                     str(total("sent_back")),
                     f"{total('commits') - total('red')} of {total('commits')}",
                     f"{statistics.median(f['seconds'] for f in figures):.1f}"])
    table(f"Conflicts, counted: {args.agents} agents, {args.tasks} tasks of 2 files each "
          f"(each file shared by 4 tasks, no line by two), {rounds} runs",
          ["way", "lines written", "lines on main", "lines lost", "landings sent back",
           "main green after a commit", "median s"], rows)


if __name__ == "__main__":
    main()
