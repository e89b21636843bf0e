//! A hostile or confused environment: a FIFO or a directory where a baton file should be,
//! junk in `BATON_LOCK_TIMEOUT`, a relative `BATON_HOME`, a deleted working directory, a
//! workspace that would capture everything, and a lock held by something that does not
//! sign it. baton answers each with a clear error and the right exit code, and nothing
//! waits forever: every run here is under a watchdog that kills it and fails the test.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::common::{Run, TestEnv, WATCHDOG, files_only, finish, run_guarded, spawn};

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A hub where every file named in the tests exists: two agents, a task, a message that
/// was read (so `mail.read.json` exists), and an activity log.
fn populated() -> TestEnv {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env.send("lead", "dev", "first", &["--no-wake"]);
    env.run("dev", &["msg", "--to", "lead", "hello"]).ok();
    env.run("lead", &["inbox"]).ok();
    for file in [
        "projects/default/board.json",
        "projects/default/project.json",
        "projects/default/mail.jsonl",
        "projects/default/mail.read.json",
        "projects/default/activity.jsonl",
        "projects/default/board.lock",
        "projects/default/mail.lock",
        "agents/lead.json",
        "agents/dev.json",
    ] {
        assert!(env.home().join(file).is_file(), "{file} exists");
    }
    env
}

/// Puts a FIFO at `relative` (keeping the real file aside), runs `check`, and puts the file
/// back.
fn with_fifo_at(env: &TestEnv, relative: &str, check: impl FnOnce(&Path)) {
    let path = env.home().join(relative);
    let aside = path.with_extension("aside");
    fs::rename(&path, &aside).unwrap();
    mkfifo(&path);
    check(&path);
    fs::remove_file(&path).unwrap();
    fs::rename(&aside, &path).unwrap();
}

#[track_caller]
fn assert_refused(run: &Run, path: &Path, what: &str) {
    let stderr = run.fails(4);
    let expected = format!("error: {} is a FIFO, not a regular file", path.display());
    assert!(stderr.contains(&expected), "{what}: {stderr}");
    assert!(stderr.contains("hint: "), "{what}: {stderr}");
}

/// Every command that needs the file refuses it with exit 4 naming it; every other one goes
/// on without it (exit 0, or 5 for `wait`); none hangs.
#[test]
fn a_fifo_at_any_baton_file_is_refused_naming_it_and_nothing_hangs() {
    if !files_only("puts a FIFO at each of the hub's files") {
        return;
    }
    let env = populated();
    let commands: &[&[&str]] = &[
        &["board"],
        &["inbox", "--peek"],
        &["send", "--to", "dev", "--subject", "more", "--no-wake"],
        &["show", "1"],
        &["status"],
        &["msg", "--to", "dev", "hi"],
        &["messages"],
        &["agents"],
        &["wait", "--timeout", "2"],
    ];
    // For each file, the commands that cannot do without it.
    let needed_by: &[(&str, &[&str])] = &[
        (
            "projects/default/board.json",
            &["board", "inbox", "send", "show", "status", "wait"],
        ),
        (
            "projects/default/project.json",
            &[
                "board", "inbox", "send", "show", "status", "msg", "messages", "agents", "wait",
            ],
        ),
        (
            "projects/default/mail.jsonl",
            &["inbox", "status", "msg", "messages", "wait"],
        ),
        (
            "projects/default/mail.read.json",
            &["inbox", "status", "messages", "wait"],
        ),
        ("projects/default/activity.jsonl", &["send"]),
        ("projects/default/board.lock", &["send"]),
        ("projects/default/mail.lock", &["msg"]),
        (
            "agents/lead.json",
            &[
                "board", "inbox", "send", "show", "status", "msg", "messages", "agents", "wait",
            ],
        ),
        ("agents/dev.json", &["send", "msg"]),
    ];
    for (relative, needing) in needed_by {
        with_fifo_at(&env, relative, |path| {
            for args in commands {
                let what = format!("{} with a FIFO at {relative}", args.join(" "));
                let run = run_guarded(&env, "lead", args, &[]);
                if needing.contains(&args[0]) {
                    assert_refused(&run, path, &what);
                } else if run.code == 4 {
                    // Reading it was not needed, but refusing it is right too.
                    assert_refused(&run, path, &what);
                } else {
                    let expected = if args[0] == "wait" { 5 } else { 0 };
                    run.fails(expected);
                }
            }

            // A hook answers, exit 0, with a note naming the file.
            let mut hook = env.command(&env.work());
            hook.args(["--as", "lead", "hook", "prompt", "--client", "claude"]);
            let run = finish(spawn(hook), &format!("hook prompt, FIFO at {relative}"));
            if needing.contains(&"inbox") {
                assert_eq!(run.code, 0, "{relative}: {}", run.stderr);
                let note: serde_json::Value = serde_json::from_str(&run.stdout)
                    .unwrap_or_else(|_| panic!("{relative}: a note, not {:?}", run.stdout));
                let text = note["systemMessage"].as_str().unwrap();
                assert!(
                    text.contains(&format!("{} is a FIFO", path.display())),
                    "{relative}: {text}"
                );
            } else {
                run.ok();
            }

            // The doctor names it as a failure, and goes on to its other checks.
            let mut doctor = env.command(&env.work());
            doctor.arg("doctor");
            let run = finish(spawn(doctor), &format!("doctor, FIFO at {relative}"));
            assert_eq!(run.code, 1, "{relative}: {}{}", run.stdout, run.stderr);
            assert!(
                run.stdout.lines().any(|line| line.starts_with("fail")
                    && line.contains(relative)
                    && line.contains("a FIFO")),
                "{relative}: {}",
                run.stdout
            );
            assert!(run.stdout.contains("clients"), "{}", run.stdout);
        });
    }
    // Nothing was lost on the way.
    let board = env.run("lead", &["--json", "show", "1"]).json();
    assert_eq!(board["subject"], "first", "{board}");
}

