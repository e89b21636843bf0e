//! What the terminal board holds between draws: the board as last read, what is selected,
//! which view is shown, and the prompt being typed; and what each key does to it.
//!
//! Nothing here reads or writes the board: a key that acts returns an [`Effect`] for the
//! loop to carry out through the session, so this part is tested without a terminal or a
//! hub. The keys that act on a task, and the prompts they open, are in [`acting`].

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use baton::board::task::{Status, TaskId};
use baton::board::transition::Action;
use baton::session::TaskView;
use baton::worktree::diff::TaskDiff;

use super::keys::task_key;
pub use super::snapshot::{Snapshot, group_of};

mod acting;

pub use acting::{Prompt, Purpose};

/// What fills the screen between the header and the status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Board,
    Inbox,
    Messages,
    Task,
    Agents,
    Activity,
}

impl Pane {
    pub const ALL: [Pane; 6] = [
        Pane::Board,
        Pane::Inbox,
        Pane::Messages,
        Pane::Task,
        Pane::Agents,
        Pane::Activity,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Pane::Board => "board",
            Pane::Inbox => "inbox",
            Pane::Messages => "messages",
            Pane::Task => "task",
            Pane::Agents => "agents",
            Pane::Activity => "activity",
        }
    }

    /// Whether the view is a list of tasks that the arrows move through.
    pub fn is_list(self) -> bool {
        matches!(self, Pane::Board | Pane::Inbox)
    }
}

/// A line under the board saying what the last action did, or why it was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub is_error: bool,
}

/// What the loop must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Nothing,
    Quit,
    Act(TaskId, Action),
    Send {
        to: String,
        subject: String,
    },
    Message {
        to: String,
        text: String,
    },
    /// The messages shown count as read, up to and including this one.
    MarkRead(u64),
    /// Read the board again for only the tasks whose words hold these (`/`), or for all.
    Search(Option<String>),
    /// End `agent`'s reservation of `pattern`, which holds the selected task back.
    Unreserve {
        agent: String,
        pattern: String,
    },
}

/// How far PageUp and PageDown move.
const PAGE: usize = 10;

/// The whole state of the terminal board.
#[derive(Debug)]
pub struct App {
    /// Who acts: `--as`/`BATON_AGENT`; without one the board is read-only.
    pub agent: Option<String>,
    pub snapshot: Snapshot,
    pub pane: Pane,
    /// The list the selection moves through, and where Esc goes back to from the task.
    pub list: Pane,
    /// Whether the board lists finished tasks too.
    pub is_finished_shown: bool,
    /// The task selected: followed as its status changes, and shown in the task view.
    pub selected: Option<TaskId>,
    /// Where the selection was in its list, kept for when the task leaves the list.
    row: usize,
    /// A task to select once a read of the board shows it: one just sent, which a read
    /// begun before the send does not hold yet.
    wanted: Option<TaskId>,
    /// The viewer's inbox: places in the snapshot's views, in inbox order.
    pub inbox: Vec<usize>,
    /// How far the task view is scrolled down, in rows.
    pub scroll: usize,
    /// How far the messages are scrolled back from the newest, in rows.
    pub mail_scroll: usize,
    pub prompt: Option<Prompt>,
    pub is_help_shown: bool,
    pub notice: Option<Notice>,
    /// The newest message already asked to count as read.
    marked_read: u64,
    /// The diff of the selected task, when it has a worktree: read again at each read of
    /// the board, and when another task is selected.
    pub diff: Option<ShownDiff>,
    /// The words the board is searched for (`/`; SPEC section 19): a read of the board for
    /// other words (begun before they changed) is not shown.
    pub search: Option<String>,
    /// The label the board was started with (`watch --label`): only its tasks are shown,
    /// which the header says.
    pub label: Option<String>,
}

/// A task's diff as the task view shows it: read, or why it could not be.
#[derive(Debug, Clone)]
pub struct ShownDiff {
    pub task: TaskId,
    pub read: Result<TaskDiff, String>,
}

