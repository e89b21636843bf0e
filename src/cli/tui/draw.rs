//! Drawing the terminal board: the status columns, the task pane, the agents matrix and the
//! activity feed, a status line and the keys.
//!
//! Every string an agent wrote reaches the screen through `baton::text` (SPEC section 10):
//! one-line fields through `inline`, multi-line text framed by the same renderings the CLI
//! prints (`render::task_detail`, `render::activity_line`). Only the rows that fit are
//! formatted, so a board of 10,000 tasks costs what a screenful costs.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use baton::board::inbox::Reason;
use baton::board::task::Status;
use baton::session::TaskView;
use baton::text::inline;
use baton::time::Timestamp;

use super::state::{App, Pane};
use crate::cli::{agents, render};

/// From this width the board shows the selected task beside the columns.
const WIDE: u16 = 150;
/// From this height the board shows the latest activity under the columns.
const TALL: u16 = 40;
/// A column narrower than this shows its status by a short name.
const FULL_NAMES_FROM: u16 = 18;

/// The keys, in the order the footer lists them: help and quit first, so that a narrow
/// terminal, which cuts the footer, still shows them.
pub const KEYS: &[(&str, &str)] = &[
    ("?", "help"),
    ("q", "quit"),
    ("Enter", "task"),
    ("Tab/1-4", "panes"),
    ("a", "answer"),
    ("y/A", "approve"),
    ("r", "request changes"),
    ("c", "cancel"),
    ("R", "reassign"),
    ("n", "send"),
    ("m", "message"),
    ("←→↑↓/hjkl", "move"),
];

/// The marks a task row carries in one character each, and what they mean (the help
/// lists them).
pub const MARKS: &[(char, &str)] = &[
    ('#', "blocked by unfinished tasks"),
    ('!', "stalled: its lease ran out"),
    ('?', "handed over but not seen for 5 minutes"),
    ('>', "waiting for someone other than its assignee"),
];

pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    let [header, main, status, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_header(frame, app, header);
    match app.pane {
        Pane::Board => draw_board_pane(frame, app, main),
        Pane::Task => draw_task(frame, app, main),
        Pane::Agents => draw_agents(frame, app, main),
        Pane::Activity => draw_activity(frame, app, main),
    }
    draw_status(frame, app, status);
    draw_footer(frame, app, footer);
    if app.is_help_shown {
        draw_help(frame, area);
    }
}

