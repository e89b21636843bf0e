//! What the terminal board holds between draws: the board as last read, what is selected,
//! which pane is shown, and the prompt being typed; and what each key does to it.
//!
//! Nothing here reads or writes the board: a key that acts returns an [`Effect`] for the
//! loop to carry out through the session, so this part is tested without a terminal or a
//! hub.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use baton::activity::ActivityRecord;
use baton::board::task::{Status, TaskId};
use baton::board::transition::Action;
use baton::session::{AgentMatrix, TaskView};
use baton::time::Timestamp;

/// The board as read at one moment, with its tasks sorted into the status columns once, so
/// that a keypress or a redraw never sorts or re-reads 10,000 tasks.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub project: String,
    pub now: Timestamp,
    pub views: Vec<TaskView>,
    /// For each status of [`Status::ALL`], the places in `views` of its tasks, oldest first.
    pub columns: [Vec<usize>; 8],
    pub agents: Option<AgentMatrix>,
    pub activity: Vec<ActivityRecord>,
}

impl Snapshot {
    pub fn new(
        project: String,
        now: Timestamp,
        views: Vec<TaskView>,
        agents: Option<AgentMatrix>,
        activity: Vec<ActivityRecord>,
    ) -> Snapshot {
        let mut columns: [Vec<usize>; 8] = Default::default();
        for (place, view) in views.iter().enumerate() {
            columns[column_of(view.task.status)].push(place);
        }
        Snapshot {
            project,
            now,
            views,
            columns,
            agents,
            activity,
        }
    }

    /// The task at `row` of `column`, if there is one.
    pub fn task_at(&self, column: usize, row: usize) -> Option<&TaskView> {
        let place = *self.columns.get(column)?.get(row)?;
        self.views.get(place)
    }

    /// Where the task `id` is: its column and row.
    fn place_of(&self, id: TaskId) -> Option<(usize, usize)> {
        self.columns
            .iter()
            .enumerate()
            .find_map(|(column, places)| {
                places
                    .iter()
                    .position(|&place| self.views[place].task.id == id)
                    .map(|row| (column, row))
            })
    }
}

/// The column of a status: its place in [`Status::ALL`].
pub fn column_of(status: Status) -> usize {
    Status::ALL
        .iter()
        .position(|each| *each == status)
        // Status::ALL lists every status.
        .unwrap_or(0)
}

/// What fills the screen between the header and the status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Board,
    Task,
    Agents,
    Activity,
}

impl Pane {
    pub const ALL: [Pane; 4] = [Pane::Board, Pane::Task, Pane::Agents, Pane::Activity];

    pub fn title(self) -> &'static str {
        match self {
            Pane::Board => "board",
            Pane::Task => "task",
            Pane::Agents => "agents",
            Pane::Activity => "activity",
        }
    }
}

/// What the line being typed at the bottom is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    Answer(TaskId),
    Approve(TaskId),
    RequestChanges(TaskId),
    Cancel(TaskId),
    Reassign(TaskId),
    SendTo,
    SendSubject { to: String },
    MessageTo,
    MessageText { to: String },
}

impl Purpose {
    /// The words before the typed line.
    pub fn label(&self) -> String {
        match self {
            Purpose::Answer(id) => format!("answer {id}:"),
            Purpose::Approve(id) => format!("approve {id}, note (may be empty):"),
            Purpose::RequestChanges(id) => format!("request changes on {id}, what:"),
            Purpose::Cancel(id) => format!("cancel {id}, reason:"),
            Purpose::Reassign(id) => format!("reassign {id} to agent:"),
            Purpose::SendTo => "send a task to agent:".to_string(),
            Purpose::SendSubject { to } => format!("send to {to}, subject:"),
            Purpose::MessageTo => "message to agent (or @all):".to_string(),
            Purpose::MessageText { to } => format!("message to {to}:"),
        }
    }
}

/// A one-line editor: the text and where the cursor is in it, counted in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub purpose: Purpose,
    pub input: String,
    pub cursor: usize,
}

impl Prompt {
    fn new(purpose: Purpose) -> Prompt {
        Prompt {
            purpose,
            input: String::new(),
            cursor: 0,
        }
    }

    fn byte_at(&self, cursor: usize) -> usize {
        self.input
            .char_indices()
            .nth(cursor)
            .map_or(self.input.len(), |(at, _)| at)
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
    Send { to: String, subject: String },
    Message { to: String, text: String },
}

/// The whole state of the terminal board.
#[derive(Debug)]
pub struct App {
    /// Who acts: `--as`/`BATON_AGENT`; without one the board is read-only.
    pub agent: Option<String>,
    pub snapshot: Snapshot,
    pub pane: Pane,
    pub column: usize,
    pub row: usize,
    /// The task selected, followed from column to column as its status changes.
    pub selected: Option<TaskId>,
    /// A task to select once a read of the board shows it: one just sent, which a read
    /// begun before the send does not hold yet.
    wanted: Option<TaskId>,
    /// How far the task pane is scrolled, in lines.
    pub scroll: u16,
    pub prompt: Option<Prompt>,
    pub is_help_shown: bool,
    pub notice: Option<Notice>,
}

impl App {
    pub fn new(agent: Option<String>, snapshot: Snapshot) -> App {
        let mut app = App {
            agent,
            snapshot,
            pane: Pane::Board,
            column: 0,
            row: 0,
            selected: None,
            wanted: None,
            scroll: 0,
            prompt: None,
            is_help_shown: false,
            notice: None,
        };
        app.follow_selection();
        app
    }