impl App {
    pub fn new(agent: Option<String>, snapshot: Snapshot) -> App {
        let search = snapshot.search.clone();
        let mut app = App {
            agent,
            snapshot,
            pane: Pane::Board,
            list: Pane::Board,
            is_finished_shown: false,
            selected: None,
            row: 0,
            wanted: None,
            inbox: Vec::new(),
            scroll: 0,
            mail_scroll: 0,
            prompt: None,
            is_help_shown: false,
            notice: None,
            marked_read: 0,
            diff: None,
            search,
            label: None,
        };
        app.inbox = app.inbox_of_snapshot();
        app.settle();
        app
    }

    /// Takes a fresh read of the board, keeping the selected task selected wherever it moved;
    /// unless it was read for other words than those searched for now, begun before they
    /// changed, which a read for these follows.
    pub fn replace(&mut self, snapshot: Snapshot) {
        if snapshot.search != self.search {
            return;
        }
        self.snapshot = snapshot;
        self.inbox = self.inbox_of_snapshot();
        if let Some(id) = self.wanted
            && self.snapshot.view(id).is_some()
        {
            self.selected = Some(id);
            self.wanted = None;
        }
        self.settle();
    }

    /// Selects the task `id` now, or once a read of the board shows it.
    pub fn select(&mut self, id: TaskId) {
        if self.snapshot.view(id).is_some() {
            self.selected = Some(id);
            self.wanted = None;
            self.settle();
        } else {
            self.wanted = Some(id);
        }
    }

    /// The selected task as last read.
    pub fn selected_view(&self) -> Option<&TaskView> {
        self.selected.and_then(|id| self.snapshot.view(id))
    }

    pub fn notify(&mut self, text: impl Into<String>, is_error: bool) {
        self.notice = Some(Notice {
            text: text.into(),
            is_error,
        });
    }

    /// The tasks whose turn is the viewer's, most urgent first, then oldest first (the
    /// order of `baton inbox`).
    fn inbox_of_snapshot(&self) -> Vec<usize> {
        let Some(agent) = &self.agent else {
            return Vec::new();
        };
        let views = &self.snapshot.views;
        let mut inbox: Vec<usize> = (0..views.len())
            .filter(|&place| {
                views[place].task.status.is_open() && views[place].turn.as_ref() == Some(agent)
            })
            .collect();
        inbox.sort_by_key(|&place| {
            let task = &views[place].task;
            (task.priority, task.created_at, task.id)
        });
        inbox
    }

    /// Whether the board lists tasks of `status`.
    pub fn is_listed(&self, status: Status) -> bool {
        status.is_open() || self.is_finished_shown
    }

    /// The tasks of the board view in the order it lists them: by status, then most urgent
    /// first.
    pub fn board_rows(&self) -> Vec<usize> {
        Status::ALL
            .iter()
            .filter(|status| self.is_listed(**status))
            .flat_map(|status| self.snapshot.groups[group_of(*status)].iter().copied())
            .collect()
    }

    /// The places of the tasks in the list the selection moves through.
    pub fn rows(&self) -> Vec<usize> {
        match self.list {
            Pane::Inbox => self.inbox.clone(),
            _ => self.board_rows(),
        }
    }

    /// Where the selection is in its list, if it is in it.
    pub fn selected_row(&self, rows: &[usize]) -> Option<usize> {
        let id = self.selected?;
        let place = *self.snapshot.places.get(&id)?;
        rows.iter().position(|&each| each == place)
    }

    /// Keeps the selection on a task of its list: the one selected wherever it is now, or
    /// in its place the task that took its row. The task view keeps showing its task while
    /// the board holds it, even once it has left the list (finished, out of the inbox).
    fn settle(&mut self) {
        let rows = self.rows();
        if let Some(row) = self.selected_row(&rows) {
            self.row = row;
            return;
        }
        if self.pane == Pane::Task && self.selected_view().is_some() {
            return;
        }
        self.row = self.row.min(rows.len().saturating_sub(1));
        self.selected = rows
            .get(self.row)
            .map(|&place| self.snapshot.views[place].task.id);
    }

    fn move_to(&mut self, row: usize) {
        let rows = self.rows();
        self.row = row.min(rows.len().saturating_sub(1));
        self.selected = rows
            .get(self.row)
            .map(|&place| self.snapshot.views[place].task.id);
        self.scroll = 0;
    }

    fn move_by(&mut self, step: isize) {
        let rows = self.rows();
        let row = self.selected_row(&rows).unwrap_or(self.row);
        self.move_to(row.saturating_add_signed(step));
    }