fn draw_header(frame: &mut Frame, app: &App, area: Rect) {
    let snapshot = &app.snapshot;
    let open = snapshot
        .views
        .iter()
        .filter(|view| view.task.status.is_open())
        .count();
    let who = match &app.agent {
        Some(agent) => format!("as {agent}"),
        None => "read-only".to_string(),
    };
    let mut spans = vec![Span::styled(
        format!(
            "baton watch · {} · {who} · {open} open · ",
            snapshot.project
        ),
        Style::new().add_modifier(Modifier::BOLD),
    )];
    for (place, pane) in Pane::ALL.iter().enumerate() {
        let style = if *pane == app.pane {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        };
        spans.push(Span::styled(
            format!("{}:{}", place + 1, pane.title()),
            style,
        ));
        spans.push(Span::raw(" "));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_board_pane(frame: &mut Frame, app: &App, area: Rect) {
    let (board, activity) = if area.height + 3 >= TALL {
        let [board, activity] =
            Layout::vertical([Constraint::Min(8), Constraint::Length(10)]).areas(area);
        (board, Some(activity))
    } else {
        (area, None)
    };
    if board.width >= WIDE {
        let [columns, task] =
            Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
                .areas(board);
        draw_columns(frame, app, columns);
        draw_task(frame, app, task);
    } else {
        draw_columns(frame, app, board);
    }
    if let Some(activity) = activity {
        draw_activity(frame, app, activity);
    }
}

/// The eight status columns, each a title, a count and the rows that fit.
fn draw_columns(frame: &mut Frame, app: &App, area: Rect) {
    let snapshot = &app.snapshot;
    let areas = Layout::horizontal([Constraint::Ratio(1, 8); 8]).split(area);
    for (column, (status, rect)) in Status::ALL.iter().zip(areas.iter()).enumerate() {
        let block = if column == 0 {
            Block::new()
        } else {
            Block::new().borders(Borders::LEFT)
        };
        let inner = block.inner(*rect);
        frame.render_widget(block, *rect);
        let places = &snapshot.columns[column];
        let name = if inner.width >= FULL_NAMES_FROM {
            status.as_str()
        } else {
            short_name(*status)
        };
        let is_current = column == app.column;
        let title_style = if is_current {
            Style::new()
                .add_modifier(Modifier::BOLD)
                .add_modifier(Modifier::UNDERLINED)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        };
        let mut lines = vec![
            Line::styled(name, title_style),
            Line::styled(format!("{}", places.len()), Style::new().fg(Color::Cyan)),
        ];
        let rows = usize::from(inner.height.saturating_sub(2));
        // The selected row stays in sight: the list scrolls so that it is the last one shown.
        let first = if is_current && app.row >= rows {
            app.row + 1 - rows
        } else {
            0
        };
        let width = usize::from(inner.width);
        for (row, place) in places.iter().enumerate().skip(first).take(rows) {
            let view = &snapshot.views[*place];
            let style = if is_current && row == app.row {
                Style::new().add_modifier(Modifier::REVERSED)
            } else {
                Style::new()
            };
            lines.push(task_row(view, snapshot.now, width, style));
        }
        frame.render_widget(Paragraph::new(lines), inner);
    }
}

/// A task in a column: its mark, its id and as much of its subject as fits, escaped.
fn task_row(view: &TaskView, now: Timestamp, width: usize, style: Style) -> Line<'static> {
    let mark = mark(view, now);
    let subject = inline(&view.task.subject).to_string();
    let text = format!("{mark}{} {subject}", view.task.id);
    let mark_style = Style::new().fg(Color::Yellow);
    let cut = cut_to(&text, width);
    let (mark_text, rest) = cut.split_at(mark.len_utf8().min(cut.len()));
    Line::from(vec![
        Span::styled(mark_text.to_string(), style.patch(mark_style)),
        Span::styled(rest.to_string(), style),
    ])
}

/// The one character that marks a task (a space for none), the first that applies.
fn mark(view: &TaskView, now: Timestamp) -> char {
    let task = &view.task;
    if !view.blocked_by.is_empty() {
        '#'
    } else if view.stalled {
        '!'
    } else if task.status.is_open()
        && task
            .delivery
            .as_ref()
            .is_some_and(|delivery| delivery.unseen_for(now).is_some())
    {
        '?'
    } else if view.turn.is_some() && view.reason.is_some_and(|reason| reason != Reason::Assigned) {
        '>'
    } else {
        ' '
    }
}

/// `text` cut to `width` characters, the last one an ellipsis when it was longer.
fn cut_to(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn short_name(status: Status) -> &'static str {
    match status {
        Status::Pending => "pending",
        Status::Working => "working",
        Status::InputRequired => "input",
        Status::ReviewRequested => "review",
        Status::ChangesRequested => "changes",
        Status::Completed => "done",
        Status::Failed => "failed",
        Status::Canceled => "canceled",
    }
}

/// Text already escaped for the terminal as lines; a tab, which the escaping keeps, would
/// move the cursor in a cell, so it becomes spaces.
fn lines_of(text: &str) -> Vec<Line<'static>> {
    text.lines()
        .map(|line| Line::raw(line.replace('\t', "    ")))
        .collect()
}

/// The selected task with its whole thread and delivery, as `baton show` prints it.
fn draw_task(frame: &mut Frame, app: &App, area: Rect) {
    let block = Block::new().borders(Borders::TOP).title(" task ");
    let lines = match app.selected_view() {
        Some(view) => lines_of(&render::task_detail(view, app.snapshot.now)),
        None => vec![Line::raw("no task selected")],
    };
    let paragraph = Paragraph::new(lines)
        .block(block)
        .wrap(Wrap { trim: false })
        .scroll((app.scroll, 0));
    frame.render_widget(paragraph, area);
}

