//! Drawing the terminal board: the board as a list by status, the inbox, the messages, the
//! task with its thread, the agents matrix and the activity feed, a status line and the
//! keys the selected task offers.
//!
//! Every line reaches the screen through [`cells::shown`]: what an agent wrote escaped as
//! SPEC section 10 says (one-line fields inline, multi-line text framed by the same
//! renderings the CLI prints, `render::task_detail`, `render::message_entry`), and nothing
//! whose width terminals disagree on. Lines longer than their pane wrap with their frame
//! ([`cells::wrap`]). Only the rows that fit are formatted, so a board of 10,000 tasks
//! costs what a screenful costs.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use baton::board::inbox::Reason;
use baton::board::task::{Priority, Status};
use baton::plural;
use baton::session::TaskView;
use baton::time::Timestamp;

use super::cells::{self, shown};
use super::keys::TASK_KEYS;
use super::state::{App, Pane, group_of};
use crate::cli::{agents, render};

/// From this width the board shows the selected task beside the list.
const WIDE: u16 = 120;
/// From this height the board shows the latest activity under the list.
const TALL: u16 = 40;
/// The cells an assignee's name takes in a row of the board.
const WHO: usize = 12;

/// The keys that do not act on a task, in the order the help lists them.
pub const KEYS: &[(&str, &str)] = &[
    ("?", "this help"),
    ("q", "quit"),
    ("↑↓ j k", "move, scroll"),
    ("←→ h l", "status before, after"),
    ("g G", "first, last"),
    ("Enter", "the selected task"),
    ("Esc", "back to the list"),
    ("Tab 1-6", "the views"),
    ("f", "finished: show, hide"),
    ("n", "send a task"),
    ("m", "message (or @all)"),
];

/// The marks a task row carries in one character each, and what they mean (the help
/// lists them).
pub const MARKS: &[(char, &str)] = &[
    ('#', "blocked by unfinished tasks"),
    ('!', "stalled: its lease ran out"),
    ('?', "handed over, unseen for 5 min"),
    ('>', "waits on someone but the assignee"),
];

fn bold() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// A line of text, shown: escaped and safe for the cells.
fn line(text: &str) -> Line<'static> {
    Line::raw(shown(text))
}

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
        Pane::Inbox => draw_inbox(frame, app, main),
        Pane::Messages => draw_messages(frame, app, main),
        Pane::Task => draw_task(frame, app, main),
        Pane::Agents => draw_agents(frame, app, main),
        Pane::Activity => draw_activity(frame, app, main),
    }
    draw_status(frame, app, status);
    draw_footer(frame, app, footer);
    if app.is_help_shown {
        draw_help(frame, app, area);
    }
}

/// The views, with what waits in the inbox and the messages, then the project and who acts.
fn draw_header(frame: &mut Frame, app: &App, area: Rect) {
    let mut spans = Vec::new();
    for (place, pane) in Pane::ALL.iter().enumerate() {
        let count = match pane {
            Pane::Inbox if !app.inbox.is_empty() => format!("({})", app.inbox.len()),
            Pane::Messages if app.unread_count() > 0 => format!("({})", app.unread_count()),
            _ => String::new(),
        };
        let style = if *pane == app.pane {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        };
        spans.push(Span::styled(
            format!("{}:{}{count}", place + 1, pane.title()),
            style,
        ));
        spans.push(Span::raw(" "));
    }
    let who = match &app.agent {
        Some(agent) => format!("as {}", cells::cut(&shown(agent), 16)),
        None => "read-only".to_string(),
    };
    spans.push(Span::styled(
        format!(
            "· {} · {who}",
            cells::cut(&shown(&app.snapshot.project), 16)
        ),
        bold(),
    ));
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
        let [list, task] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                .areas(board);
        draw_board(frame, app, list);
        draw_task(
            frame,
            app,
            Rect {
                x: task.x + 1,
                width: task.width.saturating_sub(1),
                ..task
            },
        );
    } else {
        draw_board(frame, app, board);
    }
    if let Some(activity) = activity {
        draw_activity(frame, app, activity);
    }
}

/// A row of a list: the heading of a status, or a task.
#[derive(Clone, Copy)]
enum Row {
    Heading(Status, usize),
    Task(usize),
}