    /// ←→ on the board: the first task of the status before or after the selected one's.
    fn move_to_group(&mut self, forward: bool) {
        let rows = self.rows();
        let status_at = |row: usize| self.snapshot.views[rows[row]].task.status;
        let Some(row) = self.selected_row(&rows) else {
            return self.move_to(0);
        };
        let status = status_at(row);
        let target = if forward {
            (row..rows.len()).find(|&each| status_at(each) != status)
        } else {
            // The start of the group before: back past this group, then to that one's start.
            let before = (0..row).rev().find(|&each| status_at(each) != status);
            before.map(|end| {
                let status = status_at(end);
                (0..=end)
                    .rev()
                    .take_while(|&each| status_at(each) == status)
                    .last()
                    .unwrap_or(end)
            })
        };
        if let Some(target) = target {
            self.move_to(target);
        }
    }

    fn show(&mut self, pane: Pane) {
        self.pane = pane;
        if pane.is_list() && self.list != pane {
            self.list = pane;
            self.row = 0;
            self.settle();
        }
        if pane == Pane::Messages {
            self.mail_scroll = 0;
        }
    }

    /// Lists the finished tasks on the board, or stops listing them.
    pub fn toggle_finished(&mut self) {
        self.is_finished_shown = !self.is_finished_shown;
        self.settle();
    }

    /// The messages to count as read now: while the messages view is shown, any newer than
    /// those already asked for.
    pub fn unread_to_mark(&mut self) -> Option<Effect> {
        if self.pane != Pane::Messages {
            return None;
        }
        let newest = self
            .snapshot
            .mail
            .as_ref()?
            .messages
            .iter()
            .filter(|entry| entry.unread)
            .map(|entry| entry.message.seq)
            .max()?;
        if newest <= self.marked_read {
            return None;
        }
        self.marked_read = newest;
        Some(Effect::MarkRead(newest))
    }

    /// The unread messages as last read, less those already asked to count as read.
    pub fn unread_count(&self) -> usize {
        self.snapshot.mail.as_ref().map_or(0, |mail| {
            mail.messages
                .iter()
                .filter(|entry| entry.unread && entry.message.seq > self.marked_read)
                .count()
        })
    }

    /// What a key does: edits the prompt when one is open, else moves, switches views, or
    /// starts an action.
    pub fn on_key(&mut self, key: KeyEvent) -> Effect {
        if key.kind == KeyEventKind::Release {
            return Effect::Nothing;
        }
        if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
            return Effect::Quit;
        }
        if let Some(prompt) = self.prompt.take() {
            return self.on_prompt_key(prompt, key);
        }
        if self.is_help_shown {
            // Any key closes the help; `q` still quits.
            self.is_help_shown = false;
            if key.code != KeyCode::Char('q') {
                return Effect::Nothing;
            }
        }
        // What the last key did is said until the next one: a notice about one task must
        // not stay under another selected since.
        self.notice = None;
        if let Some(task_key) = task_key(key.code) {
            return self.on_task_key(task_key);
        }
        match key.code {
            KeyCode::Char('q') => return Effect::Quit,
            KeyCode::Char('?') => self.is_help_shown = true,
            KeyCode::Up | KeyCode::Char('k') => self.scroll_or_move(-1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll_or_move(1),
            KeyCode::PageUp => self.scroll_or_move(-(PAGE as isize)),
            KeyCode::PageDown => self.scroll_or_move(PAGE as isize),
            KeyCode::Left | KeyCode::Char('h') if self.pane == Pane::Board => {
                self.move_to_group(false)
            }
            KeyCode::Right | KeyCode::Char('l') if self.pane == Pane::Board => {
                self.move_to_group(true)
            }
            KeyCode::Char('g') | KeyCode::Home if self.pane.is_list() => self.move_to(0),
            KeyCode::Char('G') | KeyCode::End if self.pane.is_list() => self.move_to(usize::MAX),
            KeyCode::Char('f') => {
                self.toggle_finished();
                let what = if self.is_finished_shown {
                    "finished tasks shown under the open ones; f hides them"
                } else {
                    "finished tasks hidden; f shows them"
                };
                self.notify(what, false);
            }
            KeyCode::Enter if self.pane.is_list() || self.pane == Pane::Task => {
                self.scroll = 0;
                self.pane = Pane::Task;
            }
            KeyCode::Esc => {
                self.pane = self.list;
                self.settle();
            }
            KeyCode::Tab => self.show(next_pane(self.pane, 1)),
            KeyCode::BackTab => self.show(next_pane(self.pane, Pane::ALL.len() - 1)),
            KeyCode::Char(digit @ '1'..='6') => {
                self.show(Pane::ALL[digit as usize - '1' as usize]);
            }
            KeyCode::Char('U') => return self.end_hold(),
            KeyCode::Char('n') => self.ask(Prompt {
                choices: self.names(None, false),
                ..Prompt::new(Purpose::SendTo)
            }),
            KeyCode::Char('m') => self.ask(Prompt {
                choices: self.names(None, true),
                ..Prompt::new(Purpose::MessageTo)
            }),
            // Read-only boards search too: nothing is changed.
            KeyCode::Char('/') => self.prompt = Some(Prompt::search(self.search.as_deref())),
            _ => {}
        }
        Effect::Nothing
    }

