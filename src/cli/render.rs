//! Human renderings of results. They may change between versions; `--json` is the stable
//! form for scripts.

use std::fmt::Write;
use std::io;

use baton::activity::ActivityRecord;
use baton::board::delivery::{Delivery, DeliveryState};
use baton::board::inbox::Reason;
use baton::mail::{Message, MessageType};
use baton::plural;
use baton::session::{Archived, Changed, Inbox, Mail, Sent, TaskView};
use baton::text::{after_label, framed, inline};
use baton::time::{self, Timestamp};

/// One line saying what a change did, plus who now has the task.
pub fn changed(changed: &Changed) -> String {
    let view = &changed.task;
    let task = &view.task;
    let mut text = format!("{} {}: {}", task.id, task.status, inline(&task.subject));
    match (&view.turn, view.reason) {
        (Some(owner), Some(reason)) => {
            let _ = write!(
                text,
                "\n  now in {}'s inbox ({})",
                inline(owner),
                reason.what_to_do()
            );
        }
        _ if !view.blocked_by.is_empty() => {
            let _ = write!(
                text,
                "\n  blocked until {} completed",
                ids(&view.blocked_by)
            );
        }
        _ if view.held_by.is_some() => {
            let holder = view.held_by.as_ref().map(|held| held.holding());
            let _ = write!(
                text,
                "\n  held: {}; it enters {}'s inbox when that ends",
                holder.unwrap_or_default(),
                inline(&task.to)
            );
        }
        _ if task.status.is_open() => {
            let _ = write!(text, "\n  {} is on it", inline(&task.to));
        }
        _ => {}
    }
    if let Some(landed) = &task.landed {
        let base = task
            .worktree
            .as_ref()
            .map_or("its base", |tree| tree.base.as_str());
        let short = landed.commit.get(..10).unwrap_or(&landed.commit);
        let _ = write!(text, "\n  landed on {} as {}", inline(base), inline(short));
    } else if let Some(place) = task.where_to_work() {
        let _ = write!(text, "\n  {place}");
    }
    if !changed.notifications.is_empty() {
        let told: Vec<String> = changed
            .notifications
            .iter()
            .map(|delivery| inline(&delivery.agent).to_string())
            .collect();
        let _ = write!(text, "\n  baton told {}", told.join(" and "));
    }
    for agent in &changed.unreachable {
        let _ = write!(
            text,
            "\n  {} has no wake command and no live session: it will see {} at its next prompt",
            inline(&agent.agent),
            ids(&agent.tasks)
        );
    }
    if let Some(skill) = &changed.routed_by_skill {
        let _ = write!(
            text,
            "\n  chose {} for skill `{}` (fewest open tasks, then most recently seen); \
             pass --to NAME to choose yourself",
            inline(&task.to),
            inline(skill)
        );
    }
    text
}

