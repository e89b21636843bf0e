//! Drawing the terminal board: the board as a list by status, the inbox, the messages, the
//! task with its thread, the agents matrix and the activity feed, a status line and the
//! keys the selected task offers.
//!
//! Every line reaches the screen through [`cells::shown`]: what an agent wrote escaped as
//! SPEC section 10 says (one-line fields inline, multi-line text framed by the same
//! renderings the CLI prints, `render::task_detail`, `render::message_entry`), and nothing
//! whose width terminals disagree on. Lines longer than their pane wrap with their frame
//! ([`cells::wrap`]), the activity's under their time ([`cells::wrap_under`]). Only the rows
//! that fit are formatted, so a board of 10,000 tasks costs what a screenful costs.
//!
//! Here the screen's layout, its header, status line, footer and help; the lists of tasks
//! in [`lists`], and the panes beside them (the task, messages, agents, activity) in
//! [`panes`].

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::cells::{self, shown};
use super::keys::TASK_KEYS;
use super::state::{App, Pane, Purpose};

mod lists;
mod panes;

use lists::{draw_board, draw_inbox};
use panes::{draw_activity, draw_agents, draw_messages, draw_task};

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
    ("/", "search the tasks' words"),
    ("n", "send a task"),
    ("m", "message (or @all)"),
    ("U", "end what holds a task"),
];