/// A command that meets a FIFO gives up at once, so it never sits on the board lock while
/// other writers wait for it. (`send` reads the board under the board lock; `context --add`
/// takes the same lock but does not read the board.)
#[test]
fn a_command_meeting_a_fifo_does_not_lock_out_other_writers() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = populated();
    with_fifo_at(&env, "projects/default/board.json", |path| {
        let mut stuck = env.command(&env.work());
        stuck
            .args(["--as", "lead", "send", "--to", "dev", "--subject", "more"])
            .args(["--no-wake"]);
        let mut stuck = spawn(stuck);
        // Go on once the send has either ended or is inside the board lock.
        let lock = fs::File::open(env.project_dir("default").join("board.lock")).unwrap();
        let started = Instant::now();
        while stuck.try_wait().unwrap().is_none() && started.elapsed() < WATCHDOG {
            match fs4::FileExt::try_lock(&lock) {
                Ok(()) => fs4::FileExt::unlock(&lock).unwrap(),
                Err(_) => break,
            }
            thread::sleep(Duration::from_millis(20));
        }
        let other = run_guarded(
            &env,
            "lead",
            &["context", "--add", "still writable"],
            &[("BATON_LOCK_TIMEOUT", "3")],
        );
        // Finished (or killed by the watchdog) before any assertion can leave it running.
        let stuck = finish(stuck, "send");
        other.ok();
        assert_refused(&stuck, path, "send");
    });
    let context = env.run("lead", &["context"]);
    assert!(
        context.ok().contains("still writable"),
        "{}",
        context.stdout
    );
    let board = env.board("default");
    assert_eq!(board["tasks"].as_array().unwrap().len(), 1, "{board}");
}