fn ids(ids: &[baton::board::task::TaskId]) -> String {
    ids.iter()
        .map(|id| id.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The marks shown beside a task in lists.
fn marks(view: &TaskView, now: Timestamp) -> String {
    let mut marks = Vec::new();
    if !view.blocked_by.is_empty() {
        marks.push(format!("blocked by {}", ids(&view.blocked_by)));
    }
    if let Some(holder) = &view.held_by {
        marks.push(format!("held: {}", holder.holding()));
    }
    if view.stalled {
        marks.push("STALLED".to_string());
    }
    if view.task.status.is_open()
        && let Some(delivery) = &view.task.delivery
        && delivery.unseen_for(now).is_some()
    {
        marks.push(format!("unseen {}", time::age(delivery.since, now)));
    }
    if let (Some(owner), Some(reason)) = (&view.turn, view.reason)
        && reason != Reason::Assigned
    {
        if let Reason::DependencyEnded { .. } = reason {
            marks.push(reason.what_to_do().into_owned());
        }
        marks.push(format!("waiting for {}", inline(owner)));
    }
    if view.task.status.is_open()
        && let Some(until) = view.task.lease_expires_at
        && !view.stalled
    {
        marks.push(format!("lease {} left", time::age(now, until)));
    }
    if view.archived {
        marks.push("archived".to_string());
    }
    if marks.is_empty() {
        String::new()
    } else {
        format!("  [{}]", marks.join("; "))
    }
}

/// The board as a table: id, status, priority, from → to, age, subject, marks.
pub fn board_table(project: &str, views: &[TaskView], now: Timestamp) -> String {
    if views.is_empty() {
        return format!("project {project}: no tasks to show (add --all for finished ones)");
    }
    let who: Vec<String> = views
        .iter()
        .map(|view| format!("{} → {}", inline(&view.task.from), inline(&view.task.to)))
        .collect();
    let who_width = who
        .iter()
        .map(|text| text.chars().count())
        .max()
        .unwrap_or(0)
        .max(9);
    let mut text = format!("project {project}\n");
    let _ = writeln!(
        text,
        "{:<6} {:<17} {:<6} {:<who_width$} {:>4}  SUBJECT",
        "ID", "STATUS", "PRI", "FROM → TO", "AGE"
    );
    for (view, who) in views.iter().zip(&who) {
        let task = &view.task;
        let _ = writeln!(
            text,
            "{:<6} {:<17} {:<6} {:<who_width$} {:>4}  {}{}{}",
            task.id.to_string(),
            task.status.as_str(),
            task.priority.as_str(),
            who,
            time::age(task.created_at, now),
            inline(&task.subject),
            hashed(&task.labels),
            marks(view, now)
        );
    }
    text
}

/// A task's labels after its subject in a list: `  #bug #ui`; nothing for none.
fn hashed(labels: &[String]) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let tags: Vec<String> = labels
        .iter()
        .map(|label| format!("#{}", inline(label)))
        .collect();
    format!("  {}", tags.join(" "))
}

/// One task in full, with its thread.
pub fn task_detail(view: &TaskView, now: Timestamp) -> String {
    let task = &view.task;
    let mut text = format!(
        "{} {}{}\n",
        task.id,
        inline(&task.subject),
        marks(view, now)
    );
    let _ = writeln!(
        text,
        "  status:   {} ({} priority)",
        task.status, task.priority
    );
    let _ = write!(
        text,
        "  from:     {}  to: {}",
        inline(&task.from),
        inline(&task.to)
    );
    // A reviewer is named only where a review applies: otherwise it is only the sender.
    if task.involves_review() {
        let _ = write!(text, "  reviewer: {}", inline(task.reviewer()));
    }
    text.push('\n');
    if let Some(owner) = &view.turn {
        let _ = writeln!(text, "  turn:     {}", inline(owner));
    }
    if let Some(delivery) = &task.delivery {
        let _ = writeln!(text, "  delivery: {}", delivery_line(delivery, now));
    }
    if !task.after.is_empty() {
        let _ = writeln!(text, "  after:    {}", ids(&task.after));
    }
    if !task.files.is_empty() {
        let _ = writeln!(text, "  files:    {}", files(&task.files));
    }
    if !task.touches.is_empty() {
        let _ = writeln!(text, "  touches:  {}", files(&task.touches));
    }
    if !task.labels.is_empty() {
        let _ = writeln!(text, "  labels:   {}", files(&task.labels));
    }
    if !view.reservations.is_empty() {
        let held: Vec<String> = view
            .reservations
            .iter()
            .map(|reservation| inline(&reservation.pattern).to_string())
            .collect();
        let _ = writeln!(
            text,
            "  reserved: {} by {}",
            held.join(", "),
            inline(&task.to)
        );
    }
    if let Some(place) = task.where_to_work() {
        let _ = writeln!(text, "  worktree: {place}");
    }
    if task.review {
        let _ = writeln!(text, "  review:   required");
    }
    let _ = writeln!(
        text,
        "  created:  {} ({} ago)",
        task.created_at,
        time::age(task.created_at, now)
    );
    if let Some(origin) = &task.imported {
        // The id and project are the source's words.
        let _ = writeln!(text, "  imported: from {}", inline(&origin.to_string()));
    }
    if let Some(result) = &task.result {
        // One line lines up with the fields above; more go below, framed.
        let label = if baton::text::is_multiline(result) {
            "  result:"
        } else {
            "  result:  "
        };
        let _ = write!(text, "{label}{}", after_label(result, "    | "));
    }
    if !task.body.is_empty() {
        let _ = write!(text, "\n{}", framed(&task.body, "  | "));
    }
    if !task.thread.is_empty() {
        let _ = writeln!(text, "\nthread:");
        for entry in &task.thread {
            let _ = write!(
                text,
                "  {} {} {}{}",
                entry.at,
                inline(&entry.by),
                entry.kind.entry().replace('_', " "),
                if entry.text.is_empty() {
                    "\n".to_string()
                } else {
                    format!(":{}", after_label(&entry.text, "    | "))
                }
            );
        }
    }
    text
}

/// How far the last hand-over got (SPEC section 11): "to codex, woken 3m ago (queued 12m
/// ago)". Agent names are checked names: nothing here is free text.
pub fn delivery_line(delivery: &Delivery, now: Timestamp) -> String {
    let queued = format!("queued {} ago", time::age(delivery.since, now));
    let how_far = match (delivery.state, delivery.woken_at, delivery.seen_at) {
        (DeliveryState::Queued, _, _) => queued,
        (DeliveryState::Woken, Some(woken), _) => {
            format!("woken {} ago ({queued})", time::age(woken, now))
        }
        (DeliveryState::Woken, None, _) => format!("woken ({queued})"),
        (DeliveryState::Seen, _, Some(seen)) => format!("seen {} ago", time::age(seen, now)),
        (DeliveryState::Seen, _, None) => "seen".to_string(),
        (DeliveryState::Acted, _, _) => "acted".to_string(),
    };
    format!("to {}, {how_far}", inline(&delivery.to))
}

/// A list of file names, each on the line it is shown on.
pub fn files(files: &[String]) -> String {
    files
        .iter()
        .map(|file| inline(file).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The inbox, written out a task at a time (it can run to thousands).
pub fn inbox(out: &mut dyn io::Write, inbox: &Inbox, now: Timestamp) -> io::Result<()> {
    if inbox.is_empty() {
        return writeln!(
            out,
            "inbox of {} in project {}: nothing waits for you",
            inbox.agent, inbox.project
        );
    }
    write!(
        out,
        "inbox of {} in project {}: {}\n\n",
        inbox.agent,
        inbox.project,
        waiting(inbox)
    )?;
    for entry in &inbox.tasks {
        out.write_all(entry.describe(now, None).as_bytes())?;
        out.write_all(b"\n")?;
    }
    if !inbox.messages.is_empty() {
        out.write_all(b"unread messages:\n")?;
        for message in &inbox.messages {
            out.write_all(message_entry(message, now).as_bytes())?;
        }
    }
    Ok(())
}

/// "2 tasks and 1 unread message".
fn waiting(inbox: &Inbox) -> String {
    let tasks = plural::count(inbox.task_count(), "task");
    let messages = plural::count(inbox.messages.len(), "unread message");
    match (inbox.tasks.is_empty(), inbox.messages.is_empty()) {
        (false, true) => tasks,
        (true, false) => messages,
        _ => format!("{tasks} and {messages}"),
    }
}

/// A message: who wrote it, when, its type unless plain text, and its words.
pub fn message_entry(message: &Message, now: Timestamp) -> String {
    let mut text = format!("  #{} from {}", message.seq, inline(&message.from));
    if message.is_broadcast() {
        text.push_str(" to everyone");
    } else {
        let _ = write!(text, " to {}", inline(&message.to));
    }
    let _ = write!(text, ", {} ago", time::age(message.at, now));
    if message.kind != MessageType::Text {
        let _ = write!(text, " [{}]", message.kind);
    }
    let body = message.body.trim();
    if message.summary.is_empty() || message.summary == body {
        text.push(':');
        text.push_str(&after_label(body, "    | "));
    } else {
        let _ = write!(
            text,
            ": {}\n{}",
            inline(&message.summary),
            framed(body, "    | ")
        );
    }
    text
}

/// `msg`: what was sent and who has it now.
pub fn sent(sent: &Sent) -> String {
    let message = &sent.message;
    let to: Vec<String> = sent
        .arrivals
        .iter()
        .map(|delivery| inline(&delivery.agent).to_string())
        .collect();
    format!(
        "message #{} ({}) sent in project {}; now in the inbox of {}",
        message.seq,
        message.kind,
        sent.project,
        to.join(", ")
    )
}

/// `messages`: the caller's mail, unread ones marked.
pub fn mail(mail: &Mail, now: Timestamp) -> String {
    if mail.messages.is_empty() {
        return format!(
            "messages of {} in project {}: none unread (--all shows the rest)",
            mail.agent, mail.project
        );
    }
    let unread = mail.messages.iter().filter(|entry| entry.unread).count();
    let mut text = format!(
        "messages of {} in project {}: {}, {unread} unread\n",
        mail.agent,
        mail.project,
        plural::count(mail.messages.len(), "message")
    );
    for entry in &mail.messages {
        let line = message_entry(&entry.message, now);
        if entry.unread {
            text.push('*');
            text.push_str(&line[1..]);
        } else {
            text.push_str(&line);
        }
    }
    text
}

/// `status`: one line.
pub fn status_line(inbox: &Inbox) -> String {
    if inbox.is_empty() {
        return format!(
            "baton: nothing waits for {} in {}",
            inbox.agent, inbox.project
        );
    }
    let items: Vec<String> = inbox
        .tasks
        .iter()
        .take(5)
        .map(|entry| format!("{} {}", entry.task.id, entry.reason.what_to_do()))
        .collect();
    let more = inbox.task_count().saturating_sub(items.len());
    let more = if more > 0 {
        format!("; +{more} more")
    } else {
        String::new()
    };
    let items = if items.is_empty() {
        String::new()
    } else {
        // Items are parted by semicolons: a reason may hold a comma of its own
        // ("waits on T-6, which was canceled").
        format!(" ({}{more})", items.join("; "))
    };
    format!(
        "baton: {} for {} in {}{items}; run `baton inbox`",
        waiting(inbox),
        inbox.agent,
        inbox.project,
    )
}

/// An activity record as `log` prints it: its stored time, then [`activity_words`].
pub fn activity_line(record: &ActivityRecord) -> String {
    format!("{} {}", record.at, activity_words(record))
}

/// An activity record without its time: who did what to which task, and their words (for
/// a face that shows the time its own way, as `watch` does).
pub fn activity_words(record: &ActivityRecord) -> String {
    let mut text = format!("{} {}", inline(&record.actor), record.action);
    if let Some(task) = record.task {
        let _ = write!(text, " {task}");
    }
    match (record.from_status, record.to_status) {
        (Some(from), Some(to)) => {
            let _ = write!(text, " {from} → {to}");
        }
        (None, Some(to)) => {
            let _ = write!(text, " → {to}");
        }
        _ => {}
    }
    if let Some(words) = &record.text {
        let _ = write!(text, ": {}", inline(words));
    }
    text
}

pub fn archived(archived: &Archived) -> String {
    let verb = if archived.dry_run {
        "would move"
    } else {
        "moved"
    };
    if archived.tasks.is_empty() {
        return format!("project {}: no finished task to archive", archived.project);
    }
    format!(
        "project {}: {verb} {} to the archive: {}",
        archived.project,
        plural::count(archived.tasks.len(), "finished task"),
        ids(&archived.tasks)
    )
}
