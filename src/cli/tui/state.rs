//! What the terminal board holds between draws: the board as last read, what is selected,
//! which view is shown, and the prompt being typed; and what each key does to it.
//!
//! Nothing here reads or writes the board: a key that acts returns an [`Effect`] for the
//! loop to carry out through the session, so this part is tested without a terminal or a
//! hub. What a key offers for the selected task is what the session judged and the board
//! read carries ([`TaskView::offers`]), so a key that cannot apply says why, in the words the
//! CLI would refuse with, before any words are asked for.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use baton::board::action::ActionKind;
use baton::board::task::{Status, TaskId};
use baton::board::transition::Action;
use baton::mail::BROADCAST;
use baton::session::TaskView;
use baton::text::inline;

use super::keys::{self, TASK_KEYS, TaskKey, Words, action_of, task_key};
pub use super::snapshot::{Snapshot, group_of};

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

/// What the line being typed at the bottom is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// The words of a task key's action.
    Act {
        id: TaskId,
        action: ActionKind,
    },
    /// A last word before an action that nothing undoes (its row [`confirms`]): one key,
    /// `y` or anything else.
    ///
    /// [`confirms`]: baton::board::action::Row::confirms
    Confirm {
        id: TaskId,
        action: ActionKind,
        words: String,
    },
    SendTo,
    SendSubject {
        to: String,
    },
    MessageTo,
    MessageText {
        to: String,
    },
}

impl Purpose {
    /// The words before the typed line.
    pub fn label(&self) -> String {
        match self {
            Purpose::Act { id, action } => action.row().prompt(id),
            Purpose::Confirm { id, action, .. } => {
                format!("{action} {id} for good? y {action}s it, any other key keeps it")
            }
            Purpose::SendTo => "send a task to agent:".to_string(),
            Purpose::SendSubject { to } => format!("send to {to}, subject:"),
            Purpose::MessageTo => "message to agent (or @all):".to_string(),
            Purpose::MessageText { to } => format!("message to {to}:"),
        }
    }

    /// Whether the prompt takes a single key rather than a line.
    pub fn is_confirmation(&self) -> bool {
        matches!(self, Purpose::Confirm { .. })
    }
}

/// A one-line editor: the text and where the cursor is in it, counted in characters, and
/// the names Tab offers in turn where a name is asked for (none is typed for you).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub purpose: Purpose,
    pub input: String,
    pub cursor: usize,
    pub choices: Vec<String>,
}

impl Prompt {
    fn new(purpose: Purpose) -> Prompt {
        Prompt {
            purpose,
            input: String::new(),
            cursor: 0,
            choices: Vec::new(),
        }
    }

    fn byte_at(&self, cursor: usize) -> usize {
        self.input
            .char_indices()
            .nth(cursor)
            .map_or(self.input.len(), |(at, _)| at)
    }

    /// Tab: the next name offered after the one typed, or the first that starts with what
    /// is typed.
    fn complete(&mut self) {
        let typed = self.input.trim();
        let next = match self.choices.iter().position(|choice| choice == typed) {
            Some(at) => self.choices.get((at + 1) % self.choices.len()),
            None => self
                .choices
                .iter()
                .find(|choice| choice.starts_with(typed))
                .or(self.choices.first()),
        };
        if let Some(next) = next.cloned() {
            self.cursor = next.chars().count();
            self.input = next;
        }
    }

    /// Edits the line; false for a key that is not an edit.
    fn edit(&mut self, key: KeyEvent) -> bool {
        let length = self.input.chars().count();
        match key.code {
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.input.clear();
                self.cursor = 0;
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                let at = self.byte_at(self.cursor);
                self.input.insert(at, c);
                self.cursor += 1;
            }
            KeyCode::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                let at = self.byte_at(self.cursor);
                self.input.remove(at);
            }
            KeyCode::Delete if self.cursor < length => {
                let at = self.byte_at(self.cursor);
                self.input.remove(at);
            }
            KeyCode::Tab if !self.choices.is_empty() => self.complete(),
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(length),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = length,
            _ => return false,
        }
        true
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
}