/// `watch` gives up on a FIFO board instead of waiting on it, and an archive file that is a
/// FIFO is refused when a command looks for an archived task.
#[test]
fn watch_and_the_archive_refuse_a_fifo_too() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = populated();
    with_fifo_at(&env, "projects/default/board.json", |path| {
        let mut watch = env.command(&env.work());
        watch.args(["--as", "lead", "watch"]);
        assert_refused(&finish(spawn(watch), "watch"), path, "watch");
    });

    env.run("dev", &["claim", "1"]).ok();
    env.run("dev", &["done", "1", "--result", "shipped"]).ok();
    env.run("lead", &["archive", "--older-than", "0"]).ok();
    let archive = env.project_dir("default").join("archive");
    let month = fs::read_dir(&archive)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            path.extension()
                .is_some_and(|extension| extension == "jsonl")
        })
        .expect("an archive file");
    let relative = month.strip_prefix(env.home()).unwrap().to_str().unwrap();
    env.run("lead", &["show", "1"]).ok();
    with_fifo_at(&env, relative, |path| {
        let run = run_guarded(&env, "lead", &["show", "1"], &[]);
        assert_refused(&run, path, "show of an archived task");
    });
    env.run("lead", &["show", "1"]).ok();
}

/// A bound project whose project.json is a FIFO is refused from its workspace, not left out
/// so that its commands land on `default`.
#[test]
fn a_fifo_project_json_does_not_send_its_workspace_to_default() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let api = env.project_beside("lead", "api");
    let path = env.project_dir("api").join("project.json");
    fs::rename(&path, path.with_extension("aside")).unwrap();
    mkfifo(&path);
    let mut command = env.command(&api);
    command.args([
        "--as",
        "lead",
        "send",
        "--to",
        "dev",
        "--subject",
        "for api",
        "--no-wake",
    ]);
    assert_refused(&finish(spawn(command), "send in api"), &path, "send in api");
    assert!(
        !env.board_path("default").exists(),
        "nothing went to the default board"
    );
}

#[test]
fn a_directory_at_board_json_is_stored_data_unreadable_exit_4() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let path = env.board_path("default");
    fs::create_dir_all(&path).unwrap();
    for args in [
        &["board"][..],
        &["send", "--to", "dev", "--subject", "x", "--no-wake"],
    ] {
        let run = run_guarded(&env, "lead", args, &[]);
        let stderr = run.fails(4);
        assert!(
            stderr.contains(&format!(
                "error: {} is a directory, not a regular file",
                path.display()
            )),
            "{stderr}"
        );
    }
    assert!(path.is_dir(), "left as it was");
}

/// A hook run with `BATON_LOCK_TIMEOUT` set to `value`: exit 0, and its answer.
fn hook_with_timeout(env: &TestEnv, value: &str) -> Run {
    let mut hook = env.command(&env.work());
    hook.args(["--as", "dev", "hook", "prompt", "--client", "claude"])
        .env("BATON_LOCK_TIMEOUT", value);
    let run = finish(spawn(hook), &format!("hook, BATON_LOCK_TIMEOUT={value}"));
    assert_eq!(run.code, 0, "a hook always exits 0: {}", run.stderr);
    run
}

fn mcp_with_timeout(env: &TestEnv, value: &str) -> Run {
    let mut mcp = env.command(&env.work());
    mcp.args(["--as", "dev", "mcp"])
        .env("BATON_LOCK_TIMEOUT", value);
    finish(spawn(mcp), &format!("mcp, BATON_LOCK_TIMEOUT={value}"))
}

#[test]
fn a_lock_timeout_is_seconds_from_0_to_3600_and_anything_else_is_refused() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env.send("lead", "dev", "waiting", &["--no-wake"]);
    for junk in ["1e300", "inf", "-1", "abc", "NaN", "3601"] {
        let vars = [("BATON_LOCK_TIMEOUT", junk)];
        let run = run_guarded(&env, "lead", &["status"], &vars);
        let stderr = run.fails(1);
        assert!(
            stderr.contains(&format!(
                "error: BATON_LOCK_TIMEOUT must be a number of seconds from 0 to 3600, not `{junk}`"
            )),
            "{junk}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{junk}: {stderr}");

        let hook = hook_with_timeout(&env, junk);
        let note: serde_json::Value = serde_json::from_str(&hook.stdout)
            .unwrap_or_else(|_| panic!("{junk}: a note, not {:?}", hook.stdout));
        assert!(
            note["systemMessage"]
                .as_str()
                .unwrap()
                .contains("BATON_LOCK_TIMEOUT must be a number"),
            "{junk}: {note}"
        );

        let mcp = mcp_with_timeout(&env, junk);
        assert!(
            mcp.fails(1).contains("BATON_LOCK_TIMEOUT must be a number"),
            "{junk}: {}",
            mcp.stderr
        );
        assert!(mcp.stdout.is_empty(), "no server started: {}", mcp.stdout);
    }
    for good in ["0", "2.5", ""] {
        let vars = [("BATON_LOCK_TIMEOUT", good)];
        run_guarded(&env, "lead", &["status"], &vars).ok();
        let hook = hook_with_timeout(&env, good);
        assert!(hook.stdout.contains("waiting"), "{good:?}: {}", hook.stdout);
        // With stdin closed at once, the server starts and ends quietly.
        mcp_with_timeout(&env, good).ok();
    }
}

