//! Worktrees and landing across machines (SPEC sections 18.4 and 18.5's `--remote`): two
//! homes stand for two machines, the hub's serving its board (`baton serve`), the agent's
//! acting on it through `BATON_URL`. A bare repository is the remote both clone: the hub's
//! workspace is one clone, the agent's mapped clone another, and a third is someone else
//! pushing to `main` meanwhile.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::remote::{Agent, Hub, HubHome};
use crate::common::{self, TestEnv, eventually};
use crate::worktrees::{commit, subjects};

/// `git ARGS…` in `dir`, as nobody's configuration but its own: its stdout, trimmed.
#[track_caller]
fn git(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    common::git::git(env, dir, args, &[])
        .ok()
        .trim()
        .to_string()
}

/// The two machines and the repositories between them.
struct Machines {
    hub: Hub,
    agent: Agent,
    /// The remote both clone (`origin`).
    bare: PathBuf,
    /// The hub's workspace.
    workspace: PathBuf,
    /// The agent's clone, mapped to the project on its machine.
    clone: PathBuf,
    /// Somewhere else: someone who pushes to `main` by hand.
    other: PathBuf,
    _root: tempfile::TempDir,
}

/// Project `app` on the hub, its workspace a clone of the bare repository with worktrees
/// on against `origin`, set with `settings`; `alice` its human; the agent (`codex`) on
/// a machine of its own with a clone of its own mapped to `app`.
fn machines(settings: &[&str]) -> Machines {
    let home = HubHome::new();
    let env = &home.env;
    let root = tempfile::tempdir().unwrap();
    let bare = root.path().join("origin.git");
    std::fs::create_dir_all(&bare).unwrap();
    git(
        env,
        &bare,
        &["init", "--quiet", "--bare", "--initial-branch=main"],
    );
    let seed = root.path().join("seed");
    let clone_into = |env: &TestEnv, dir: &Path| {
        git(
            env,
            root.path(),
            &[
                "clone",
                "--quiet",
                &bare.to_string_lossy(),
                &dir.to_string_lossy(),
            ],
        );
    };
    clone_into(env, &seed);
    // What --copy brings is what git ignores (a copied file git saw would be a change).
    std::fs::write(seed.join(".gitignore"), ".env\n").unwrap();
    git(env, &seed, &["add", ".gitignore"]);
    commit(env, &seed, "README", "hello\n");
    git(env, &seed, &["push", "--quiet", "origin", "HEAD:main"]);

    let workspace = home.env.work().join("app");
    clone_into(env, &workspace);
    home.env
        .run_in(
            &workspace,
            "",
            &["project", "init", "--name", "app", "--human", "alice"],
        )
        .ok();
    let mut set = vec!["project", "set", "--worktrees", "on", "--remote", "origin"];
    set.extend_from_slice(settings);
    home.env.run_in(&workspace, "alice", &set).ok();
    let hub = home.serve();

    let agent = hub.agent();
    let clone = agent.env.work().join("app");
    clone_into(&hub.env, &clone);
    agent
        .run(&["project", "map", "app", &clone.to_string_lossy()])
        .ok();
    let other = root.path().join("other");
    clone_into(&hub.env, &other);
    Machines {
        hub,
        agent,
        bare,
        workspace,
        clone,
        other,
        _root: root,
    }
}

impl Machines {
    /// `baton --as alice ARGS…` in the hub's workspace.
    fn alice(&self, args: &[&str]) -> crate::common::Run {
        self.hub.env.run_in(&self.workspace, "alice", args)
    }

    /// `git ARGS…` in `dir` (see [`git`]).
    #[track_caller]
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        git(&self.hub.env, dir, args)
    }

    fn show(&self, id: &str) -> Value {
        self.alice(&["--json", "show", id]).json()
    }
}