/// The board as a list: a line of counts, then each status listed that has tasks, its
/// heading and its tasks, most urgent first. Finished ones are listed behind `f`.
fn draw_board(frame: &mut Frame, app: &App, area: Rect) {
    let snapshot = &app.snapshot;
    let count = |status: Status| snapshot.groups[group_of(status)].len();
    let open: Vec<String> = Status::ALL
        .iter()
        .filter(|status| status.is_open() && count(**status) > 0)
        .map(|status| format!("{} {}", short_name(*status), count(*status)))
        .collect();
    let finished: usize = Status::ALL
        .iter()
        .filter(|status| status.is_finished())
        .map(|status| count(*status))
        .sum();
    let mut summary = vec![Span::styled(
        if open.is_empty() {
            "no open tasks".to_string()
        } else {
            open.join(" · ")
        },
        Style::new().fg(Color::Cyan),
    )];
    if finished > 0 {
        let key = if app.is_finished_shown {
            "f hides them"
        } else {
            "f shows them"
        };
        summary.push(Span::styled(
            format!(" │ finished {finished}: {key}"),
            dim(),
        ));
    }
    let mut rows: Vec<Row> = Vec::new();
    for status in Status::ALL {
        let group = &snapshot.groups[group_of(status)];
        if app.is_listed(status) && !group.is_empty() {
            rows.push(Row::Heading(status, group.len()));
            rows.extend(group.iter().map(|&place| Row::Task(place)));
        }
    }
    let empty = match (snapshot.views.is_empty(), app.agent.is_some()) {
        (true, true) => "no tasks here: n sends one",
        (true, false) => "no tasks here",
        (false, _) => "no open tasks: f shows the finished ones",
    };
    draw_list(frame, app, area, Line::from(summary), &rows, empty);
}

/// The inbox: the tasks whose turn is the viewer's, and what each waits for.
fn draw_inbox(frame: &mut Frame, app: &App, area: Rect) {
    let Some(agent) = &app.agent else {
        let text = "read-only: a board without an identity has no inbox; start it with --as NAME";
        frame.render_widget(Paragraph::new(line(text)), area);
        return;
    };
    let unread = app.unread_count();
    let title = format!(
        "inbox of {agent}: {} · {} (3 shows them)",
        plural::count(app.inbox.len(), "task"),
        plural::count(unread, "unread message"),
    );
    let rows: Vec<Row> = app.inbox.iter().map(|&place| Row::Task(place)).collect();
    let empty = format!("nothing waits for {agent}");
    draw_list(
        frame,
        app,
        area,
        Line::styled(shown(&title), bold()),
        &rows,
        &empty,
    );
}