#[test]
fn a_relative_baton_home_is_refused_and_makes_no_hub() {
    let env = TestEnv::new();
    let mut command = env.command(&env.work());
    command
        .env("BATON_HOME", "hub")
        .args(["--as", "lead", "status"]);
    let run = finish(spawn(command), "status, BATON_HOME=hub");
    let stderr = run.fails(1);
    assert!(
        stderr.contains("error: BATON_HOME must be an absolute path, not `hub`"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("BATON_HOME={}", env.work().join("hub").display())),
        "the hint suggests the absolute path: {stderr}"
    );

    let mut hook = env.command(&env.work());
    hook.env("BATON_HOME", "hub")
        .args(["--as", "lead", "hook", "prompt", "--client", "gemini"]);
    let run = finish(spawn(hook), "hook, BATON_HOME=hub");
    let note: serde_json::Value = serde_json::from_str(run.ok()).unwrap();
    assert!(
        note["systemMessage"]
            .as_str()
            .unwrap()
            .contains("BATON_HOME must be an absolute path"),
        "{note}"
    );
    assert!(
        !env.work().join("hub").exists(),
        "no hub made in the working directory"
    );

    // Empty counts as unset: the platform's data directory under the test's own HOME,
    // which a command on the files makes for the hub's state (on a database it holds none
    // of it, and nothing need be made).
    if !files_only("looks for the hub home's directory, made by a write of the files") {
        return;
    }
    let mut command = env.command(&env.work());
    command
        .env("BATON_HOME", "")
        .args(["--as", "lead", "status"]);
    finish(spawn(command), "status, BATON_HOME empty").ok();
    assert!(
        env.root
            .path()
            .join("user-home/.local/share/baton")
            .is_dir()
    );
}