impl App {
    pub fn new(agent: Option<String>, snapshot: Snapshot) -> App {
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
        };
        app.inbox = app.inbox_of_snapshot();
        app.settle();
        app
    }

    /// Takes a fresh read of the board, keeping the selected task selected wherever it moved.
    pub fn replace(&mut self, snapshot: Snapshot) {
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

    /// The task keys the selected task offers the viewer now.
    pub fn offered(&self) -> Vec<&'static TaskKey> {
        let Some(offers) = self.selected_view().and_then(|view| view.offers.as_ref()) else {
            return Vec::new();
        };
        TASK_KEYS
            .iter()
            .filter(|key| offers.allows(key.kind))
            .collect()
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
            KeyCode::Char('n') => self.ask(Prompt {
                choices: self.names(None, false),
                ..Prompt::new(Purpose::SendTo)
            }),
            KeyCode::Char('m') => self.ask(Prompt {
                choices: self.names(None, true),
                ..Prompt::new(Purpose::MessageTo)
            }),
            _ => {}
        }
        Effect::Nothing
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

    /// The names Tab offers: the agents but the viewer and `but`, and `@all` for a message.
    fn names(&self, but: Option<&str>, with_everyone: bool) -> Vec<String> {
        let mut names: Vec<String> = self
            .snapshot
            .agent_names()
            .into_iter()
            .filter(|name| Some(name) != self.agent.as_ref() && Some(name.as_str()) != but)
            .collect();
        if with_everyone {
            names.push(BROADCAST.to_string());
        }
        names
    }

    /// A key that acts on the selected task: refused at once, with the state machine's
    /// words, when the task does not offer it the viewer; else it acts, or asks for its
    /// words.
    fn on_task_key(&mut self, key: &TaskKey) -> Effect {
        if self.agent.is_none() {
            self.notify_read_only();
            return Effect::Nothing;
        }
        let Some(view) = self.selected_view() else {
            self.notify("no task selected: move onto one with the arrows", true);
            return Effect::Nothing;
        };
        let id = view.task.id;
        let offers = view.offers.as_ref();
        if !offers.is_some_and(|offers| offers.allows(key.kind)) {
            let refusal = match offers.and_then(|offers| offers.refusal(key.kind)) {
                Some(refusal) => format!("error: {}", inline(refusal)),
                None => format!("error: {} cannot be done to {id} now", key.key.what),
            };
            self.notify(refusal, true);
            return Effect::Nothing;
        }
        let assignee = view.task.to.clone();
        if keys::words(key) == Words::None {
            return action_of(key.kind, String::new())
                .map_or(Effect::Nothing, |action| Effect::Act(id, action));
        }
        let mut prompt = Prompt::new(Purpose::Act {
            id,
            action: key.kind,
        });
        if keys::words(key) == Words::Agent {
            prompt.choices = self.names(Some(&assignee), false);
        }
        self.ask(prompt);
        Effect::Nothing
    }

    fn notify_read_only(&mut self) {
        self.notify(
            "read-only: this board has no identity; start it with --as NAME or \
             BATON_AGENT=NAME to act",
            true,
        );
    }

    /// Opens the prompt, unless there is nobody to act as.
    fn ask(&mut self, prompt: Prompt) {
        if self.agent.is_none() {
            self.notify_read_only();
            return;
        }
        self.prompt = Some(prompt);
    }

    fn on_prompt_key(&mut self, mut prompt: Prompt, key: KeyEvent) -> Effect {
        if let Purpose::Confirm { id, action, words } = prompt.purpose {
            if key.code == KeyCode::Char('y') {
                return action_of(action, words)
                    .map_or(Effect::Nothing, |action| Effect::Act(id, action));
            }
            self.notify_nothing_done(Some(id));
            return Effect::Nothing;
        }
        match key.code {
            KeyCode::Esc => {
                let id = match prompt.purpose {
                    Purpose::Act { id, .. } => Some(id),
                    _ => None,
                };
                self.notify_nothing_done(id);
                Effect::Nothing
            }
            KeyCode::Enter => self.submit(prompt),
            _ => {
                prompt.edit(key);
                self.prompt = Some(prompt);
                Effect::Nothing
            }
        }
    }

    /// "nothing done", not "canceled": canceled is what a task becomes.
    fn notify_nothing_done(&mut self, id: Option<TaskId>) {
        let text = match id.and_then(|id| self.snapshot.view(id)) {
            Some(view) => format!("nothing done: {} stays {}", view.task.id, view.task.status),
            None => "nothing done".to_string(),
        };
        self.notify(text, false);
    }

    /// What Enter on the prompt does: an action, or the next question of a two-step one.
    /// Words that must be there and are not keep the prompt open, saying so.
    fn submit(&mut self, prompt: Prompt) -> Effect {
        let words = prompt.input.clone();
        let name = words.trim().to_string();
        let missing = match &prompt.purpose {
            Purpose::Act { action, .. } => match keys::words(action.row()) {
                Words::Required if name.is_empty() => Some("some words"),
                Words::Agent if name.is_empty() => Some("an agent's name (Tab offers them)"),
                _ => None,
            },
            Purpose::SendTo | Purpose::MessageTo if name.is_empty() => {
                Some("an agent's name (Tab offers them)")
            }
            Purpose::SendSubject { .. } | Purpose::MessageText { .. } if name.is_empty() => {
                Some("some words")
            }
            _ => None,
        };
        if let Some(missing) = missing {
            self.notify(
                format!(
                    "{} needs {missing}; Esc does nothing",
                    prompt.purpose.label().trim_end_matches(':')
                ),
                true,
            );
            self.prompt = Some(prompt);
            return Effect::Nothing;
        }
        match prompt.purpose {
            Purpose::Act { id, action } if action.row().confirms => {
                self.prompt = Some(Prompt::new(Purpose::Confirm { id, action, words }));
                Effect::Nothing
            }
            Purpose::Act { id, action } => {
                action_of(action, words).map_or(Effect::Nothing, |action| Effect::Act(id, action))
            }
            Purpose::Confirm { .. } => Effect::Nothing,
            Purpose::SendTo => {
                self.prompt = Some(Prompt::new(Purpose::SendSubject { to: name }));
                Effect::Nothing
            }
            Purpose::SendSubject { to } => Effect::Send { to, subject: words },
            Purpose::MessageTo => {
                self.prompt = Some(Prompt::new(Purpose::MessageText { to: name }));
                Effect::Nothing
            }
            Purpose::MessageText { to } => Effect::Message { to, text: words },
        }
    }
}