/// The marks a task row carries in one character each, and what they mean (the help
/// lists them).
pub const MARKS: &[(char, &str)] = &[
    ('#', "blocked by unfinished tasks"),
    ('~', "held: what it touches is taken"),
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
    // Only the label's tasks are shown: say so where the project is named, as a chip.
    let label = match &app.label {
        Some(label) => format!(" [{}]", cells::cut(&shown(label), 16)),
        None => String::new(),
    };
    spans.push(Span::styled(
        format!(
            "· {}{label} · {who}",
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

/// The prompt being typed, else the keys that fit: help and quit, those the selected task
/// offers the viewer, then the rest ([`footer_keys`]).
fn draw_footer(frame: &mut Frame, app: &App, area: Rect) {
    if let Some(prompt) = &app.prompt {
        let label = format!("{} ", shown(&prompt.purpose.label()));
        let input = shown(&prompt.input);
        let hint = if prompt.purpose.is_confirmation() {
            ""
        } else if prompt.purpose == Purpose::Search {
            " (Enter shows the tasks holding it, Esc shows all)"
        } else if prompt.choices.is_empty() {
            " (Enter sends, Esc: nothing)"
        } else {
            " (Tab names, Enter sends, Esc: nothing)"
        };
        let before = cells::width(&label)
            + cells::width(&shown(
                &prompt.input.chars().take(prompt.cursor).collect::<String>(),
            ));
        // The hint only where it fits whole after what is typed.
        let typed = cells::width(&label) + cells::width(&input);
        let hint = match typed + hint.len() <= usize::from(area.width) {
            true => hint,
            false => "",
        };
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
    // A search on says so right after help and quit: the board shows only some tasks.
    let searched = app
        .search
        .as_ref()
        .map(|words| format!("search: {}", cells::cut(&shown(words), SEARCH_SHOWN)));
    let mut keys: Vec<(&str, &str)> = vec![("?", "help"), ("q", "quit")];
    if let Some(searched) = &searched {
        keys.push(("/", searched));
    }
    keys.extend(
        app.offered()
            .iter()
            .map(|key| (key.key.label, key.key.what)),
    );
    if app.agent.is_some() {
        keys.extend([("n", "send"), ("m", "message")]);
    }
    if searched.is_none() {
        keys.push(("/", "search"));
    }
    keys.extend([("Tab", "views"), ("f", "finished")]);
    let mut spans = Vec::new();
    for (key, what) in footer_keys(&keys, usize::from(area.width)) {
        if !spans.is_empty() {
            spans.push(Span::raw(FOOTER_GAP));
        }
        spans.push(Span::styled(key, bold()));
        let style = match searched.as_deref() == Some(what) {
            true => Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            false => Style::new(),
        };
        spans.push(Span::styled(format!(" {what}"), style));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// What stands between two keys of the footer.
const FOOTER_GAP: &str = "  ";

/// The most cells of the words searched for that the footer shows.
const SEARCH_SHOWN: usize = 24;

/// The keys of `keys` (most wanted first) that fit whole in `room` cells, in their order: a
/// key that does not fit is left out, and a later, shorter one may take its place. None is
/// ever cut: the help (`?`, always first) lists them all.
fn footer_keys<'a>(keys: &[(&'a str, &'a str)], room: usize) -> Vec<(&'a str, &'a str)> {
    let mut used = 0;
    let mut shown = Vec::new();
    for &(key, what) in keys {
        let gap = if shown.is_empty() {
            0
        } else {
            FOOTER_GAP.len()
        };
        let cells = gap + cells::width(key) + 1 + cells::width(what);
        if used + cells <= room {
            used += cells;
            shown.push((key, what));
        }
    }
    shown
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

    use super::super::state;
    use super::super::testing::{app_for, key, snapshot, turn_of, typed, view};
    use super::*;
    use baton::board::action::ActionKind;
    use baton::board::inbox::Reason;
    use baton::board::task::Status;
    use baton::session::TaskView;

    pub(super) fn app(views: Vec<TaskView>) -> App {
        app_for("boss", snapshot(views))
    }

    pub(super) fn rows(screen: &str) -> Vec<&str> {
        screen.lines().collect()
    }

    /// Where `needle` starts on the screen, as a cell.
    pub(super) fn find(screen: &str, needle: &str) -> Option<(u16, u16)> {
        screen.lines().enumerate().find_map(|(y, row)| {
            let at = row.find(needle)?;
            let x = row[..at].chars().count();
            Some((u16::try_from(x).ok()?, u16::try_from(y).ok()?))
        })
    }

    #[test]
    fn a_board_started_for_a_label_says_so_in_its_header_at_80_columns() {
        let mut labelled = app(vec![view(1, Status::Pending, "a bug")]);
        let header = |app: &App| {
            let screen = screen(app, 80, 24);
            screen
                .lines()
                .next()
                .unwrap_or_default()
                .trim_end()
                .to_string()
        };
        assert!(!header(&labelled).contains('['), "{}", header(&labelled));
        labelled.label = Some("bug".to_string());
        let shown = header(&labelled);
        assert!(shown.ends_with("· demo [bug] · as boss"), "{shown}");
        labelled.label = Some("bug\u{1b}[2J".to_string());
        let shown = header(&labelled);
        assert!(shown.contains("[bug\\u{1b}[2J]"), "{shown}");
        assert!(!shown.contains('\u{1b}'), "{shown}");
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
            let is_offered = matches!(
                task_key.kind,
                ActionKind::Cancel | ActionKind::Reassign | ActionKind::Edit
            );
            assert_eq!(is_dim, !is_offered, "{label}");
        }
    }

    /// Every key the footer may show, as it shows one: `c claim`.
    fn footer_hints() -> Vec<String> {
        let mut hints: Vec<String> = [
            ("?", "help"),
            ("q", "quit"),
            ("n", "send"),
            ("m", "message"),
            ("/", "search"),
            ("Tab", "views"),
            ("f", "finished"),
        ]
        .iter()
        .map(|(key, what)| format!("{key} {what}"))
        .collect();
        hints.extend(
            TASK_KEYS
                .iter()
                .map(|row| format!("{} {}", row.key.label, row.key.what)),
        );
        hints
    }

    #[test]
    fn the_footer_at_80_columns_shows_whole_keys_only_the_tasks_first() {
        let hints = footer_hints();
        // The assignee of a pending task and its sender, who are offered the most.
        let task = || {
            turn_of(
                view(1, Status::Pending, "for the worker"),
                "worker",
                Reason::Assigned,
            )
        };
        for viewer in ["worker", "boss"] {
            let app = app_for(viewer, snapshot(vec![task()]));
            let footer = rows(&screen(&app, 80, 24))[23].trim_end().to_string();
            let shown: Vec<&str> = footer.split(FOOTER_GAP).collect();
            for piece in &shown {
                assert!(
                    hints.iter().any(|hint| hint == piece),
                    "{viewer}: `{piece}` is no whole key: {footer:?}"
                );
            }
            assert_eq!(&shown[..2], ["? help", "q quit"], "{viewer}: {footer:?}");
            // The task's keys come before the rest, as many as fit.
            let offered: Vec<String> = app
                .offered()
                .iter()
                .map(|key| format!("{} {}", key.key.label, key.key.what))
                .collect();
            assert!(!offered.is_empty(), "{viewer}");
            assert_eq!(shown[2], offered[0], "{viewer}: {footer:?}");
            // Wide enough, it shows them all.
            let wide = rows(&screen(&app, 200, 24))[23].trim_end().to_string();
            assert!(
                wide.ends_with("Tab views  f finished"),
                "{viewer}: {wide:?}"
            );
            for key in &offered {
                assert!(wide.contains(key.as_str()), "{viewer}: {key} in {wide:?}");
            }
        }
        // Narrower still: fewer keys, none cut.
        let narrow = app_for("worker", snapshot(vec![task()]));
        let footer = rows(&screen(&narrow, 31, 24))[23].trim_end().to_string();
        assert_eq!(footer, "? help  q quit  c claim  d done", "{footer:?}");
    }

    #[test]
    fn a_search_on_is_said_in_the_footer_and_an_empty_board_says_what_was_searched() {
        let mut app = app(vec![view(1, Status::Pending, "Fix the parser")]);
        let footer = rows(&screen(&app, 80, 24))[23].trim_end().to_string();
        assert!(footer.contains("/ search"), "{footer:?}");
        typed(&mut app, "/");
        let prompt = rows(&screen(&app, 80, 24))[23].trim_end().to_string();
        assert!(
            prompt.starts_with("search subjects, bodies, threads:"),
            "{prompt:?}"
        );
        typed(&mut app, "parser");
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            state::Effect::Search(Some("parser".to_string()))
        );
        let mut found = snapshot(vec![view(1, Status::Pending, "Fix the parser")]);
        found.search = Some("parser".to_string());
        app.replace(found);
        let searched = screen(&app, 80, 24);
        let footer = rows(&searched)[23].trim_end();
        assert!(
            footer.starts_with("? help  q quit  / search: parser  "),
            "{footer:?}"
        );
        let (x, y) = find(&searched, "search: parser").expect(&searched);
        assert_eq!(buffer(&app, 80, 24)[(x, y)].fg, Color::Yellow);
        let mut none = snapshot(Vec::new());
        none.search = Some("parser".to_string());
        app.replace(none);
        let empty = screen(&app, 80, 24);
        assert!(
            empty.contains("no task holds `parser`: / changes the search"),
            "{empty}"
        );
    }

    #[test]
    fn a_prompt_longer_than_the_footer_leaves_out_its_hint() {
        let mut app = app(vec![view(1, Status::Pending, "long words")]);
        typed(&mut app, "m");
        let short = rows(&screen(&app, 80, 24))[23].trim_end().to_string();
        assert!(short.starts_with("message to agent"), "{short:?}");
        assert!(short.ends_with("Enter sends, Esc: nothing)"), "{short:?}");
        typed(&mut app, &"word ".repeat(8));
        let long = rows(&screen(&app, 80, 24))[23].trim_end().to_string();
        assert!(!long.contains("Enter"), "{long:?}");
        assert!(long.ends_with("word word"), "{long:?}");
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