/// Runs `baton ARGS…` from inside `dir` after deleting it.
fn run_in_deleted(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    fs::create_dir_all(dir).unwrap();
    // The test's environment, on a shell that deletes its directory and then runs baton.
    let template = env.command(dir);
    let mut shell = Command::new("sh");
    shell.current_dir(dir);
    for (key, value) in template.get_envs() {
        match value {
            Some(value) => shell.env(key, value),
            None => shell.env_remove(key),
        };
    }
    shell
        .args(["-c", r#"rmdir "$PWD" && exec "$0" "$@""#])
        .arg(crate::common::baton_bin())
        .args(args)
        .stdin(Stdio::null());
    finish(
        spawn(shell),
        &format!("{} from a deleted directory", args.join(" ")),
    )
}

#[test]
fn a_deleted_working_directory_is_an_error_unless_the_project_is_named() {
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    let api = env.project_beside("lead", "api");
    env.send("lead", "dev", "in default", &["--no-wake"]);

    let gone = api.join("gone");
    let run = run_in_deleted(&env, &gone, &["--as", "lead", "board"]);
    let stderr = run.fails(1);
    assert!(
        stderr.contains("error: the current directory no longer exists"),
        "{stderr}"
    );
    assert!(!stderr.contains("in default"), "{stderr}");
    assert!(
        run.stdout.is_empty(),
        "nothing routed to default: {}",
        run.stdout
    );

    // A project bound to no workspace can be named.
    let run = run_in_deleted(
        &env,
        &gone,
        &["--as", "lead", "--json", "board", "--project", "default"],
    );
    assert!(run.ok().contains("in default"), "{}", run.stdout);

    // A bound one cannot tell whether the caller is inside it.
    let run = run_in_deleted(&env, &gone, &["--as", "lead", "board", "--project", "api"]);
    let stderr = run.fails(1);
    assert!(
        stderr.contains(&format!(
            "project api is bound to {}",
            fs::canonicalize(&api).unwrap().display()
        )),
        "{stderr}"
    );

    // A hook whose client names a directory that does not exist says so, and exits 0.
    let mut hook = env.command(&env.work());
    hook.args(["--as", "dev", "hook", "prompt", "--client", "claude"])
        .stdin(Stdio::piped());
    let mut child = spawn(hook);
    let input = serde_json::json!({"cwd": gone.display().to_string()}).to_string();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let run = finish(child, "hook with a missing client cwd");
    let note: serde_json::Value = serde_json::from_str(run.ok()).unwrap();
    let text = note["systemMessage"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "working directory {} does not exist",
            gone.display()
        )),
        "{text}"
    );

    // Nor does one that names a file.
    let file = env.work().join("notes.txt");
    fs::write(&file, "not a directory").unwrap();
    let mut hook = env.command(&env.work());
    hook.args(["--as", "dev", "hook", "prompt", "--client", "claude"])
        .stdin(Stdio::piped());
    let mut child = spawn(hook);
    let input = serde_json::json!({"cwd": file.display().to_string()}).to_string();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let run = finish(child, "hook with a file as its client cwd");
    let note: serde_json::Value = serde_json::from_str(run.ok()).unwrap();
    let text = note["systemMessage"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "working directory {} is not a directory",
            file.display()
        )),
        "{text}"
    );
}

#[test]
fn a_workspace_of_root_or_the_home_directory_is_refused() {
    let env = TestEnv::new();
    let user_home = env.root.path().join("user-home");
    fs::create_dir_all(&user_home).unwrap();
    for (workspace, what) in [
        (std::path::PathBuf::from("/"), "the root directory"),
        (user_home.clone(), "your home directory"),
    ] {
        let workspace_text = workspace.to_str().unwrap();
        let run = run_guarded(
            &env,
            "lead",
            &[
                "project",
                "init",
                "--name",
                "wide",
                "--workspace",
                workspace_text,
            ],
            &[],
        );
        let stderr = run.fails(1);
        assert!(stderr.contains(what), "{stderr}");
        assert!(stderr.contains("hint: "), "{stderr}");
    }
    let list = env.run("lead", &["--json", "project", "list"]).json();
    assert!(!list.to_string().contains("wide"), "{list}");
    // A directory inside the home is a workspace like any other.
    let repo = user_home.join("src/api");
    fs::create_dir_all(&repo).unwrap();
    env.init_project("lead", "api", &repo);
}

/// The pid of a process that has exited (and been reaped).
fn exited_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn a_lock_held_by_an_unsigned_process_does_not_name_the_dead_recorded_pid() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["lead", "dev"]);
    env.send("lead", "dev", "x", &["--no-wake"]);
    let lock_path = env.project_dir("default").join("board.lock");
    let dead = exited_pid();
    fs::write(&lock_path, format!("{dead:<10}\n")).unwrap();
    // This process holds the lock without writing its pid, as flock(1) or a process that
    // inherited the lock would.
    let holder = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&lock_path)
        .unwrap();
    fs4::FileExt::lock(&holder).unwrap();
    let run = run_guarded(
        &env,
        "lead",
        &["send", "--to", "dev", "--subject", "y", "--no-wake"],
        &[("BATON_LOCK_TIMEOUT", "0.5")],
    );
    fs4::FileExt::unlock(&holder).unwrap();
    let stderr = run.fails(3);
    assert!(
        !stderr.contains(&format!("held by pid {dead}")),
        "the dead pid is not the holder: {stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "held by another process (pid {dead}, recorded as its holder, has exited)"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("gave up after 0.5s"), "{stderr}");
}
