//! The lists of tasks: the board by status, most urgent first, and the viewer's inbox, one
//! row a task with its marks, drawn only as far as the screen shows them.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use baton::board::inbox::Reason;
use baton::board::task::{Priority, Status};
use baton::plural;
use baton::session::TaskView;
use baton::time::Timestamp;

use super::super::cells::{self, shown};
use super::super::state::{App, Pane, group_of};
use super::{WHO, bold, dim, line};

/// A row of a list: the heading of a status, or a task.
#[derive(Clone, Copy)]
pub(super) enum Row {
    Heading(Status, usize),
    Task(usize),
}

/// The board as a list: a line of counts, then each status listed that has tasks, its
/// heading and its tasks, most urgent first. Finished ones are listed behind `f`.
pub(super) fn draw_board(frame: &mut Frame, app: &App, area: Rect) {
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
    let empty = match (&app.search, snapshot.views.is_empty(), app.agent.is_some()) {
        (Some(words), true, _) => format!("no task holds `{}`: / changes the search", shown(words)),
        (None, true, true) => "no tasks here: n sends one".to_string(),
        (None, true, false) => "no tasks here".to_string(),
        (_, false, _) => "no open tasks: f shows the finished ones".to_string(),
    };
    draw_list(frame, app, area, Line::from(summary), &rows, &empty);
}

/// The inbox: the tasks whose turn is the viewer's, and what each waits for.
pub(super) fn draw_inbox(frame: &mut Frame, app: &App, area: Rect) {
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
pub(super) fn draw_list(
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
pub(super) fn task_row(
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

pub(super) fn priority_style(priority: Priority) -> Style {
    match priority {
        Priority::Urgent => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        Priority::High => Style::new().fg(Color::Yellow),
        Priority::Normal => Style::new(),
        Priority::Low => dim(),
    }
}

/// The one character that marks a task (a space for none), the first that applies.
pub(super) fn mark(view: &TaskView, now: Timestamp) -> char {
    let task = &view.task;
    if !view.blocked_by.is_empty() {
        '#'
    } else if view.held_by.is_some() {
        '~'
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
pub(super) fn short_name(status: Status) -> &'static str {
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

#[cfg(test)]
mod tests {
    use ratatui::crossterm::event::KeyCode;
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

    use super::super::tests::{app, rows};
    use super::super::{buffer, screen};
    use super::*;
    use crate::cli::tui::testing::{key, turn_of, typed, view, with_priority};

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
        let screen = super::super::screen(&app, 80, 24);
        assert!(screen.contains("completed (1)"), "{screen}");
        assert!(screen.contains("canceled (1)"), "{screen}");
        assert!(screen.contains("f hides them"), "{screen}");
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
}
