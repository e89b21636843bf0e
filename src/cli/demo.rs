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
    registry::update(&*hub.store, "codex", time::now(), |record, _| {
        record.strengths = "careful Rust, parsers".into();
        Ok(())
    })?;
    registry::update(&*hub.store, "claude", time::now(), |record, _| {
        record.strengths = "planning, review".into();
        Ok(())
    })?;

    let sent = step(
        "claude",
        "baton send --to codex --subject 'Fix the date parser' --files src/date.rs --priority high --review",
        open("claude")?.send(NewTask {
            to: Some("codex".into()),
            subject: "Fix the date parser".into(),
            body: "Dates like 2026-02-30 are accepted; they should be refused.".into(),
            files: vec!["src/date.rs".into()],
            priority: Priority::High,
            review: true,
            ..NewTask::default()
        })?,
        &open,
        &workspace,
    )?;
    let id = sent;
    let script: Vec<(&str, String, Action)> = vec![
        (
            "codex",
            format!("baton claim {}", id.0),
            Action::from(ActionKind::Claim),
        ),
        (
            "codex",
            format!(
                "baton ask {} --body 'Refuse, or clamp to the month end?'",
                id.0
            ),
            Action::new(ActionKind::Ask, "Refuse, or clamp to the month end?".into()),
        ),
        (
            "claude",
            format!(
                "baton answer {} --body 'Refuse, with the bad date in the error.'",
                id.0
            ),
            Action::new(
                ActionKind::Answer,
                "Refuse, with the bad date in the error.".into(),
            ),
        ),
        (
            "codex",
            format!("baton claim {}", id.0),
            Action::from(ActionKind::Claim),
        ),
        (
            "codex",
            format!(
                "baton review {} --body 'Invalid days refused; error names the date.'",
                id.0
            ),
            Action::new(
                ActionKind::Review,
                "Invalid days refused; error names the date.".into(),
            ),
        ),
        (
            "claude",
            format!(
                "baton request-changes {} --body 'Add a test for 29 February.'",
                id.0
            ),
            Action::new(
                ActionKind::RequestChanges,
                "Add a test for 29 February.".into(),
            ),
        ),
        (
            "codex",
            format!("baton claim {}", id.0),
            Action::from(ActionKind::Claim),
        ),
        (
            "codex",
            format!("baton review {} --body 'Leap-year tests added.'", id.0),
            Action::new(ActionKind::Review, "Leap-year tests added.".into()),
        ),
        (
            "claude",
            format!("baton approve {} --body 'Good.'", id.0),
            Action::new(ActionKind::Approve, "Good.".into()),
        ),
    ];
    for (agent, shown, action) in script {
        let changed = open(agent)?.act(id, action)?;
        step(agent, &shown, changed, &open, &workspace)?;
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
        "That is baton. Try it for real: `baton --as you send --to someone --subject ...`, \
         then `baton --as someone inbox`.",
    );
    Ok(0)
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