#[test]
fn a_remote_agent_works_in_a_worktree_of_its_clone_and_landing_pushes_with_a_lease() {
    // The verify stands for someone pushing to main while the landing runs: the first time
    // it runs, it pushes a commit of theirs, so the lease on the tip the landing started
    // from is lost, and the landing must start again from the new tip.
    let racer_dir = tempfile::tempdir().unwrap();
    let racer = racer_dir.path().join("racer");
    let runs = racer_dir.path().join("runs");
    let verify = format!(
        "echo run >> {runs}; if [ ! -e {racer}/racer.txt ]; then \
         git -C {racer} pull --quiet --ff-only origin main && echo racing > {racer}/racer.txt \
         && git -C {racer} add racer.txt \
         && git -C {racer} -c user.name=Racer -c user.email=racer@example.com \
         commit --quiet -m \"racer's work\" && git -C {racer} push --quiet origin HEAD:main; fi",
        runs = runs.display(),
        racer = racer.display(),
    );
    let machines = machines(&[
        "--copy",
        ".env",
        "--setup",
        "touch SETUP_RAN",
        "--verify",
        &verify,
    ]);
    machines.git(
        racer_dir.path(),
        &[
            "clone",
            "--quiet",
            &machines.bare.to_string_lossy(),
            &racer.to_string_lossy(),
        ],
    );
    // An untracked file of the agent's clone, which --copy brings into its worktrees.
    std::fs::write(machines.clone.join(".env"), "SECRET=the agent's own\n").unwrap();
    std::fs::write(machines.workspace.join(".env"), "SECRET=the hub's\n").unwrap();

    machines
        .alice(&["send", "--to", "codex", "-s", "Add a feature"])
        .ok();
    let claimed = machines.agent.run_in(&machines.clone, &["claim", "1"]);
    let said = claimed.ok();
    let tree = machines
        .agent
        .env
        .home()
        .join("worktrees")
        .join("app")
        .join("T-1");
    assert!(
        tree.is_dir(),
        "no worktree at {}: {claimed:?}",
        tree.display()
    );
    let tree = tree.canonicalize().unwrap();
    assert!(
        said.contains(&tree.to_string_lossy().into_owned()),
        "{said}"
    );
    assert_eq!(
        machines.git(&tree, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "baton/T-1"
    );
    // A worktree of the agent's clone, not of the hub's workspace.
    let common = machines.git(
        &tree,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    );
    assert_eq!(
        Path::new(&common).canonicalize().unwrap(),
        machines.clone.join(".git").canonicalize().unwrap()
    );
    assert_eq!(
        std::fs::read_to_string(tree.join(".env")).unwrap(),
        "SECRET=the agent's own\n"
    );
    // The hub's setup is not run on the agent's machine, and the agent is told so.
    assert!(!tree.join("SETUP_RAN").exists());
    assert!(
        claimed.stderr.contains("setup was not run"),
        "{}",
        claimed.stderr
    );
    let shown = machines.show("1");
    assert_eq!(shown["worktree"]["path"], tree.to_string_lossy().as_ref());
    assert_eq!(shown["worktree"]["branch"], "baton/T-1");
    assert_eq!(shown["worktree"]["base"], "main");

    // In the worktree, a command resolves to the project through this machine's map.
    std::fs::write(tree.join("feature.txt"), "a feature\n").unwrap();
    let unsaved = machines.agent.run_in(&tree, &["review", "1"]);
    assert_ne!(unsaved.code, 0, "{unsaved:?}");
    assert!(unsaved.stderr.contains("feature.txt"), "{}", unsaved.stderr);
    assert_eq!(machines.show("1")["status"], "working");
    machines.git(&tree, &["add", "feature.txt"]);
    machines.git(&tree, &["commit", "--quiet", "-m", "the feature"]);
    let head = machines.git(&tree, &["rev-parse", "HEAD"]);
    machines.agent.run_in(&tree, &["review", "1"]).ok();
    // The branch is on the remote, and the hub holds the commit reviewed.
    assert_eq!(
        machines.git(&machines.bare, &["rev-parse", "refs/heads/baton/T-1"]),
        head
    );
    let shown = machines.show("1");
    assert_eq!(shown["status"], "review_requested");
    assert_eq!(shown["worktree"]["reviewed"], head.as_str());

    // Someone else pushes to main between the review and the approval.
    machines.git(
        &machines.other,
        &["pull", "--quiet", "--ff-only", "origin", "main"],
    );
    commit(&machines.hub.env, &machines.other, "other.txt", "theirs\n");
    machines.git(&machines.other, &["push", "--quiet", "origin", "HEAD:main"]);

    let approved = machines.alice(&["approve", "1"]);
    assert!(approved.ok().contains("landed on main"), "{approved:?}");
    // The lease was lost once (the racer pushed during the verify): the landing started
    // again from the new tip, and nothing of anyone's was lost.
    assert_eq!(
        subjects(&machines.hub.env, &machines.bare),
        [
            "Add a feature (T-1)",
            "racer's work",
            "change other.txt",
            "change README"
        ]
    );
    assert_eq!(std::fs::read_to_string(&runs).unwrap().lines().count(), 2);
    let files = machines.git(&machines.bare, &["ls-tree", "--name-only", "main"]);
    assert_eq!(
        files.lines().collect::<Vec<_>>(),
        [
            ".gitignore",
            "README",
            "feature.txt",
            "other.txt",
            "racer.txt"
        ]
    );
    let tip = machines.git(&machines.bare, &["rev-parse", "main"]);
    let shown = machines.show("1");
    assert_eq!(shown["status"], "completed");
    assert_eq!(shown["landed"]["commit"], tip.as_str());
    // The hub's checkout of main, which had nothing the remote's lacked, follows it; the
    // agent's worktree is its machine's to keep.
    assert_eq!(
        machines.git(&machines.workspace, &["rev-parse", "HEAD"]),
        tip
    );
    assert!(machines.workspace.join("racer.txt").exists());
    assert_eq!(
        machines.git(&machines.workspace, &["status", "--porcelain"]),
        "",
        "the hub's checkout shows the others' work as undone"
    );
    assert!(tree.join("feature.txt").exists());
}

/// A claim's body with `worktree` as sent by a hostile machine.
fn claim_with(machines: &Machines, worktree: Value) -> crate::common::http::Reply {
    machines.hub.served.post(
        "/api/v1/projects/app/tasks/1/claim",
        &machines.hub.token,
        &json!({ "worktree": worktree }),
    )
}

fn sent(path: &str, branch: &str) -> Value {
    json!({
        "path": path,
        "branch": branch,
        "base": "main",
        "base_commit": "a".repeat(40),
        "host": "elsewhere",
    })
}

#[test]
fn the_hub_refuses_a_worktree_that_could_not_be_the_tasks_and_changes_nothing() {
    let machines = machines(&[]);
    machines
        .alice(&["send", "--to", "codex", "-s", "Add a feature"])
        .ok();
    let before = machines.show("1");
    // An agent's machine with no clone mapped makes none, and is told how to map one.
    let unmapped = Agent::new(machines.hub.url(), machines.hub.token.clone());
    let refused = unmapped.run(&["--project", "app", "claim", "1"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused.stderr.contains("baton project map app"),
        "{}",
        refused.stderr
    );
    assert_eq!(machines.show("1"), before);
    let long = format!("/{}", "x".repeat(10 * 1024));
    let hostile = [
        ("another task's branch", sent("/work/T-1", "baton/T-2")),
        ("another task's directory", sent("/work/T-2", "baton/T-1")),
        ("a relative path", sent("work/T-1", "baton/T-1")),
        ("a path with `..`", sent("/work/../etc/T-1", "baton/T-1")),
        (
            "a control character",
            sent("/work/T-1\u{1b}[2J", "baton/T-1"),
        ),
        ("a line break", sent("/work/T-1\n/etc", "baton/T-1")),
        ("a 10 KB path", sent(&long, "baton/T-1")),
        ("a 10 KB branch", sent("/work/T-1", &long)),
        (
            "a 10 KB host",
            json!({"path": "/work/T-1", "branch": "baton/T-1", "base": "main",
                   "base_commit": "a".repeat(40), "host": long}),
        ),
        (
            "another base",
            json!({"path": "/work/T-1", "branch": "baton/T-1", "base": "release",
                   "base_commit": "a".repeat(40)}),
        ),
        (
            "no commit's id",
            json!({"path": "/work/T-1", "branch": "baton/T-1", "base": "main",
                   "base_commit": "HEAD; rm -rf /"}),
        ),
        (
            "a review already",
            json!({"path": "/work/T-1", "branch": "baton/T-1", "base": "main",
                   "base_commit": "a".repeat(40), "reviewed": "b".repeat(40)}),
        ),
    ];
    for (what, worktree) in hostile {
        let refused = claim_with(&machines, worktree);
        assert_eq!(refused.status, 400, "{what}: {}", refused.body);
        let error = refused.json()["error"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(!error.is_empty(), "{what}: {}", refused.body);
        assert!(
            !error.contains('\n') && !error.contains('\u{1b}') && error.len() < 400,
            "{what}: not one short line: {error}"
        );
        assert_eq!(machines.show("1"), before, "{what} changed the task");
    }

    // A good one is kept, and a later claim does not replace it.
    let kept = claim_with(&machines, sent("/elsewhere/one/T-1", "baton/T-1"));
    assert_eq!(kept.status, 200, "{}", kept.body);
    let path = |machines: &Machines| machines.show("1")["worktree"]["path"].clone();
    assert_eq!(path(&machines), "/elsewhere/one/T-1");
    let review = machines.hub.served.post(
        "/api/v1/projects/app/tasks/1/review",
        &machines.hub.token,
        &json!({ "reviewed": "not a commit" }),
    );
    assert_eq!(review.status, 400, "{}", review.body);
    assert_eq!(machines.show("1")["status"], "working");
    machines
        .hub
        .served
        .post(
            "/api/v1/projects/app/tasks/1/release",
            &machines.hub.token,
            &json!({"text": "someone else"}),
        )
        .ok();
    let again = claim_with(&machines, sent("/elsewhere/two/T-1", "baton/T-1"));
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(path(&machines), "/elsewhere/one/T-1");

    // Without a remote, the hub could not fetch a branch of the agent's machine: said.
    machines
        .alice(&["send", "--to", "codex", "-s", "Another"])
        .ok();
    machines.alice(&["project", "set", "--remote", ""]).ok();
    let warned = machines.agent.run_in(&machines.clone, &["claim", "2"]);
    warned.ok();
    assert!(
        warned.stderr.contains("names no remote"),
        "{}",
        warned.stderr
    );
}

#[test]
fn listen_makes_the_tasks_worktree_and_starts_its_wake_run_there() {
    let machines = machines(&[]);
    let wrote = machines.agent.env.root.path().join("ran-in");
    // The prompt is the command's last argument: `$0` of `sh -c`.
    let told = machines.agent.env.root.path().join("told");
    let script = format!(
        "printf '%s' \"$0\" > '{}'; pwd -P > '{}'",
        told.display(),
        wrote.display()
    );
    let _listen = machines
        .agent
        .spawn(&["listen", "--wake", "--", "/bin/sh", "-c", &script], false);
    machines
        .alice(&["send", "--to", "codex", "-s", "Add a feature"])
        .ok();
    let ran_in = eventually("the wake run", || {
        std::fs::read_to_string(&wrote)
            .ok()
            .filter(|text| text.ends_with('\n'))
    });
    let tree = machines.agent.env.home().join("worktrees/app/T-1");
    let tree = tree.canonicalize().expect("listen made the worktree");
    assert_eq!(ran_in.trim(), tree.to_string_lossy());
    let prompt = std::fs::read_to_string(&told).unwrap();
    assert!(
        prompt.contains("work in") && prompt.contains("branch baton/T-1"),
        "the wake prompt says where to work: {prompt}"
    );
    assert_eq!(
        machines.git(&tree, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "baton/T-1"
    );
    // The woken agent's claim there takes that worktree.
    machines.agent.run_in(&tree, &["claim", "1"]).ok();
    let shown = machines.show("1");
    assert_eq!(shown["worktree"]["path"], tree.to_string_lossy().as_ref());
}

#[test]
fn a_remote_agents_done_without_review_pushes_its_branch_and_the_hub_lands_it() {
    let machines = machines(&[]);
    machines
        .alice(&["send", "--to", "codex", "-s", "A small fix"])
        .ok();
    let claimed = machines.agent.run_in(&machines.clone, &["claim", "1"]);
    claimed.ok();
    // The project names its remote: nothing to warn of.
    assert!(
        !claimed.stderr.contains("names no remote"),
        "{}",
        claimed.stderr
    );
    let tree = machines.agent.env.home().join("worktrees/app/T-1");
    commit(&machines.hub.env, &tree, "fix.txt", "fixed\n");
    let done = machines
        .agent
        .run_in(&tree, &["done", "1", "--result", "fixed"]);
    assert!(done.ok().contains("landed on main"), "{done:?}");
    assert_eq!(
        subjects(&machines.hub.env, &machines.bare),
        ["A small fix (T-1)", "change README"]
    );
    assert_eq!(machines.show("1")["status"], "completed");
}