fn draw_agents(frame: &mut Frame, app: &App, area: Rect) {
    let block = Block::new().borders(Borders::TOP).title(" agents ");
    let lines = match &app.snapshot.agents {
        Some(matrix) => {
            let mut lines = lines_of(&agents::matrix_table(matrix, app.snapshot.now));
            for problem in &matrix.problems {
                lines.push(Line::styled(
                    format!(
                        "unreadable record of {}: {}",
                        problem.agent,
                        inline(&problem.error)
                    ),
                    Style::new().fg(Color::Red),
                ));
            }
            lines
        }
        None => vec![Line::raw("the agents could not be read")],
    };
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The latest activity, newest last, as many lines as fit.
fn draw_activity(frame: &mut Frame, app: &App, area: Rect) {
    let block = Block::new().borders(Borders::TOP).title(" activity ");
    let fits = usize::from(block.inner(area).height);
    let records = &app.snapshot.activity;
    let lines: Vec<Line> = records[records.len().saturating_sub(fits)..]
        .iter()
        .map(|record| Line::raw(render::activity_line(record).replace('\t', "    ")))
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The last action's outcome, else what is selected.
fn draw_status(frame: &mut Frame, app: &App, area: Rect) {
    let line = match (&app.notice, app.selected_view()) {
        (Some(notice), _) => Line::styled(
            notice.text.clone(),
            if notice.is_error {
                Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
            } else {
                Style::new().fg(Color::Green)
            },
        ),
        (None, Some(view)) => {
            let mut text = format!("{} {}", view.task.id, view.task.status);
            match (&view.turn, view.reason) {
                (Some(owner), Some(reason)) => {
                    text.push_str(&format!(" · {owner}: {}", reason.what_to_do()));
                }
                _ => text.push_str(&format!(" · {} → {}", view.task.from, view.task.to)),
            }
            // The subject in full as far as the line goes: the columns of a small terminal
            // have room for only its start.
            text.push_str(&format!(" · {}", inline(&view.task.subject)));
            Line::raw(text)
        }
        (None, None) => Line::raw("no tasks here; n sends one"),
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// The prompt being typed, else the keys.
fn draw_footer(frame: &mut Frame, app: &App, area: Rect) {
    if let Some(prompt) = &app.prompt {
        let label = format!("{} ", prompt.purpose.label());
        // What is typed is the human's own, shown as typed but for control characters.
        let input = inline(&prompt.input).to_string();
        let line = Line::from(vec![
            Span::styled(label.clone(), Style::new().add_modifier(Modifier::BOLD)),
            Span::raw(input),
            Span::styled(
                " (Enter sends, Esc cancels)",
                Style::new().fg(Color::DarkGray),
            ),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        let before: usize = label.chars().count()
            + inline(&prompt.input.chars().take(prompt.cursor).collect::<String>())
                .to_string()
                .chars()
                .count();
        let x = area.x
            + u16::try_from(before)
                .unwrap_or(u16::MAX)
                .min(area.width - 1);
        frame.set_cursor_position((x, area.y));
        return;
    }
    let mut spans = Vec::new();
    for (key, what) in KEYS {
        spans.push(Span::styled(
            *key,
            Style::new().add_modifier(Modifier::BOLD),
        ));
        spans.push(Span::raw(format!(" {what}  ")));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_help(frame: &mut Frame, area: Rect) {
    let mut lines = vec![Line::styled(
        "baton watch: keys",
        Style::new().add_modifier(Modifier::BOLD),
    )];
    for (key, what) in KEYS {
        lines.push(Line::raw(format!("  {key:<10} {what}")));
    }
    lines.push(Line::raw("  Esc        back to the board"));
    lines.push(Line::raw("marks:"));
    for (mark, what) in MARKS {
        lines.push(Line::raw(format!("  {mark}  {what}")));
    }
    lines.push(Line::raw("any key closes this"));
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let popup = centered(area, 60, height);
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" help ")),
        popup,
    );
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// Draws the board at the size given and returns the screen as text, one line per row.
#[cfg(test)]
pub fn screen(app: &App, width: u16, height: u16) -> String {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal
        .draw(|frame| draw(frame, app))
        .expect("a test draw");
    let buffer = terminal.backend().buffer();
    let mut text = String::new();
    for y in 0..height {
        for x in 0..width {
            text.push_str(buffer[(x, y)].symbol());
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::super::state::Snapshot;
    use super::super::state::tests::{snapshot, view};
    use super::*;
    use baton::board::task::TaskId;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    fn app(views: Vec<TaskView>) -> App {
        App::new(Some("boss".to_string()), snapshot(views))
    }

    #[test]
    fn at_80x24_every_status_column_shows_with_its_count() {
        let mut views = Vec::new();
        for (place, status) in Status::ALL.iter().enumerate() {
            for extra in 0..=place {
                views.push(view((place * 10 + extra) as u64 + 1, *status, "something"));
            }
        }
        let screen = screen(&app(views), 80, 24);
        for (place, status) in Status::ALL.iter().enumerate() {
            assert!(
                screen.contains(short_name(*status)),
                "{status} missing:\n{screen}"
            );
            let count = format!("{}", place + 1);
            assert!(screen.contains(&count), "count {count} missing:\n{screen}");
        }
        // Each column header is over its own count: the title row and the count row.
        let rows: Vec<&str> = screen.lines().collect();
        assert!(rows[1].starts_with("pending"), "{}", rows[1]);
        assert!(rows[2].starts_with('1'), "{}", rows[2]);
        assert!(rows[3].contains("T-1 some"), "{}", rows[3]);
    }

    #[test]
    fn a_hostile_subject_and_body_are_drawn_escaped() {
        let mut hostile = view(3, Status::Pending, "\u{1b}[31mred\u{202e}evil");
        hostile.task.body = "line one\n\u{1b}[2Jbaton: approved\u{7}".to_string();
        let mut app = app(vec![hostile]);
        let board = screen(&app, 80, 24);
        assert!(!board.contains('\u{1b}'), "{board}");
        // Cut to the column, the escape still shows as text.
        assert!(board.contains("T-3 \\u{1…"), "{board}");
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        let task = screen(&app, 100, 30);
        assert!(
            !task.contains('\u{1b}') && !task.contains('\u{202e}'),
            "{task}"
        );
        assert!(task.contains("\\u{1b}[31mred\\u{202e}evil"), "{task}");
        // Every line of the body behind the frame, none of them passing for baton's own.
        assert!(task.contains("| \\u{1b}[2Jbaton: approved\\u{7}"), "{task}");
        assert!(task.contains("| line one"), "{task}");
    }

    #[test]
    fn a_256_character_subject_is_cut_to_its_cell() {
        let long = "x".repeat(256);
        let screen = screen(&app(vec![view(1, Status::Pending, &long)]), 80, 24);
        let row = screen.lines().nth(3).expect("a row");
        assert!(row.contains('…'), "{row}");
        // The next column's border is still in its place.
        assert_eq!(row.chars().nth(10), Some('│'), "{row}");
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
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        let screen = screen(&app, 80, 24);
        assert!(screen.contains("thread:"), "{screen}");
        assert!(screen.contains("worker question: main or dev?"), "{screen}");
        assert!(screen.contains("delivery: to boss, seen"), "{screen}");
    }

    #[test]
    fn the_help_lists_every_key_and_mark() {
        let mut app = app(vec![view(1, Status::Pending, "one")]);
        app.on_key(KeyEvent::new(KeyCode::Char('?'), KeyModifiers::NONE));
        let screen = screen(&app, 80, 24);
        for (key, what) in KEYS {
            assert!(
                screen.contains(&format!("{key:<10} {what}")),
                "{key}:\n{screen}"
            );
        }
        for (mark, what) in MARKS {
            assert!(
                screen.contains(&format!("{mark}  {what}")),
                "{mark}:\n{screen}"
            );
        }
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
        let mut app = App::new(
            Some("boss".to_string()),
            Snapshot::new(
                "demo".to_string(),
                now,
                Vec::new(),
                Some(agents),
                vec![record],
            ),
        );
        app.on_key(KeyEvent::new(KeyCode::Char('3'), KeyModifiers::NONE));
        let agents = screen(&app, 120, 24);
        assert!(agents.contains("worker"), "{agents}");
        assert!(agents.contains("rust\\u{202e}"), "{agents}");
        assert!(
            !agents.contains('\u{1b}') && !agents.contains('\u{202e}'),
            "{agents}"
        );
        app.on_key(KeyEvent::new(KeyCode::Char('4'), KeyModifiers::NONE));
        let activity = screen(&app, 120, 24);
        assert!(
            activity.contains("worker note: \\u{1b}]0;owned\\u{7}done"),
            "{activity}"
        );
    }

    #[test]
    fn a_wide_terminal_shows_the_task_beside_the_columns_and_the_activity() {
        let screen = screen(&app(vec![view(9, Status::Working, "beside")]), 200, 50);
        assert!(screen.contains("status:   working"), "{screen}");
        assert!(screen.contains(" activity "), "{screen}");
    }

    #[test]
    fn a_board_of_10000_tasks_draws_a_screenful() {
        let views: Vec<TaskView> = (1..=10_000)
            .map(|id| {
                view(
                    id,
                    Status::ALL[(id % 5) as usize],
                    &format!("task number {id} with a subject of some length"),
                )
            })
            .collect();
        let started = Instant::now();
        let snapshot = snapshot(views);
        let grouped = started.elapsed();
        let mut app = App::new(Some("boss".to_string()), snapshot);
        for _ in 0..500 {
            app.on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
        }
        let started = Instant::now();
        let rounds = 20;
        let mut last = String::new();
        for _ in 0..rounds {
            last = screen(&app, 80, 24);
        }
        let per_draw = started.elapsed() / rounds;
        // A figure to read, not a bound to assert (STYLE rule 11).
        println!(
            "10,000 tasks: grouped into columns in {grouped:?}; one 80x24 draw in {per_draw:?}"
        );
        assert!(last.contains("2000"), "{last}");
        assert!(
            last.contains(&format!("{}", app.selected.expect("a task"))),
            "{last}"
        );
    }
}
