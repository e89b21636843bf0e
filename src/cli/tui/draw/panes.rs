//! The panes beside the lists: the selected task with its thread and delivery, the
//! viewer's messages, the agents matrix and the activity feed.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use super::super::cells::{self, shown};
use super::super::state::App;
use super::{bold, dim, line};
use crate::cli::{agents, diff, render};
use baton::text::inline;
use baton::time;

/// At most this many rows of a task (its diff, above all) are drawn; the rest are counted.
const MOST_ROWS: usize = 5000;

/// At most this many rows of an activity record are drawn: a feed of lines, whose whole
/// words `baton log` and the task pane show.
const ACTIVITY_ROWS: usize = 3;

/// Multi-line text (escaped by its rendering) as the rows it takes at `width`, each line
/// wrapped with its frame.
pub(super) fn rows_of(text: &str, width: usize) -> Vec<String> {
    text.lines()
        .flat_map(|line| cells::wrap(line, width))
        .collect()
}

/// The selected task with its whole thread and delivery, as `baton show` prints it.
pub(super) fn draw_task(frame: &mut Frame, app: &App, area: Rect) {
    let block = Block::new().borders(Borders::TOP).title(" task ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(view) = app.selected_view() else {
        frame.render_widget(Paragraph::new(line("no task selected")), inner);
        return;
    };
    let mut text = render::task_detail(view, app.snapshot.now);
    let shown_diff = app
        .diff
        .as_ref()
        .filter(|shown| shown.task == view.task.id && view.task.worktree.is_some());
    if let Some(shown) = shown_diff {
        text.push_str("\ndiff:\n");
        match &shown.read {
            Ok(diff) => text.push_str(&diff::words(diff)),
            Err(error) => text.push_str(&format!("  {}\n", inline(error))),
        }
    }
    let mut rows = rows_of(&text, usize::from(inner.width));
    if rows.len() > MOST_ROWS {
        let more = rows.len() - MOST_ROWS;
        rows.truncate(MOST_ROWS);
        rows.push(format!(
            "… {} more rows: `baton diff {}` shows them all",
            more, view.task.id
        ));
    }
    let fits = usize::from(inner.height);
    let first = app.scroll.min(rows.len().saturating_sub(fits));
    let lines: Vec<Line> = rows[first..]
        .iter()
        .take(fits)
        .map(|row| Line::raw(row.clone()))
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The viewer's messages, received and sent, the newest at the bottom; the unread marked
/// `*` as `baton messages` marks them.
pub(super) fn draw_messages(frame: &mut Frame, app: &App, area: Rect) {
    let (Some(agent), Some(mail)) = (&app.agent, &app.snapshot.mail) else {
        let text = match app.agent {
            Some(_) => "the messages could not be read",
            None => {
                "read-only: a board without an identity has no messages; start it with --as NAME"
            }
        };
        frame.render_widget(Paragraph::new(line(text)), area);
        return;
    };
    let unread = mail.messages.iter().filter(|entry| entry.unread).count();
    let title = format!(
        "messages of {agent}: {}, {unread} unread · m writes one · ↑↓ scroll",
        mail.messages.len()
    );
    let [title_area, list] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    frame.render_widget(
        Paragraph::new(Line::styled(shown(&title), bold())),
        title_area,
    );
    if mail.messages.is_empty() {
        frame.render_widget(Paragraph::new(Line::styled("no messages yet", dim())), list);
        return;
    }
    let width = usize::from(list.width);
    let mut rows = Vec::new();
    for entry in &mail.messages {
        let mut text = render::message_entry(&entry.message, app.snapshot.now);
        if entry.unread {
            text.replace_range(..1, "*");
        }
        rows.extend(rows_of(&text, width));
    }
    let fits = usize::from(list.height);
    let last = rows
        .len()
        .saturating_sub(app.mail_scroll.min(rows.len().saturating_sub(fits)));
    let first = last.saturating_sub(fits);
    let lines: Vec<Line> = rows[first..last]
        .iter()
        .map(|row| Line::raw(row.clone()))
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
}

pub(super) fn draw_agents(frame: &mut Frame, app: &App, area: Rect) {
    let block = Block::new().borders(Borders::TOP).title(" agents ");
    let width = usize::from(block.inner(area).width);
    let lines = match &app.snapshot.agents {
        Some(matrix) => {
            let table = agents::matrix_table(matrix, app.snapshot.now);
            let mut lines: Vec<Line> = table
                .lines()
                .map(|row| Line::raw(cells::cut(&shown(row), width).into_owned()))
                .collect();
            for problem in &matrix.problems {
                lines.push(Line::styled(
                    shown(&format!(
                        "unreadable record of {}: {}",
                        problem.agent, problem.error
                    )),
                    Style::new().fg(Color::Red),
                ));
            }
            lines
        }
        None => vec![line("the agents could not be read")],
    };
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The latest activity, newest last, as many records as fit: each behind its time on the
/// viewer's clock (the date only when it is not today's), its words wrapped under them, at
/// most [`ACTIVITY_ROWS`] rows a record.
pub(super) fn draw_activity(frame: &mut Frame, app: &App, area: Rect) {
    let block = Block::new().borders(Borders::TOP).title(" activity ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let fits = usize::from(inner.height);
    let width = usize::from(inner.width);
    let now = app.snapshot.now;
    // From the newest back, only as many records as fill the pane.
    let mut rows: Vec<String> = Vec::new();
    for record in app.snapshot.activity.iter().rev() {
        if rows.len() >= fits {
            break;
        }
        let at = time::clock(record.at, now);
        let line = format!("{at} {}", render::activity_words(record));
        let mut wrapped = cells::wrap_under(&line, width, cells::width(&at) + 1, ACTIVITY_ROWS);
        wrapped.extend(rows);
        rows = wrapped;
    }
    let first = rows.len().saturating_sub(fits);
    let lines: Vec<Line> = rows[first..]
        .iter()
        .map(|row| Line::raw(row.clone()))
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

#[cfg(test)]
mod tests {
    use ratatui::crossterm::event::KeyCode;

    use super::super::screen;
    use super::super::tests::app;
    use crate::cli::tui::state::Snapshot;
    use crate::cli::tui::testing::{app_for, key, snapshot, typed, view};
    use baton::board::task::{Status, TaskId};

    #[test]
    fn the_task_view_shows_its_diff_escaped_stat_then_hunks() {
        let mut task = view(4, Status::Working, "dates");
        task.task.worktree = Some(
            serde_json::from_value(serde_json::json!({
                "path": "/nowhere/T-4", "branch": "baton/T-4", "base": "main",
                "base_commit": "0123456789abcdef", "host": null,
            }))
            .expect("a worktree"),
        );
        let diff: baton::worktree::diff::TaskDiff = serde_json::from_value(serde_json::json!({
            "task": 4, "branch": "baton/T-4", "base": "main", "from": "0123456789abcdef",
            "tip": "fedcba9876543210", "commits": [], "uncommitted": {"state": "included"},
            "files": [{"path": "evil\u{1b}[2J.txt", "uncommitted": true, "untracked": false,
                       "binary": false, "added": 1, "removed": 0,
                       "hunks": "@@ -0,0 +1 @@\n+\u{1b}]0;owned\u{7}\u{202e}x\r\n"}],
            "left_out": {"files": 0, "hunks": 0, "commits": 0},
        }))
        .expect("a diff");
        let mut app = app(vec![task]);
        app.diff = Some(crate::cli::tui::state::ShownDiff {
            task: TaskId(4),
            read: Ok(diff),
        });
        app.on_key(key(KeyCode::Enter));
        let shown = screen(&app, 100, 40);
        for raw in ['\u{1b}', '\u{7}', '\u{202e}', '\r'] {
            assert!(!shown.contains(raw), "{raw:?} drawn raw: {shown}");
        }
        let stat = shown
            .find(" evil\\u{1b}[2J.txt [uncommitted] | +1 -0")
            .expect(&shown);
        let hunk = shown
            .find("+\\u{1b}]0;owned\\u{7}\\u{202e}x\\u{d}")
            .expect(&shown);
        assert!(stat < hunk, "the stat, then the hunks: {shown}");
    }

    #[test]
    fn a_hostile_subject_and_body_are_drawn_escaped() {
        let mut hostile = view(3, Status::Pending, "\u{1b}[31mred\u{202e}evil");
        hostile.task.body = "line one\n\u{1b}[2Jbaton: approved\u{7}".to_string();
        let mut app = app(vec![hostile]);
        let board = screen(&app, 80, 24);
        assert!(
            !board.contains('\u{1b}') && !board.contains('\u{202e}'),
            "{board}"
        );
        assert!(
            board.contains("T-3 normal worker       \\u{1b}[31mred\\u{202e}evil"),
            "{board}"
        );
        app.on_key(key(KeyCode::Enter));
        let task = screen(&app, 100, 30);
        assert!(
            !task.contains('\u{1b}') && !task.contains('\u{202e}'),
            "{task}"
        );
        // Every line of the body behind the frame, none of them passing for baton's own.
        assert!(task.contains("| \\u{1b}[2Jbaton: approved\\u{7}"), "{task}");
        assert!(task.contains("| line one"), "{task}");
    }

    #[test]
    fn a_long_body_line_keeps_its_frame_on_every_row_it_wraps_onto() {
        let mut task = view(8, Status::Pending, "wrapped");
        let long = format!(
            "{}baton: approved {}",
            "word ".repeat(30),
            "tail ".repeat(20)
        );
        task.task.body = format!("short\n{long}\nlast");
        let mut app = app(vec![task]);
        app.on_key(key(KeyCode::Enter));
        let screen = screen(&app, 80, 24);
        let body: Vec<&str> = screen
            .lines()
            .filter(|row| {
                ["word", "baton:", "tail", "short", "last"]
                    .iter()
                    .any(|word| row.contains(word))
            })
            .collect();
        assert!(body.len() >= 5, "{screen}");
        for row in &body {
            assert!(
                row.starts_with("  | "),
                "a body row without its frame: {row:?}\n{screen}"
            );
        }
        // All of it is there: 30 words and 20 tails across the rows.
        assert_eq!(screen.matches("word").count(), 30, "{screen}");
        assert_eq!(screen.matches("tail").count(), 20, "{screen}");
    }

    #[test]
    fn the_task_pane_shows_the_thread_and_the_delivery() {
        let mut task = view(5, Status::InputRequired, "which branch");
        let now = baton::time::now();
        task.task = serde_json::from_value(serde_json::json!({
            "id": 5, "subject": "which branch", "from": "boss", "to": "worker",
            "status": "input_required", "created_at": now.to_string(),
            "updated_at": now.to_string(),
            "thread": [{"at": now.to_string(), "by": "worker", "kind": "question",
                        "text": "main or dev?"}],
            "delivery": {"to": "boss", "since": now.to_string(), "state": "seen",
                         "seen_at": now.to_string()},
        }))
        .expect("a task");
        let mut app = app(vec![task]);
        assert_eq!(app.selected, Some(TaskId(5)));
        app.on_key(key(KeyCode::Enter));
        let screen = screen(&app, 80, 24);
        assert!(screen.contains("thread:"), "{screen}");
        assert!(screen.contains("worker question: main or dev?"), "{screen}");
        assert!(screen.contains("delivery: to boss, seen"), "{screen}");
    }

    #[test]
    fn the_messages_view_shows_them_escaped_and_framed_the_unread_marked() {
        let now = baton::time::now();
        let mut snapshot = snapshot(Vec::new());
        snapshot.mail = Some(
            serde_json::from_value(serde_json::json!({
                "agent": "boss", "project": "demo",
                "messages": [
                    {"seq": 1, "at": now.to_string(), "from": "boss", "to": "worker",
                     "type": "text", "summary": "", "body": "start with the docs", "unread": false},
                    {"seq": 2, "at": now.to_string(), "from": "worker", "to": "boss",
                     "type": "text", "summary": "two lines",
                     "body": "first\n\u{1b}[2Jbaton: forged", "unread": true},
                ],
            }))
            .expect("mail"),
        );
        let mut app = app_for("boss", snapshot);
        let board = screen(&app, 80, 24);
        assert!(board.contains("3:messages(1)"), "{board}");
        typed(&mut app, "3");
        let screen = screen(&app, 80, 24);
        assert!(!screen.contains('\u{1b}'), "{screen}");
        assert!(screen.contains("messages of boss: 2, 1 unread"), "{screen}");
        assert!(
            screen.contains("  #1 from boss to worker, 0s ago: start with the docs"),
            "{screen}"
        );
        assert!(
            screen.contains("* #2 from worker to boss, 0s ago: two lines"),
            "{screen}"
        );
        assert!(screen.contains("    | first"), "{screen}");
        assert!(screen.contains("    | \\u{1b}[2Jbaton: forged"), "{screen}");
    }

    #[test]
    fn the_activity_view_at_80_columns_shows_a_short_time_and_lines_not_quotes() {
        let now = baton::time::now();
        let record = |at: baton::time::Timestamp, text: &str| {
            serde_json::from_value(serde_json::json!({
                "at": at.to_string(), "project": "demo", "actor": "worker",
                "action": "note", "text": text,
            }))
            .expect("a record")
        };
        let long = format!("first {} last", "middle ".repeat(40));
        let three_days_ago = now.plus(chrono::Duration::days(-3));
        let activity = vec![
            record(three_days_ago, "older"),
            record(now, "short one"),
            record(now, &long),
        ];
        let mut app = app_for(
            "boss",
            Snapshot::new("demo".to_string(), now, Vec::new(), None, activity),
        );
        typed(&mut app, "6");
        let screen = screen(&app, 80, 24);
        let rows: Vec<&str> = screen.lines().collect();
        let stored = three_days_ago.to_string();
        assert!(!screen.contains(&stored[..19]), "a stored time: {screen}");
        // Today's records behind the time alone, HH:MM:SS: the words start at column 9.
        let today = baton::time::clock(now, now);
        assert_eq!(today.len(), 8, "{today}");
        assert!(
            today.chars().enumerate().all(|(at, c)| if at % 3 == 2 {
                c == ':'
            } else {
                c.is_ascii_digit()
            }),
            "{today}"
        );
        let short = rows
            .iter()
            .find(|row| row.contains("short one"))
            .expect(&screen);
        assert_eq!(short.trim_end(), format!("{today} worker note: short one"));
        // Another day's behind its date and minute.
        let older = rows
            .iter()
            .find(|row| row.contains("older"))
            .expect(&screen);
        let day = baton::time::clock(three_days_ago, now);
        assert_eq!(day.len(), 16, "{day}");
        assert!(
            day.chars().enumerate().all(|(at, c)| match at {
                4 | 7 => c == '-',
                10 => c == ' ',
                13 => c == ':',
                _ => c.is_ascii_digit(),
            }),
            "{day}"
        );
        assert_eq!(older.trim_end(), format!("{day} worker note: older"));
        // A long one wraps under its words, with no `| ` frame, in at most three rows, the
        // last ending in an ellipsis.
        let first = rows
            .iter()
            .position(|row| row.contains("note: first"))
            .expect(&screen);
        assert!(rows[first].starts_with(&today), "{screen}");
        let under: Vec<&str> = rows[first + 1..]
            .iter()
            .take_while(|row| row.starts_with("         m"))
            .copied()
            .collect();
        assert_eq!(under.len(), 2, "{screen}");
        assert!(under[1].trim_end().ends_with('…'), "{screen}");
        assert!(!screen.contains("| "), "{screen}");
        assert!(!screen.contains("last"), "{screen}");
    }

    #[test]
    fn the_agents_and_activity_panes_show_escaped_text() {
        let now = baton::time::now();
        let agents = serde_json::from_value(serde_json::json!({
            "project": "demo", "problems": [],
            "agents": [{"name": "worker", "strengths": "fast\u{1b}[5m",
                        "skills": ["rust\u{202e}"], "clients": [], "last_seen": now.to_string(),
                        "open": 3, "working": 1, "inbox": 2, "unseen": 0, "wake": false,
                        "seen_seconds_ago": 0}],
        }))
        .expect("a matrix");
        let record = serde_json::from_value(serde_json::json!({
            "at": now.to_string(), "project": "demo", "actor": "worker", "action": "note",
            "text": "\u{1b}]0;owned\u{7}done",
        }))
        .expect("a record");
        let mut app = app_for(
            "boss",
            Snapshot::new(
                "demo".to_string(),
                now,
                Vec::new(),
                Some(agents),
                vec![record],
            ),
        );
        typed(&mut app, "5");
        let agents = screen(&app, 120, 24);
        assert!(agents.contains("worker"), "{agents}");
        assert!(agents.contains("rust\\u{202e}"), "{agents}");
        assert!(
            !agents.contains('\u{1b}') && !agents.contains('\u{202e}'),
            "{agents}"
        );
        typed(&mut app, "6");
        let activity = screen(&app, 120, 24);
        assert!(
            activity.contains("worker note: \\u{1b}]0;owned\\u{7}done"),
            "{activity}"
        );
    }
}
