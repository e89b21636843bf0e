//! `baton demo`: two agents walk one task through its whole life in a throwaway home, so a
//! newcomer sees the idea in ten seconds. It never touches the real hub.

use baton::board::action::ActionKind;
use std::path::Path;

use baton::board::task::{Priority, TaskId};
use baton::board::transition::Action;
use baton::error::Error;
use baton::home::Home;
use baton::registry;
use baton::session::{AfterEffects, BoardFilter, Changed, Hub, NewTask, Request, Session};
use baton::time;

use super::{Context, output, render};

/// Removes the throwaway home however the demo ends.
struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn run(context: &Context) -> Result<i32, Error> {
    let scratch = Scratch(std::env::temp_dir().join(format!(
        "baton-demo-{}-{}",
        std::process::id(),
        time::now().datetime().timestamp_millis()
    )));
    let workspace = scratch.0.join("workspace");
    std::fs::create_dir_all(&workspace)
        .map_err(|error| Error::invalid(format!("cannot make a scratch directory: {error}")))?;
    // The scratch hub's agents have no wake commands and nobody watches its desktop notes.
    let hub = Hub::new(
        Home::new(scratch.0.join("home")),
        context.hub.lock,
        AfterEffects::none(),
    );
    let open = |agent: &str| -> Result<Session, Error> {
        Session::open(
            hub.clone(),
            Request {
                agent: Some(agent),
                project: None,
                cwd: Some(&workspace),
            },
        )
    };
    output::line(&format!(
        "baton demo: claude and codex share a board in a throwaway home ({}).\n",
        scratch.0.display()
    ));
    // Each step prints the command line that does what it does, made from the same values,
    // so that the printed script, run word for word, plays the same story (a test runs it).
    for (agent, strengths) in [
        ("codex", "careful Rust, parsers"),
        ("claude", "planning, review"),
    ] {
        registry::update(&*hub.store, agent, time::now(), |record, _| {
            record.strengths = strengths.into();
            Ok(())
        })?;
        output::line(&format!(
            "claude$ baton agent add {agent} --strengths {}\n",
            quoted(strengths)
        ));
    }

    let task = NewTask {
        to: Some("codex".into()),
        subject: "Fix the date parser".into(),
        body: "Dates like 2026-02-30 are accepted; they should be refused.".into(),
        files: vec!["src/date.rs".into()],
        priority: Priority::High,
        review: true,
        ..NewTask::default()
    };
    let shown = send_line(&task);
    let id = step(
        "claude",
        &shown,
        open("claude")?.send(task)?,
        &open,
        &workspace,
    )?;
    let script: [(&str, ActionKind, &str); 9] = [
        ("codex", ActionKind::Claim, ""),
        (
            "codex",
            ActionKind::Ask,
            "Refuse, or clamp to the month end?",
        ),
        (
            "claude",
            ActionKind::Answer,
            "Refuse, with the bad date in the error.",
        ),
        ("codex", ActionKind::Claim, ""),
        (
            "codex",
            ActionKind::Review,
            "Invalid days refused; error names the date.",
        ),
        (
            "claude",
            ActionKind::RequestChanges,
            "Add a test for 29 February.",
        ),
        ("codex", ActionKind::Claim, ""),
        ("codex", ActionKind::Review, "Leap-year tests added."),
        ("claude", ActionKind::Approve, "Good."),
    ];
    for (agent, kind, words) in script {
        let changed = open(agent)?.act(id, Action::new(kind, words.into()))?;
        step(
            agent,
            &action_line(kind, id, words),
            changed,
            &open,
            &workspace,
        )?;
    }
    let session = open("claude")?;
    let views = session.list(&BoardFilter {
        all: true,
        ..BoardFilter::default()
    })?;
    output::line("The board at the end (baton board --all):");
    output::line(&render::board_table(
        &session.project.id,
        &views,
        session.now,
    ));
    output::line(&render::task_detail(&session.show(id)?, session.now));
    output::line(
        "That is baton. Try it for real (the README's tour): `baton agent add dev`, then \
         `baton --as you send --to dev --subject 'Fix the date parser'`, then \
         `baton --as dev inbox`.",
    );
    Ok(0)
}

/// The `send` command line that sends `task`.
fn send_line(task: &NewTask) -> String {
    let mut line = format!(
        "baton send --to {} --subject {}",
        task.to.as_deref().unwrap_or_default(),
        quoted(&task.subject)
    );
    if !task.body.is_empty() {
        line.push_str(&format!(" --body {}", quoted(&task.body)));
    }
    if !task.files.is_empty() {
        line.push_str(&format!(" --files {}", quoted(&task.files.join(","))));
    }
    if task.priority != Priority::default() {
        line.push_str(&format!(" --priority {}", task.priority));
    }
    if task.review {
        line.push_str(" --review");
    }
    line
}

/// The command line that takes action `kind` on task `id` with `words`, as the table of
/// actions spells its subcommand and the argument of its words.
fn action_line(kind: ActionKind, id: TaskId, words: &str) -> String {
    let row = kind.row();
    let mut line = format!("baton {} {}", row.command, id.0);
    if !words.is_empty() {
        line.push_str(&format!(" --{} {}", row.argument_name(), quoted(words)));
    }
    line
}

/// `text` as one word of a shell command line: bare when it needs no quoting, else in
/// single quotes (the demo's own words hold no single quote).
fn quoted(text: &str) -> String {
    let is_bare = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./,:@".contains(c));
    match is_bare {
        true => text.to_string(),
        false => format!("'{}'", text.replace('\'', "'\\''")),
    }
}

/// Prints one step: the command, what it did, and both inboxes.
fn step(
    agent: &str,
    shown: &str,
    changed: Changed,
    open: &dyn Fn(&str) -> Result<Session, Error>,
    _workspace: &Path,
) -> Result<TaskId, Error> {
    output::line(&format!("{agent}$ {shown}"));
    for line in render::changed(&changed).lines() {
        output::line(&format!("  {line}"));
    }
    for who in ["claude", "codex"] {
        let inbox = open(who)?.inbox()?;
        output::line(&format!("  {}", render::status_line(&inbox)));
    }
    output::line("");
    Ok(changed.task.task.id)
}