fn next_pane(pane: Pane, step: usize) -> Pane {
    let place = Pane::ALL.iter().position(|each| *each == pane).unwrap_or(0);
    Pane::ALL[(place + step) % Pane::ALL.len()]
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use baton::board::inbox::Reason;
    use baton::board::offers::Offers;
    use baton::board::task::{Priority, Task};
    use baton::board::transition::Rules;
    use baton::session::AgentMatrix;

    pub fn view(id: u64, status: Status, subject: &str) -> TaskView {
        let now = baton::time::now();
        let task: Task = serde_json::from_value(serde_json::json!({
            "id": id, "subject": subject, "from": "boss", "to": "worker",
            "status": status.as_str(), "priority": "normal",
            "created_at": now.to_string(), "updated_at": now.to_string(),
        }))
        .expect("a task");
        TaskView {
            task,
            turn: None,
            reason: None,
            blocked_by: Vec::new(),
            stalled: false,
            archived: false,
            offers: None,
        }
    }

    /// A task whose turn is `owner`'s, for `reason`.
    pub fn turn_of(mut view: TaskView, owner: &str, reason: Reason) -> TaskView {
        view.turn = Some(owner.to_string());
        view.reason = Some(reason);
        view
    }

    pub fn with_priority(mut view: TaskView, priority: Priority) -> TaskView {
        view.task.priority = priority;
        view
    }

    pub fn snapshot(views: Vec<TaskView>) -> Snapshot {
        Snapshot::new(
            "demo".to_string(),
            baton::time::now(),
            views,
            None,
            Vec::new(),
        )
    }

    /// `snapshot` as `agent` reads it: each task with what `agent` may do with it, judged
    /// by the state machine as the session judges it, with no coordinator and each task
    /// waiting on those it is blocked by.
    pub fn offered_to(agent: &str, mut snapshot: Snapshot) -> Snapshot {
        for view in &mut snapshot.views {
            let waiting_on: Vec<(TaskId, Status)> = view
                .blocked_by
                .iter()
                .map(|id| (*id, Status::Pending))
                .collect();
            let rules = Rules {
                now: snapshot.now,
                lease: chrono::Duration::minutes(30),
                coordinator: None,
                waiting_on: &waiting_on,
            };
            view.offers = Some(Offers::judge(&view.task, agent, rules));
        }
        snapshot
    }

    /// The terminal board of `agent`, showing `snapshot` as `agent` reads it.
    pub fn app_for(agent: &str, snapshot: Snapshot) -> App {
        App::new(Some(agent.to_string()), offered_to(agent, snapshot))
    }

    pub fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    pub fn typed(app: &mut App, text: &str) {
        for c in text.chars() {
            assert_eq!(app.on_key(key(KeyCode::Char(c))), Effect::Nothing);
        }
    }

    fn app_as(agent: &str, views: Vec<TaskView>) -> App {
        app_for(agent, snapshot(views))
    }

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
    fn approve_by_keys_is_the_approve_action_with_the_typed_note() {
        let mut app = app_as("boss", vec![view(7, Status::ReviewRequested, "look")]);
        typed(&mut app, "y");
        typed(&mut app, "fine");
        app.on_key(key(KeyCode::Backspace));
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            Effect::Act(
                TaskId(7),
                Action::new(ActionKind::Approve, "fin".to_string())
            )
        );
        assert!(app.prompt.is_none());
    }

    #[test]
    fn the_assignee_claims_asks_requests_review_finishes_and_fails_by_keys() {
        let pending = || turn_of(view(3, Status::Pending, "mine"), "worker", Reason::Assigned);
        let mut app = app_as("worker", vec![pending()]);
        assert_eq!(
            app.on_key(key(KeyCode::Char('c'))),
            Effect::Act(TaskId(3), Action::from(ActionKind::Claim))
        );
        let cases = [
            (
                'i',
                "which branch?",
                Action::new(ActionKind::Ask, "which branch?".into()),
            ),
            ('v', "", Action::new(ActionKind::Review, String::new())),
            (
                'd',
                "merged",
                Action::new(ActionKind::Done, "merged".into()),
            ),
            (
                'F',
                "no access",
                Action::new(ActionKind::Fail, "no access".into()),
            ),
        ];
        for (letter, words, action) in cases {
            let mut app = app_as("worker", vec![pending()]);
            typed(&mut app, &letter.to_string());
            assert!(app.prompt.is_some(), "{letter} asks for words");
            typed(&mut app, words);
            let mut effect = app.on_key(key(KeyCode::Enter));
            // Failing, like cancelling, is for good: it asks first (the row confirms).
            if action.kind().row().confirms {
                assert_eq!(effect, Effect::Nothing, "{letter} asks first");
                let asked = app.prompt.as_ref().map(|prompt| prompt.purpose.label());
                assert_eq!(
                    asked.as_deref(),
                    Some("fail T-3 for good? y fails it, any other key keeps it")
                );
                effect = app.on_key(key(KeyCode::Char('y')));
            }
            assert_eq!(effect, Effect::Act(TaskId(3), action));
        }
        // Done needs a result: Enter on nothing keeps the prompt and says so.
        let mut app = app_as("worker", vec![pending()]);
        typed(&mut app, "d");
        assert_eq!(app.on_key(key(KeyCode::Enter)), Effect::Nothing);
        assert!(app.prompt.is_some());
        assert!(app.notice.as_ref().is_some_and(|notice| notice.is_error));
    }

    #[test]
    fn a_key_the_task_does_not_offer_says_why_in_the_state_machines_words_before_asking() {
        let mut app = app_as("worker", vec![view(1, Status::Pending, "not yours")]);
        // The worker is the assignee: cancelling is the sender's.
        assert_eq!(app.on_key(key(KeyCode::Char('x'))), Effect::Nothing);
        assert!(app.prompt.is_none(), "no words asked for");
        let notice = app.notice.clone().expect("a notice");
        assert!(notice.is_error);
        assert_eq!(
            notice.text,
            "error: T-1 is pending, assigned to worker: only boss (the sender) can cancel it"
        );
        // Approving a task nobody asked the worker to review.
        typed(&mut app, "y");
        assert!(app.prompt.is_none());
        let text = app.notice.clone().expect("a notice").text;
        assert!(
            text.contains("only boss (the reviewer) can approve it"),
            "{text}"
        );
        // The sender cannot claim.
        let mut app = app_as(
            "boss",
            vec![
                view(1, Status::Pending, "sent"),
                view(2, Status::Pending, "another"),
            ],
        );
        typed(&mut app, "c");
        let text = app.notice.clone().expect("a notice").text;
        assert!(text.contains("only worker can claim it"), "{text}");
        // What was said of T-1 is not left under the next task selected.
        typed(&mut app, "j");
        assert_eq!(app.selected, Some(TaskId(2)));
        assert_eq!(app.notice, None);
    }

    #[test]
    fn what_is_offered_is_what_the_state_machine_allows() {
        let offered = |agent: &str, view: TaskView| -> Vec<&'static str> {
            let app = app_as(agent, vec![view]);
            app.offered().iter().map(|key| key.kind.name()).collect()
        };
        assert_eq!(
            offered("worker", view(1, Status::Pending, "t")),
            vec!["claim", "ask", "review", "done", "fail"]
        );
        assert_eq!(
            offered("boss", view(1, Status::Pending, "t")),
            vec!["cancel", "reassign"]
        );
        assert_eq!(
            offered("boss", view(1, Status::ReviewRequested, "t")),
            vec!["approve", "request_changes", "cancel"]
        );
        assert_eq!(
            offered("other", view(1, Status::Pending, "t")),
            Vec::<&str>::new()
        );
        // What the session judged is what is offered: a blocked task (the session's test
        // judges the waits) offers what the view says.
        let mut blocked = view(2, Status::Pending, "after");
        blocked.task.after = vec![TaskId(1)];
        blocked.blocked_by = vec![TaskId(1)];
        let app = app_as("worker", vec![view(1, Status::Working, "first"), blocked]);
        let view = app.snapshot.view(TaskId(2)).expect("task 2");
        let offered = &view.offers.as_ref().expect("offers").offered;
        assert_eq!(offered, &[ActionKind::Ask, ActionKind::Fail]);
        // Keys follow the view's offers and nothing else: a view that offers nothing
        // offers no key, whoever asks.
        let mut nothing = app_as("boss", vec![view.clone()]);
        nothing.snapshot.views[0].offers = Some(Offers::default());
        assert!(nothing.offered().is_empty());
    }

    #[test]
    fn cancel_asks_for_a_reason_then_a_confirmation() {
        let mut app = app_as("boss", vec![view(4, Status::Pending, "old")]);
        typed(&mut app, "xnot needed");
        assert_eq!(app.on_key(key(KeyCode::Enter)), Effect::Nothing);
        let prompt = app.prompt.clone().expect("a confirmation");
        assert!(prompt.purpose.is_confirmation());
        assert_eq!(
            app.on_key(key(KeyCode::Char('y'))),
            Effect::Act(
                TaskId(4),
                Action::new(ActionKind::Cancel, "not needed".to_string())
            )
        );
        // Any other key at the confirmation does nothing, and says so.
        let mut app = app_as("boss", vec![view(4, Status::Pending, "old")]);
        typed(&mut app, "x");
        app.on_key(key(KeyCode::Enter));
        assert_eq!(app.on_key(key(KeyCode::Enter)), Effect::Nothing);
        assert!(app.prompt.is_none());
        assert_eq!(
            app.notice.expect("a notice").text,
            "nothing done: T-4 stays pending"
        );
    }

    #[test]
    fn escape_on_a_prompt_says_nothing_done() {
        let mut app = app_as("boss", vec![view(1, Status::Pending, "one")]);
        typed(&mut app, "xwhy");
        assert_eq!(app.on_key(key(KeyCode::Esc)), Effect::Nothing);
        assert!(app.prompt.is_none());
        let notice = app.notice.clone().expect("a notice");
        assert!(!notice.is_error);
        assert_eq!(notice.text, "nothing done: T-1 stays pending");
        assert!(!notice.text.contains("cancel"));
        typed(&mut app, "nworker");
        app.on_key(key(KeyCode::Esc));
        assert_eq!(app.notice.clone().expect("a notice").text, "nothing done");
        assert_eq!(app.on_key(key(KeyCode::Char('q'))), Effect::Quit);
    }

    fn matrix(names: &[&str]) -> AgentMatrix {
        let now = baton::time::now();
        let agents: Vec<serde_json::Value> = names
            .iter()
            .map(|name| {
                serde_json::json!({"name": name, "strengths": "", "skills": [], "clients": [],
                    "last_seen": now.to_string(), "open": 0, "working": 0, "inbox": 0,
                    "unseen": 0, "wake": false, "seen_seconds_ago": 0})
            })
            .collect();
        serde_json::from_value(
            serde_json::json!({"project": "demo", "problems": [], "agents": agents}),
        )
        .expect("a matrix")
    }

    #[test]
    fn the_reassign_picker_starts_empty_and_offers_neither_you_nor_the_assignee() {
        let mut snapshot = snapshot(vec![view(1, Status::Pending, "move it")]);
        snapshot.agents = Some(matrix(&["boss", "codex", "gemini", "worker"]));
        let mut app = app_for("boss", snapshot);
        typed(&mut app, "R");
        let prompt = app.prompt.clone().expect("a prompt");
        assert_eq!(prompt.input, "", "nothing typed for you");
        assert_eq!(prompt.choices, vec!["codex", "gemini"]);
        // Enter on nothing reassigns to nobody: the prompt stays.
        assert_eq!(app.on_key(key(KeyCode::Enter)), Effect::Nothing);
        assert!(app.prompt.is_some());
        app.on_key(key(KeyCode::Tab));
        app.on_key(key(KeyCode::Tab));
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            Effect::Act(
                TaskId(1),
                Action::reassign("gemini".to_string(), String::new())
            )
        );
        // A message may go to everyone.
        typed(&mut app, "m");
        assert_eq!(
            app.prompt.clone().expect("a prompt").choices,
            vec!["codex", "gemini", "worker", "@all"]
        );
    }

    #[test]
    fn sending_asks_for_the_agent_then_the_subject() {
        let mut app = app_as("boss", Vec::new());
        typed(&mut app, "nworker");
        assert_eq!(app.on_key(key(KeyCode::Enter)), Effect::Nothing);
        typed(&mut app, "fix it");
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            Effect::Send {
                to: "worker".to_string(),
                subject: "fix it".to_string()
            }
        );
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
    fn without_an_identity_the_keys_say_the_board_is_read_only() {
        let mut app = App::new(None, snapshot(vec![view(1, Status::Pending, "one")]));
        assert_eq!(app.on_key(key(KeyCode::Char('x'))), Effect::Nothing);
        assert!(app.prompt.is_none());
        let notice = app.notice.expect("a notice");
        assert!(
            notice.is_error && notice.text.contains("read-only"),
            "{notice:?}"
        );
    }
}