/// A title, then the rows that fit, scrolled so that the selected task is in sight.
fn draw_list(
    frame: &mut Frame,
    app: &App,
    area: Rect,
    title: Line<'static>,
    rows: &[Row],
    empty: &str,
) {
    let mut lines = vec![title];
    if rows.is_empty() {
        lines.push(Line::styled(shown(empty), dim()));
        frame.render_widget(Paragraph::new(lines), area);
        return;
    }
    let snapshot = &app.snapshot;
    let fits = usize::from(area.height.saturating_sub(1)).max(1);
    let selected = app.selected.and_then(|id| {
        rows.iter()
            .position(|row| matches!(row, Row::Task(place) if snapshot.views[*place].task.id == id))
    });
    // The selected row stays in sight, with its status's heading where there is room.
    let first = match selected {
        Some(row) if row >= fits => row + 1 - fits,
        _ => 0,
    };
    let id_width = snapshot
        .views
        .iter()
        .map(|view| view.task.id.to_string().len())
        .max()
        .unwrap_or(3);
    let width = usize::from(area.width);
    let is_inbox = app.pane == Pane::Inbox;
    for (at, row) in rows.iter().enumerate().skip(first).take(fits) {
        lines.push(match *row {
            Row::Heading(status, count) => Line::styled(
                format!("{status} ({count})"),
                bold().add_modifier(Modifier::UNDERLINED),
            ),
            Row::Task(place) => {
                let view = &snapshot.views[place];
                let is_selected = Some(at) == selected;
                task_row(app, view, id_width, width, is_selected, is_inbox)
            }
        });
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// A task in a list: its mark, id and priority, then who has it (on the board) or what it
/// waits for (in the inbox), and as much of its subject as fits, all escaped.
fn task_row(
    app: &App,
    view: &TaskView,
    id_width: usize,
    width: usize,
    is_selected: bool,
    is_inbox: bool,
) -> Line<'static> {
    let task = &view.task;
    let base = if is_selected {
        Style::new().add_modifier(Modifier::REVERSED)
    } else if view.turn.is_some() && view.turn == app.agent {
        // The viewer's turn.
        bold()
    } else {
        Style::new()
    };
    let mark = mark(view, app.snapshot.now);
    let mut spans = vec![
        Span::styled(mark.to_string(), base.patch(Style::new().fg(Color::Yellow))),
        Span::styled(format!("{:<id_width$} ", task.id.to_string()), base),
        Span::styled(
            format!("{:<6} ", task.priority.as_str()),
            base.patch(priority_style(task.priority)),
        ),
    ];
    let used = 1 + id_width + 1 + 7;
    let rest = if is_inbox {
        let what = view
            .reason
            .map(|reason| reason.what_to_do().into_owned())
            .unwrap_or_default();
        shown(&format!("{what} · {}", task.subject))
    } else {
        format!(
            "{} {}",
            cells::pad(&shown(&task.to), WHO),
            shown(&task.subject)
        )
    };
    let room = width.saturating_sub(used);
    spans.push(Span::styled(cells::pad(&rest, room), base));
    Line::from(spans)
}

fn priority_style(priority: Priority) -> Style {
    match priority {
        Priority::Urgent => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        Priority::High => Style::new().fg(Color::Yellow),
        Priority::Normal => Style::new(),
        Priority::Low => dim(),
    }
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

/// A status by its short name, for the line of counts.
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

/// Multi-line text (escaped by its rendering) as the rows it takes at `width`, each line
/// wrapped with its frame.
fn rows_of(text: &str, width: usize) -> Vec<String> {
    text.lines()
        .flat_map(|line| cells::wrap(line, width))
        .collect()
}

/// The selected task with its whole thread and delivery, as `baton show` prints it.
fn draw_task(frame: &mut Frame, app: &App, area: Rect) {
    let block = Block::new().borders(Borders::TOP).title(" task ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(view) = app.selected_view() else {
        frame.render_widget(Paragraph::new(line("no task selected")), inner);
        return;
    };
    let rows = rows_of(
        &render::task_detail(view, app.snapshot.now),
        usize::from(inner.width),
    );
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
fn draw_messages(frame: &mut Frame, app: &App, area: Rect) {
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

fn draw_agents(frame: &mut Frame, app: &App, area: Rect) {
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

/// The latest activity, newest last, as many lines as fit.
fn draw_activity(frame: &mut Frame, app: &App, area: Rect) {
    let block = Block::new().borders(Borders::TOP).title(" activity ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let fits = usize::from(inner.height);
    let width = usize::from(inner.width);
    // From the newest back, only as many records as fill the pane.
    let mut rows: Vec<String> = Vec::new();
    for record in app.snapshot.activity.iter().rev() {
        if rows.len() >= fits {
            break;
        }
        let mut wrapped = cells::wrap(&render::activity_line(record), width);
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

/// The last action's outcome, else the selected task: its status, whose turn it is and its
/// whole subject, as far as the line goes.
fn draw_status(frame: &mut Frame, app: &App, area: Rect) {
    let width = usize::from(area.width);
    let line = match (&app.notice, app.selected_view()) {
        (Some(notice), _) => Line::styled(
            cells::cut(&shown(&notice.text), width).into_owned(),
            if notice.is_error {
                Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
            } else {
                Style::new().fg(Color::Green)
            },
        ),
        (None, Some(view)) => {
            let task = &view.task;
            let mut text = format!("{} {} {}", task.id, task.status, task.priority);
            match (&view.turn, view.reason) {
                (Some(owner), Some(reason)) => {
                    text.push_str(&format!(" · {owner}: {}", reason.what_to_do()));
                }
                _ => text.push_str(&format!(" · {} → {}", task.from, task.to)),
            }
            text.push_str(&format!(" · {}", task.subject));
            Line::raw(cells::cut(&shown(&text), width).into_owned())
        }
        (None, None) => line("no task selected"),
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// The prompt being typed, else the keys: those the selected task offers the viewer first,
/// after help and quit, so that a narrow terminal, which cuts the footer, still shows them.
fn draw_footer(frame: &mut Frame, app: &App, area: Rect) {
    if let Some(prompt) = &app.prompt {
        let label = format!("{} ", shown(&prompt.purpose.label()));
        let input = shown(&prompt.input);
        let hint = if prompt.purpose.is_confirmation() {
            ""
        } else if prompt.choices.is_empty() {
            " (Enter sends, Esc: nothing)"
        } else {
            " (Tab names, Enter sends, Esc: nothing)"
        };
        let before = cells::width(&label)
            + cells::width(&shown(
                &prompt.input.chars().take(prompt.cursor).collect::<String>(),
            ));
        let line = Line::from(vec![
            Span::styled(label, bold()),
            Span::raw(input),
            Span::styled(hint, dim()),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        let x = area.x
            + u16::try_from(before)
                .unwrap_or(u16::MAX)
                .min(area.width.saturating_sub(1));
        frame.set_cursor_position((x, area.y));
        return;
    }
    let mut keys: Vec<(&str, &str)> = vec![("?", "help"), ("q", "quit")];
    keys.extend(
        app.offered()
            .iter()
            .map(|key| (key.key.label, key.key.what)),
    );
    if app.agent.is_some() {
        keys.extend([("n", "send"), ("m", "message")]);
    }
    keys.extend([("Tab", "views"), ("f", "finished")]);
    let mut spans = Vec::new();
    for (key, what) in keys {
        spans.push(Span::styled(key, bold()));
        spans.push(Span::raw(format!(" {what}  ")));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Every key in two columns, those on the selected task dimmed where it does not offer
/// them the viewer now; and the marks.
fn draw_help(frame: &mut Frame, app: &App, area: Rect) {
    let offered: Vec<_> = app.offered().iter().map(|key| key.kind).collect();
    let selected = app
        .selected_view()
        .map_or("no task".to_string(), |view| view.task.id.to_string());
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{:<38}", "baton watch: keys"), bold()),
        Span::styled(format!("on {selected} (dim: not yours now)"), bold()),
    ])];
    for row in 0..KEYS.len().max(TASK_KEYS.len()) {
        let mut spans = Vec::new();
        let left = KEYS
            .get(row)
            .map_or(String::new(), |(key, what)| format!("{key:<10} {what}"));
        spans.push(Span::raw(format!("  {}", cells::pad(&left, 36))));
        if let Some(key) = TASK_KEYS.get(row) {
            let style = if offered.contains(&key.kind) {
                Style::new()
            } else {
                dim()
            };
            spans.push(Span::styled(
                format!("{:<10} {}", key.key.label, key.key.what),
                style,
            ));
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::styled("marks:", bold()));
    for pair in MARKS.chunks(2) {
        let text: Vec<String> = pair
            .iter()
            .map(|(mark, what)| cells::pad(&format!("  {mark}  {what}"), 38))
            .collect();
        lines.push(Line::raw(text.concat()));
    }
    lines.push(Line::styled(
        "Enter sends a prompt, Esc leaves it with nothing done · any key closes this",
        dim(),
    ));
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let popup = centered(area, 80, height);
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
    let buffer = buffer(app, width, height);
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
fn buffer(app: &App, width: u16, height: u16) -> ratatui::buffer::Buffer {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal
        .draw(|frame| draw(frame, app))
        .expect("a test draw");
    terminal.backend().buffer().clone()
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use ratatui::crossterm::event::KeyCode;
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

    use super::super::state::Snapshot;
    use super::super::testing::{app_for, key, snapshot, turn_of, typed, view, with_priority};
    use super::*;
    use baton::board::action::ActionKind;
    use baton::board::task::TaskId;

    fn app(views: Vec<TaskView>) -> App {
        app_for("boss", snapshot(views))
    }

    fn rows(screen: &str) -> Vec<&str> {
        screen.lines().collect()
    }

    #[test]
    fn at_80x24_the_board_lists_the_open_statuses_with_counts_most_urgent_first() {
        let mut app = app(vec![
            view(1, Status::Pending, "a normal one"),
            with_priority(view(2, Status::Pending, "a low one"), Priority::Low),
            with_priority(
                turn_of(
                    view(3, Status::Pending, "the urgent one"),
                    "worker",
                    Reason::Assigned,
                ),
                Priority::Urgent,
            ),
            view(4, Status::Working, "under way"),
            turn_of(
                view(5, Status::ReviewRequested, "look at it"),
                "boss",
                Reason::ReviewRequested,
            ),
            view(6, Status::Completed, "done long ago"),
            view(7, Status::Canceled, "dropped"),
        ]);
        let screen = screen(&app, 80, 24);
        let rows = rows(&screen);
        assert!(
            rows[0].starts_with("1:board 2:inbox(1) 3:messages 4:task"),
            "{screen}"
        );
        assert!(rows[0].contains("· demo · as boss"), "{screen}");
        assert_eq!(
            rows[1].trim_end(),
            "pending 3 · working 1 · review 1 │ finished 2: f shows them"
        );
        assert_eq!(rows[2].trim_end(), "pending (3)");
        assert_eq!(
            rows[3].trim_end(),
            " T-3 urgent worker       the urgent one"
        );
        assert_eq!(rows[4].trim_end(), " T-1 normal worker       a normal one");
        assert_eq!(rows[5].trim_end(), " T-2 low    worker       a low one");
        assert_eq!(rows[6].trim_end(), "working (1)");
        assert_eq!(rows[8].trim_end(), "review_requested (1)");
        assert!(rows[9].starts_with(">T-5 normal"), "{screen}");
        assert!(
            !screen.contains("done long ago"),
            "finished ones wait behind f:\n{screen}"
        );
        // The line under the list: the selected task, most urgent first.
        assert!(
            rows[22].starts_with("T-3 pending urgent · worker: to do · the urgent one"),
            "{screen}"
        );
        // The footer offers what boss may do to T-3: cancel and reassign, not claim.
        assert!(rows[23].contains("x cancel  R reassign"), "{}", rows[23]);
        assert!(!rows[23].contains("claim"), "{}", rows[23]);

        typed(&mut app, "f");
        let screen = super::screen(&app, 80, 24);
        assert!(screen.contains("completed (1)"), "{screen}");
        assert!(screen.contains("canceled (1)"), "{screen}");
        assert!(screen.contains("f hides them"), "{screen}");
    }

    #[test]
    fn the_footer_and_help_offer_only_what_the_viewer_may_do_to_the_selected_task() {
        let task = || {
            turn_of(
                view(1, Status::Pending, "for the worker"),
                "worker",
                Reason::Assigned,
            )
        };
        let worker = app_for("worker", snapshot(vec![task()]));
        let footer = screen(&worker, 80, 24)
            .lines()
            .nth(23)
            .unwrap_or_default()
            .to_string();
        assert!(
            footer.starts_with(
                "? help  q quit  c claim  i ask a question  v request review  d done  F fail"
            ),
            "{footer}"
        );
        assert!(
            !footer.contains("cancel") && !footer.contains("approve"),
            "{footer}"
        );

        // The help lists every key; those not offered now are dimmed.
        let mut boss = app(vec![task()]);
        typed(&mut boss, "?");
        let buffer = buffer(&boss, 80, 24);
        let text = screen(&boss, 80, 24);
        for (key, what) in KEYS {
            assert!(
                text.contains(&format!("{key:<10} {what}")),
                "{key}:\n{text}"
            );
        }
        for (mark, what) in MARKS {
            assert!(text.contains(&format!("{mark}  {what}")), "{mark}:\n{text}");
        }
        for task_key in TASK_KEYS {
            let label = format!("{:<10} {}", task_key.key.label, task_key.key.what);
            let (x, y) = find(&text, &label).unwrap_or_else(|| panic!("{label}:\n{text}"));
            let is_dim = buffer[(x, y)].fg == Color::DarkGray;
            let is_offered = matches!(task_key.kind, ActionKind::Cancel | ActionKind::Reassign);
            assert_eq!(is_dim, !is_offered, "{label}");
        }
    }

    /// Where `needle` starts on the screen, as a cell.
    fn find(screen: &str, needle: &str) -> Option<(u16, u16)> {
        screen.lines().enumerate().find_map(|(y, row)| {
            let at = row.find(needle)?;
            let x = row[..at].chars().count();
            Some((u16::try_from(x).ok()?, u16::try_from(y).ok()?))
        })
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
    fn joined_emoji_flags_marks_and_wide_text_stay_in_their_cells() {
        let hostile = "👨\u{200d}👩\u{200d}👧\u{200d}👦🇺🇸🇫🏳\u{fe0f}\u{200d}🌈👍🏽z\u{301}\u{302}\u{303}\u{304}漢字かな".repeat(3);
        let app = app(vec![
            view(1, Status::Pending, &hostile),
            view(2, Status::Pending, "the next row"),
        ]);
        let buffer = buffer(&app, 80, 24);
        let text = screen(&app, 80, 24);
        for y in 0..24 {
            // What a terminal that joins nothing draws (each character at its own width)
            // and what one that joins all Unicode joins draws: both the row's 80 cells.
            let (mut apart, mut joined, mut x) = (0, 0, 0);
            while x < 80 {
                let symbol = buffer[(x, y)].symbol();
                for c in symbol.chars() {
                    assert!(
                        !matches!(c, '\u{200d}' | '\u{fe0f}' | '\u{1f1e6}'..='\u{1f1ff}' | '\u{1f3fb}'..='\u{1f3ff}'),
                        "a joining character drawn raw at ({x}, {y}): {symbol:?}"
                    );
                }
                let wide = symbol.width().max(1);
                apart += symbol
                    .chars()
                    .filter_map(|c| c.width())
                    .sum::<usize>()
                    .max(1);
                joined += wide;
                x += u16::try_from(wide).unwrap_or(1);
            }
            assert_eq!((apart, joined), (80, 80), "row {y}:\n{text}");
        }
        let rows = rows(&text);
        assert!(
            rows[3].starts_with(" T-1 normal worker       👨 \\u{200d}👩 "),
            "{}",
            rows[3]
        );
        assert!(rows[3].trim_end().ends_with('…'), "{}", rows[3]);
        assert_eq!(rows[4].trim_end(), " T-2 normal worker       the next row");
        // And in the task view, wrapped: no row runs over.
        let mut app = app;
        app.on_key(key(KeyCode::Enter));
        let text = screen(&app, 80, 24);
        assert!(
            text.contains("z\u{301}\u{302}\\u{303}\\u{304}漢 字 か な"),
            "{text}"
        );
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
    fn the_inbox_shows_what_each_task_waits_for() {
        let mut app = app(vec![
            turn_of(
                view(1, Status::InputRequired, "which branch"),
                "boss",
                Reason::Question,
            ),
            view(2, Status::Working, "not for boss"),
            with_priority(
                turn_of(
                    view(3, Status::ReviewRequested, "look"),
                    "boss",
                    Reason::ReviewRequested,
                ),
                Priority::High,
            ),
        ]);
        typed(&mut app, "2");
        let screen = screen(&app, 80, 24);
        let rows = rows(&screen);
        assert!(rows[0].contains("2:inbox(2)"), "{screen}");
        assert!(
            rows[1].starts_with("inbox of boss: 2 tasks · 0 unread messages"),
            "{screen}"
        );
        assert_eq!(rows[2].trim_end(), ">T-3 high   review requested · look");
        assert_eq!(
            rows[3].trim_end(),
            ">T-1 normal question for you · which branch"
        );
        assert!(!screen.contains("not for boss"), "{screen}");
        // The footer offers what the selected task offers: a review to give.
        assert!(
            rows[23].contains("y/A approve  r request changes"),
            "{}",
            rows[23]
        );
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

    #[test]
    fn a_wide_terminal_shows_the_task_beside_the_list_and_the_activity() {
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
        let mut app = app_for("boss", snapshot);
        for _ in 0..500 {
            app.on_key(key(KeyCode::Down));
        }
        let started = Instant::now();
        let rounds = 20;
        let mut last = String::new();
        for _ in 0..rounds {
            last = screen(&app, 80, 24);
        }
        let per_draw = started.elapsed() / rounds;
        // A figure to read, not a bound to assert (STYLE rule 11).
        println!("10,000 tasks: grouped and sorted in {grouped:?}; one 80x24 draw in {per_draw:?}");
        let selected = app.selected.expect("a task");
        assert!(last.contains(&format!("{selected} ")), "{last}");
    }
}