    /// Takes a fresh read of the board, keeping the selected task selected wherever it moved.
    pub fn replace(&mut self, snapshot: Snapshot) {
        self.snapshot = snapshot;
        if let Some(id) = self.wanted
            && self.snapshot.place_of(id).is_some()
        {
            self.selected = Some(id);
            self.wanted = None;
        }
        self.follow_selection();
    }

    /// Selects the task `id` now, or once a read of the board shows it.
    pub fn select(&mut self, id: TaskId) {
        self.selected = Some(id);
        self.wanted = Some(id);
        self.follow_selection();
        if self.selected == Some(id) {
            self.wanted = None;
        }
    }

    pub fn selected_view(&self) -> Option<&TaskView> {
        self.snapshot.task_at(self.column, self.row)
    }

    pub fn notify(&mut self, text: impl Into<String>, is_error: bool) {
        self.notice = Some(Notice {
            text: text.into(),
            is_error,
        });
    }

    fn follow_selection(&mut self) {
        if let Some(id) = self.selected
            && let Some((column, row)) = self.snapshot.place_of(id)
        {
            self.column = column;
            self.row = row;
            return;
        }
        // The selected task left the board (or none was): stay in place, or, on a column
        // with nothing, go to the first task of the first column that has one.
        if self.snapshot.columns[self.column].is_empty()
            && let Some(column) = self
                .snapshot
                .columns
                .iter()
                .position(|places| !places.is_empty())
        {
            self.column = column;
            self.row = 0;
        }
        let length = self.snapshot.columns[self.column].len();
        self.row = self.row.min(length.saturating_sub(1));
        self.remember_selection();
    }

    fn remember_selection(&mut self) {
        self.selected = self.selected_view().map(|view| view.task.id);
    }

    fn move_to(&mut self, column: usize, row: usize) {
        let column = column.min(self.snapshot.columns.len() - 1);
        let length = self.snapshot.columns[column].len();
        self.column = column;
        self.row = row.min(length.saturating_sub(1));
        self.scroll = 0;
        self.remember_selection();
    }

    /// What a key does: edits the prompt when one is open, else moves, switches panes, or
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
        match key.code {
            KeyCode::Char('q') => return Effect::Quit,
            KeyCode::Char('?') => self.is_help_shown = true,
            KeyCode::Left | KeyCode::Char('h') => {
                self.move_to(self.column.saturating_sub(1), self.row)
            }
            KeyCode::Right | KeyCode::Char('l') => self.move_to(self.column + 1, self.row),
            KeyCode::Up | KeyCode::Char('k') => match self.pane {
                Pane::Task => self.scroll = self.scroll.saturating_sub(1),
                _ => self.move_to(self.column, self.row.saturating_sub(1)),
            },
            KeyCode::Down | KeyCode::Char('j') => match self.pane {
                Pane::Task => self.scroll = self.scroll.saturating_add(1),
                _ => self.move_to(self.column, self.row + 1),
            },
            KeyCode::PageUp => self.move_to(self.column, self.row.saturating_sub(20)),
            KeyCode::PageDown => self.move_to(self.column, self.row + 20),
            KeyCode::Char('g') | KeyCode::Home => self.move_to(self.column, 0),
            KeyCode::Char('G') | KeyCode::End => self.move_to(self.column, usize::MAX),
            KeyCode::Enter => self.pane = Pane::Task,
            KeyCode::Esc => self.pane = Pane::Board,
            KeyCode::Tab => self.pane = next_pane(self.pane, 1),
            KeyCode::BackTab => self.pane = next_pane(self.pane, Pane::ALL.len() - 1),
            KeyCode::Char(digit @ '1'..='4') => {
                self.pane = Pane::ALL[digit as usize - '1' as usize];
            }
            KeyCode::Char('a') => self.ask_about_task(Purpose::Answer),
            KeyCode::Char('A' | 'y') => self.ask_about_task(Purpose::Approve),
            KeyCode::Char('r') => self.ask_about_task(Purpose::RequestChanges),
            KeyCode::Char('c') => self.ask_about_task(Purpose::Cancel),
            KeyCode::Char('R') => self.ask_about_task(Purpose::Reassign),
            KeyCode::Char('n') => self.ask(Purpose::SendTo),
            KeyCode::Char('m') => self.ask(Purpose::MessageTo),
            _ => {}
        }
        Effect::Nothing
    }