    /// `U`: ends the reservation that holds the selected task back (the holder's own, or
    /// the coordinator's or a human's for another agent: the hub refuses anyone else).
    fn end_hold(&mut self) -> Effect {
        let held = self
            .selected_view()
            .map(|view| (view.task.id, view.held_by.clone()));
        match held {
            Some((_, Some(holder))) => Effect::Unreserve {
                agent: holder.agent,
                pattern: holder.pattern,
            },
            Some((id, None)) => {
                self.notify(format!("{id} is held by no reservation"), true);
                Effect::Nothing
            }
            None => Effect::Nothing,
        }
    }

    /// ↑↓: through the list, or the rows of the view that scrolls.
    fn scroll_or_move(&mut self, step: isize) {
        match self.pane {
            Pane::Task => self.scroll = self.scroll.saturating_add_signed(step),
            // Up goes back to older messages.
            Pane::Messages => self.mail_scroll = self.mail_scroll.saturating_add_signed(-step),
            Pane::Board | Pane::Inbox => self.move_by(step),
            Pane::Agents | Pane::Activity => {}
        }
    }
}

fn next_pane(pane: Pane, step: usize) -> Pane {
    let place = Pane::ALL.iter().position(|each| *each == pane).unwrap_or(0);
    Pane::ALL[(place + step) % Pane::ALL.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tui::testing::{
        app_as, app_for, key, offered_to, snapshot, turn_of, typed, view, with_priority,
    };
    use baton::board::inbox::Reason;
    use baton::board::task::Priority;

    #[test]
    fn the_selection_follows_a_task_that_changes_status() {
        let mut app = app_as(
            "boss",
            vec![
                view(1, Status::Pending, "one"),
                view(2, Status::Pending, "two"),
            ],
        );
        app.on_key(key(KeyCode::Down));
        assert_eq!(app.selected, Some(TaskId(2)));
        app.replace(offered_to(
            "boss",
            snapshot(vec![
                view(1, Status::Pending, "one"),
                view(2, Status::ReviewRequested, "two"),
            ]),
        ));
        assert_eq!(app.selected, Some(TaskId(2)));
        assert_eq!(app.selected_row(&app.rows()), Some(1));
    }

    #[test]
    fn within_a_status_the_most_urgent_come_first_then_by_id() {
        let app = app_as(
            "boss",
            vec![
                with_priority(view(1, Status::Pending, "low"), Priority::Low),
                view(2, Status::Working, "working"),
                view(3, Status::Pending, "normal"),
                with_priority(view(4, Status::Pending, "urgent"), Priority::Urgent),
                with_priority(view(5, Status::Pending, "high"), Priority::High),
                with_priority(view(6, Status::Pending, "urgent too"), Priority::Urgent),
            ],
        );
        let ids: Vec<u64> = app
            .board_rows()
            .iter()
            .map(|&place| app.snapshot.views[place].task.id.0)
            .collect();
        assert_eq!(ids, vec![4, 6, 5, 3, 1, 2]);
    }

    #[test]
    fn finished_tasks_are_listed_only_behind_f() {
        let mut app = app_as(
            "boss",
            vec![
                view(1, Status::Completed, "done"),
                view(2, Status::Pending, "open"),
            ],
        );
        assert_eq!(app.board_rows().len(), 1);
        assert_eq!(app.selected, Some(TaskId(2)));
        typed(&mut app, "f");
        assert_eq!(app.board_rows().len(), 2);
        typed(&mut app, "G");
        assert_eq!(app.selected, Some(TaskId(1)));
        typed(&mut app, "f");
        assert_eq!(app.selected, Some(TaskId(2)), "the selection left the list");
    }

    #[test]
    fn a_task_just_sent_is_selected_once_a_read_shows_it() {
        let mut app = app_as("boss", vec![view(1, Status::Pending, "one")]);
        app.select(TaskId(2));
        assert_eq!(app.selected, Some(TaskId(1)));
        // A read begun before the send: no task 2 yet.
        app.replace(snapshot(vec![view(1, Status::Pending, "one")]));
        assert_eq!(app.selected, Some(TaskId(1)));
        app.replace(snapshot(vec![
            view(1, Status::Pending, "one"),
            view(2, Status::Pending, "two"),
        ]));
        assert_eq!(app.selected, Some(TaskId(2)));
    }

    #[test]
    fn the_inbox_holds_the_viewers_turns_most_urgent_first() {
        let mut app = app_as(
            "boss",
            vec![
                turn_of(
                    view(1, Status::InputRequired, "q"),
                    "boss",
                    Reason::Question,
                ),
                view(2, Status::Pending, "not mine"),
                with_priority(
                    turn_of(
                        view(3, Status::ReviewRequested, "r"),
                        "boss",
                        Reason::ReviewRequested,
                    ),
                    Priority::Urgent,
                ),
            ],
        );
        let ids: Vec<u64> = app
            .inbox
            .iter()
            .map(|&place| app.snapshot.views[place].task.id.0)
            .collect();
        assert_eq!(ids, vec![3, 1]);
        typed(&mut app, "2");
        assert_eq!(app.pane, Pane::Inbox);
        assert_eq!(app.selected, Some(TaskId(3)));
        typed(&mut app, "j");
        assert_eq!(app.selected, Some(TaskId(1)));
        // Enter shows it; Esc goes back to the inbox.
        app.on_key(key(KeyCode::Enter));
        assert_eq!(app.pane, Pane::Task);
        app.on_key(key(KeyCode::Esc));
        assert_eq!(app.pane, Pane::Inbox);
    }

    #[test]
    fn messages_shown_count_as_read_once() {
        let now = baton::time::now();
        let mut snapshot = snapshot(Vec::new());
        snapshot.mail = Some(
            serde_json::from_value(serde_json::json!({
                "agent": "boss", "project": "demo",
                "messages": [{"seq": 4, "at": now.to_string(), "from": "worker", "to": "boss",
                              "type": "text", "summary": "hi", "body": "hi", "unread": true}],
            }))
            .expect("mail"),
        );
        let mut app = app_for("boss", snapshot);
        assert_eq!(app.unread_count(), 1);
        assert_eq!(app.unread_to_mark(), None, "not while the board is shown");
        typed(&mut app, "3");
        assert_eq!(app.unread_to_mark(), Some(Effect::MarkRead(4)));
        assert_eq!(app.unread_to_mark(), None);
        assert_eq!(app.unread_count(), 0);
    }

    #[test]
    fn u_ends_the_reservation_that_holds_the_selected_task() {
        let mut held = view(2, Status::Pending, "docs");
        held.held_by = Some(
            serde_json::from_value(serde_json::json!({
                "id": 1, "pattern": "src/**", "agent": "codex", "task": 1, "exclusive": true,
                "created_at": baton::time::now().to_string(), "expires_at": null,
            }))
            .expect("a reservation"),
        );
        let mut app = app_as("boss", vec![view(1, Status::Working, "parser"), held]);
        app.select(TaskId(1));
        assert_eq!(app.on_key(key(KeyCode::Char('U'))), Effect::Nothing);
        assert!(app.notice.as_ref().is_some_and(|notice| notice.is_error));
        app.select(TaskId(2));
        assert_eq!(
            app.on_key(key(KeyCode::Char('U'))),
            Effect::Unreserve {
                agent: "codex".into(),
                pattern: "src/**".into(),
            }
        );
        let screen = crate::cli::tui::draw::screen(&app, 100, 20);
        assert!(screen.contains("~"), "{screen}");
    }
}
