//! The README's five-minute tour, run word for word as rustdoc runs doc examples: every
//! `console` block under its heading, each `$` command in order in one shell (so `export`
//! and `cd` carry on), as a newcomer runs them in a fresh home with the installed `baton`
//! first on PATH. Each must exit 0 and print the lines the README shows under it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{TestEnv, baton_bin, exit_within, files_only};

/// One `$` command of the tour and the lines the README shows it printing.
#[derive(Debug)]
struct Step {
    command: String,
    shown: Vec<String>,
}

const TOUR: &str = "## A five-minute tour";

/// The steps of the `console` blocks between the tour's heading and the next `## `.
fn tour_steps(readme: &str) -> Vec<Step> {
    let start = readme.find(TOUR).expect("the README has its tour");
    let section = &readme[start + TOUR.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut steps: Vec<Step> = Vec::new();
    let mut in_console = false;
    let mut continued = false;
    for line in section.lines() {
        if line.starts_with("```") {
            in_console = !in_console && line.trim() == "```console";
            continued = false;
            continue;
        }
        if !in_console {
            continue;
        }
        if continued {
            let step = steps.last_mut().expect("a command it continues");
            step.command.push('\n');
            step.command.push_str(line);
        } else if let Some(command) = line.strip_prefix("$ ") {
            steps.push(Step {
                command: command.to_string(),
                shown: Vec::new(),
            });
        } else {
            let step = steps
                .last_mut()
                .unwrap_or_else(|| panic!("output before any command: {line:?}"));
            step.shown.push(line.trim_end().to_string());
            continue;
        }
        continued = line.ends_with('\\');
    }
    steps
}

/// Whether `shown` (where `…` stands for anything) is in `line`.
fn is_in(shown: &str, line: &str) -> bool {
    let mut rest = line;
    for piece in shown.split('…').filter(|piece| !piece.is_empty()) {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// Checks that the lines `shown` appear in `output`, in order; a line that is `…` alone
/// only says that more was printed.
fn check_shown(step: &Step, output: &str) {
    let lines: Vec<&str> = output.lines().collect();
    let mut next = 0;
    for shown in step.shown.iter().filter(|shown| shown.trim() != "…") {
        match (next..lines.len()).find(|&at| is_in(shown, lines[at])) {
            Some(at) => next = at + 1,
            None => panic!(
                "the README shows `{}` printing\n  {shown}\nbut (after what came before) it \
                 printed:\n{output}",
                step.command
            ),
        }
    }
}

/// A marker line the script prints after each command, with its exit status.
const MARK: &str = "@@readme-tour-step";

/// The tour as one shell script: each command, then the marker with its status.
fn script(steps: &[Step]) -> String {
    let mut script = String::from("exec 2>&1\n");
    for step in steps {
        script.push_str(&step.command);
        script.push_str(&format!("\nprintf '\\n{MARK} %s\\n' \"$?\"\n"));
    }
    script
}

/// Runs `steps` in order in one shell, as a new user: a home of its own with baton's data
/// where it goes by default under it, the binary under test first on PATH, and the
/// harness's clean environment otherwise (no identity, no hub elsewhere, no agent clients'
/// homes, no desktop notes). Each step's exit status and what it printed (stderr too).
fn run_fresh(env: &TestEnv, steps: &[Step]) -> Vec<(i32, String)> {
    let user_home = env.root.path().join("user-home");
    let workspace = env.root.path().join("workspace");
    fs::create_dir_all(&user_home).unwrap();
    fs::create_dir_all(&workspace).unwrap();
    let binary = baton_bin();
    let bin_dir = binary.parent().expect("the binary's directory");
    let path = std::env::join_paths(std::iter::once(PathBuf::from(bin_dir)).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let transcript = env.root.path().join("steps.out");
    let template = env.command(&workspace);
    let mut command = Command::new("sh");
    for (name, value) in template.get_envs() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    command
        .env_remove("BATON_HOME")
        .env_remove("BATON_LOCK_TIMEOUT")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", &user_home)
        .env("PATH", path)
        .current_dir(&workspace)
        .arg("-c")
        .arg(script(steps))
        .stdin(Stdio::null())
        .stdout(fs::File::create(&transcript).unwrap())
        .stderr(Stdio::null());
    let mut child = command.spawn().expect("sh runs");
    let status = exit_within(&mut child, Duration::from_secs(120), "the steps", || {
        fs::read_to_string(&transcript).unwrap_or_default()
    });
    assert!(status.success(), "the shell failed: {status:?}");

    let output = fs::read_to_string(&transcript).unwrap();
    let separator = format!("\n{MARK} ");
    let mut parts = output.split(separator.as_str());
    let mut said = parts
        .next()
        .expect("the first command's output")
        .to_string();
    let mut ran = Vec::new();
    for part in parts {
        let (code, rest) = part.split_once('\n').unwrap_or((part, ""));
        ran.push((code.trim().parse().expect("an exit status"), said));
        said = rest.to_string();
    }
    assert_eq!(ran.len(), steps.len(), "every command ran: {output}");
    ran
}

#[test]
fn the_readme_s_tour_runs_word_for_word_in_a_fresh_home() {
    if !files_only("the tour's doctor names the files it read, under ~/.local/share/baton") {
        return;
    }
    let readme = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("the README reads");
    let steps = tour_steps(&readme);
    assert!(
        steps.len() >= 20 && steps.iter().any(|step| step.command == "baton demo"),
        "the tour's blocks were found: {steps:#?}"
    );

    let env = TestEnv::new();
    let user_home = env.root.path().join("user-home");
    let said = run_fresh(&env, &steps);
    for (step, (code, output)) in steps.iter().zip(&said) {
        assert_eq!(
            *code, 0,
            "the README's `{}` exited {code}:\n{output}",
            step.command
        );
        check_shown(step, output);
    }
    // The tour worked in the default home, under the fresh user's.
    assert!(
        user_home
            .join(".local/share/baton/projects/api/board.json")
            .is_file()
    );
    assert!(!env.home().join("projects").exists());
}

#[test]
fn the_tour_reader_takes_commands_continuations_and_shown_lines() {
    let readme = "intro\n## A five-minute tour\n```console\n$ export A=1\n$ baton send \\\n    \
                  --to dev\nT-1 pending: x\n…\n```\n```sh\nnot run\n```\n## Next\n```console\n\
                  $ not in the tour\n```\n";
    let steps = tour_steps(readme);
    assert_eq!(steps.len(), 2, "{steps:#?}");
    assert_eq!(steps[0].command, "export A=1");
    assert_eq!(steps[1].command, "baton send \\\n    --to dev");
    assert_eq!(steps[1].shown, ["T-1 pending: x", "…"]);
    assert!(is_in("T-1 … x", "T-1    pending x"));
    assert!(!is_in("T-1 … y", "T-1    pending x"));
}

/// The demo's printed story: each `agent$ baton …` line as a step run as that agent.
fn demo_steps(demo: &str) -> Vec<Step> {
    demo.lines()
        .filter_map(|line| {
            let (agent, command) = line.split_once("$ ")?;
            (!agent.is_empty() && agent.chars().all(|c| c.is_ascii_lowercase())).then(|| Step {
                command: format!("BATON_AGENT={agent} {command}"),
                shown: Vec::new(),
            })
        })
        .collect()
}

/// A task's thread as `show` prints it, without the times: `codex claim`, …
fn thread(shown: &str) -> Vec<String> {
    shown
        .lines()
        .skip_while(|line| *line != "thread:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .map(|line| {
            let (_, entry) = line.trim().split_once(' ').expect("a time, then the entry");
            entry.to_string()
        })
        .collect()
}

#[test]
fn the_demo_prints_the_commands_it_ran_which_run_word_for_word() {
    if !files_only("the steps run in a home of files under the fresh user's") {
        return;
    }
    let env = TestEnv::new();
    let demo = env.run("", &["demo"]).ok().to_string();
    let mut steps = demo_steps(&demo);
    assert!(steps.len() >= 12, "{demo}");
    // The task is sent with its body, as the demo sent it.
    assert!(
        steps.iter().any(|step| step.command.contains(
            "send --to codex --subject 'Fix the date parser' --body 'Dates like 2026-02-30"
        )),
        "{steps:#?}"
    );
    steps.push(Step {
        command: "baton --as claude show 1".into(),
        shown: Vec::new(),
    });
    let ran = run_fresh(&env, &steps);
    for (step, (code, output)) in steps.iter().zip(&ran) {
        assert_eq!(*code, 0, "the demo's `{}` failed:\n{output}", step.command);
    }
    // Run by hand, its commands leave the task as the demo left it: the same body, result
    // and thread.
    let replayed = &ran.last().unwrap().1;
    assert!(!thread(&demo).is_empty(), "{demo}");
    assert_eq!(thread(replayed), thread(&demo), "{replayed}");
    for line in [
        "  status:   completed (high priority)",
        "  | Dates like 2026-02-30 are accepted; they should be refused.",
        "  result:   Leap-year tests added.",
    ] {
        assert!(
            demo.contains(line) && replayed.contains(line),
            "{line}\n{replayed}"
        );
    }
}

#[test]
fn the_demo_s_closing_advice_runs_in_a_fresh_home() {
    if !files_only("the steps run in a home of files under the fresh user's") {
        return;
    }
    let env = TestEnv::new();
    let demo = env.run("", &["demo"]).ok().to_string();
    let advice = demo
        .lines()
        .rfind(|line| line.starts_with("That is baton."))
        .expect("the demo's last words");
    let steps: Vec<Step> = advice
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|command| Step {
            command: command.to_string(),
            shown: Vec::new(),
        })
        .collect();
    assert_eq!(steps.len(), 3, "{advice}");
    let ran = run_fresh(&env, &steps);
    for (step, (code, output)) in steps.iter().zip(&ran) {
        assert_eq!(
            *code, 0,
            "the demo's advice `{}` failed:\n{output}",
            step.command
        );
    }
    let inbox = &ran[2].1;
    assert!(
        inbox.contains("T-1 [normal] to do: Fix the date parser"),
        "{inbox}"
    );
}