    /// Opens the prompt, unless there is nobody to act as.
    fn ask(&mut self, purpose: Purpose) {
        if self.agent.is_none() {
            self.notify(
                "read-only: this board has no identity; start it with --as NAME or \
                 BATON_AGENT=NAME to act",
                true,
            );
            return;
        }
        self.notice = None;
        self.prompt = Some(Prompt::new(purpose));
    }

    fn ask_about_task(&mut self, purpose: fn(TaskId) -> Purpose) {
        match self.selected_view().map(|view| view.task.id) {
            Some(id) => self.ask(purpose(id)),
            None => self.notify("no task selected: move onto one with the arrows", true),
        }
    }

    fn on_prompt_key(&mut self, mut prompt: Prompt, key: KeyEvent) -> Effect {
        match key.code {
            KeyCode::Esc => {
                self.notify("canceled", false);
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

    /// What Enter on the prompt does: an action, or the next question of a two-step one.
    fn submit(&mut self, prompt: Prompt) -> Effect {
        let words = prompt.input;
        let name = words.trim().to_string();
        match prompt.purpose {
            Purpose::Answer(id) => Effect::Act(id, Action::Answer { answer: words }),
            Purpose::Approve(id) => Effect::Act(id, Action::Approve { note: words }),
            Purpose::RequestChanges(id) => Effect::Act(id, Action::RequestChanges { what: words }),
            Purpose::Cancel(id) => Effect::Act(id, Action::Cancel { reason: words }),
            Purpose::Reassign(id) => Effect::Act(
                id,
                Action::Reassign {
                    to: name,
                    note: String::new(),
                },
            ),
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
    use baton::board::task::{Priority, Task};

    pub fn view(id: u64, status: Status, subject: &str) -> TaskView {
        let now = baton::time::now();
        let mut task: Task = serde_json::from_value(serde_json::json!({
            "id": id, "subject": subject, "from": "boss", "to": "worker",
            "status": status.as_str(), "priority": "normal",
            "created_at": now.to_string(), "updated_at": now.to_string(),
        }))
        .expect("a task");
        task.priority = Priority::Normal;
        TaskView {
            task,
            turn: None,
            reason: None,
            blocked_by: Vec::new(),
            stalled: false,
            archived: false,
        }
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

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn typed(app: &mut App, text: &str) {
        for c in text.chars() {
            assert_eq!(app.on_key(key(KeyCode::Char(c))), Effect::Nothing);
        }
    }

    #[test]
    fn the_selection_follows_a_task_that_changes_status() {
        let mut app = App::new(
            Some("boss".to_string()),
            snapshot(vec![
                view(1, Status::Pending, "one"),
                view(2, Status::Pending, "two"),
            ]),
        );
        app.on_key(key(KeyCode::Down));
        assert_eq!(app.selected, Some(TaskId(2)));
        app.replace(snapshot(vec![
            view(1, Status::Pending, "one"),
            view(2, Status::ReviewRequested, "two"),
        ]));
        assert_eq!(
            (app.column, app.row),
            (column_of(Status::ReviewRequested), 0)
        );
        assert_eq!(
            app.selected_view().map(|view| view.task.id),
            Some(TaskId(2))
        );
    }

    #[test]
    fn a_task_just_sent_is_selected_once_a_read_shows_it() {
        let mut app = App::new(
            Some("boss".to_string()),
            snapshot(vec![view(1, Status::Pending, "one")]),
        );
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
        assert_eq!(app.row, 1);
    }

    #[test]
    fn approve_by_keys_is_the_approve_action_with_the_typed_note() {
        let mut app = App::new(
            Some("boss".to_string()),
            snapshot(vec![view(7, Status::ReviewRequested, "look")]),
        );
        typed(&mut app, "y");
        typed(&mut app, "fine");
        app.on_key(key(KeyCode::Backspace));
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            Effect::Act(
                TaskId(7),
                Action::Approve {
                    note: "fin".to_string()
                }
            )
        );
        assert!(app.prompt.is_none());
    }

    #[test]
    fn sending_asks_for_the_agent_then_the_subject() {
        let mut app = App::new(Some("boss".to_string()), snapshot(Vec::new()));
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
    fn without_an_identity_the_keys_say_the_board_is_read_only() {
        let mut app = App::new(None, snapshot(vec![view(1, Status::Pending, "one")]));
        assert_eq!(app.on_key(key(KeyCode::Char('c'))), Effect::Nothing);
        assert!(app.prompt.is_none());
        let notice = app.notice.expect("a notice");
        assert!(
            notice.is_error && notice.text.contains("read-only"),
            "{notice:?}"
        );
    }

    #[test]
    fn escape_closes_the_prompt_without_acting() {
        let mut app = App::new(
            Some("boss".to_string()),
            snapshot(vec![view(1, Status::Pending, "one")]),
        );
        typed(&mut app, "cwhy");
        assert_eq!(app.on_key(key(KeyCode::Esc)), Effect::Nothing);
        assert!(app.prompt.is_none());
        assert_eq!(app.on_key(key(KeyCode::Char('q'))), Effect::Quit);
    }
}
