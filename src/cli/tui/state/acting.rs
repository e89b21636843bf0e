//! The keys that act on the selected task, and the line typed at the bottom for what they
//! need: an action's words, a last word before one nothing undoes, a new task's assignee and
//! subject, a message. What a key offers is what the session judged and the board read
//! carries ([`baton::session::TaskView::offers`]), so a key that cannot apply says why, in
//! the words the CLI would refuse with, before any words are asked for.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use baton::board::action::ActionKind;
use baton::board::task::TaskId;
use baton::mail::BROADCAST;
use baton::text::inline;

use super::super::keys::{self, TASK_KEYS, TaskKey, Words, action_of};
use super::{App, Effect};

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
    /// The words to search the board for (`/`).
    Search,
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
            Purpose::Search => "search subjects, bodies, threads:".to_string(),
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
    pub(super) fn new(purpose: Purpose) -> Prompt {
        Prompt {
            purpose,
            input: String::new(),
            cursor: 0,
            choices: Vec::new(),
        }
    }

    /// The prompt of `/`, holding the words searched for now, if any, to change.
    pub(super) fn search(words: Option<&str>) -> Prompt {
        let input = words.unwrap_or_default().to_string();
        Prompt {
            cursor: input.chars().count(),
            input,
            ..Prompt::new(Purpose::Search)
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

impl App {
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

    /// The names Tab offers: the agents but the viewer and `but`, and `@all` for a message.
    pub(super) fn names(&self, but: Option<&str>, with_everyone: bool) -> Vec<String> {
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
    pub(super) fn on_task_key(&mut self, key: &TaskKey) -> Effect {
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

    pub(super) fn notify_read_only(&mut self) {
        self.notify(
            "read-only: this board has no identity; start it with --as NAME or \
             BATON_AGENT=NAME to act",
            true,
        );
    }

    /// Opens the prompt, unless there is nobody to act as.
    pub(super) fn ask(&mut self, prompt: Prompt) {
        if self.agent.is_none() {
            self.notify_read_only();
            return;
        }
        self.prompt = Some(prompt);
    }

    pub(super) fn on_prompt_key(&mut self, mut prompt: Prompt, key: KeyEvent) -> Effect {
        if let Purpose::Confirm { id, action, words } = prompt.purpose {
            if key.code == KeyCode::Char('y') {
                return action_of(action, words)
                    .map_or(Effect::Nothing, |action| Effect::Act(id, action));
            }
            self.notify_nothing_done(Some(id));
            return Effect::Nothing;
        }
        match key.code {
            // Esc on the search clears it: every task shown again.
            KeyCode::Esc if prompt.purpose == Purpose::Search => self.searched(None),
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
    pub(super) fn notify_nothing_done(&mut self, id: Option<TaskId>) {
        let text = match id.and_then(|id| self.snapshot.view(id)) {
            Some(view) => format!("nothing done: {} stays {}", view.task.id, view.task.status),
            None => "nothing done".to_string(),
        };
        self.notify(text, false);
    }

    /// What Enter on the prompt does: an action, or the next question of a two-step one.
    /// Words that must be there and are not keep the prompt open, saying so.
    pub(super) fn submit(&mut self, prompt: Prompt) -> Effect {
        let words = prompt.input.clone();
        let name = words.trim().to_string();
        if let Purpose::Act { action, .. } = &prompt.purpose
            && keys::words(action.row()) == Words::Fields
            && let Err(refused) = keys::edits(&words)
        {
            self.notify(
                format!("error: {}; Esc does nothing", inline(&refused)),
                true,
            );
            self.prompt = Some(prompt);
            return Effect::Nothing;
        }
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
            Purpose::Search => self.searched(Some(name).filter(|words| !words.is_empty())),
        }
    }

    /// The search is now for `words` (none: every task): the board is read again for them.
    fn searched(&mut self, words: Option<String>) -> Effect {
        if words.is_none() && self.search.is_none() {
            self.notify("no search: every task is shown", false);
            return Effect::Nothing;
        }
        self.search = words.clone();
        Effect::Search(words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::tui::testing::{app_as, app_for, key, snapshot, turn_of, typed, view};
    use baton::board::edit::Edits;
    use baton::board::inbox::Reason;
    use baton::board::offers::Offers;
    use baton::board::task::Status;
    use baton::board::transition::Action;
    use baton::session::AgentMatrix;
    use baton::session::TaskView;

    #[test]
    fn slash_asks_for_words_enter_searches_for_them_and_esc_shows_every_task() {
        // Read-only boards search too.
        for viewer in [None, Some("boss".to_string())] {
            let mut app = App::new(
                viewer.clone(),
                snapshot(vec![view(1, Status::Pending, "x")]),
            );
            typed(&mut app, "/");
            let prompt = app.prompt.clone().expect("a prompt");
            assert_eq!(prompt.purpose, Purpose::Search, "{viewer:?}");
            typed(&mut app, " parser ");
            assert_eq!(
                app.on_key(key(KeyCode::Enter)),
                Effect::Search(Some("parser".to_string()))
            );
            assert_eq!(app.search.as_deref(), Some("parser"));
            assert!(app.prompt.is_none());
            // `/` again holds the words to change; Esc clears the search.
            typed(&mut app, "/");
            assert_eq!(
                app.prompt.as_ref().map(|p| p.input.as_str()),
                Some("parser")
            );
            assert_eq!(app.on_key(key(KeyCode::Esc)), Effect::Search(None));
            assert_eq!(app.search, None);
            // With none on, Esc (or Enter on nothing) reads nothing again.
            typed(&mut app, "/");
            assert_eq!(app.on_key(key(KeyCode::Esc)), Effect::Nothing);
            typed(&mut app, "/");
            assert_eq!(app.on_key(key(KeyCode::Enter)), Effect::Nothing);
        }
    }

    #[test]
    fn a_read_for_other_words_than_those_searched_now_is_not_shown() {
        let all = || {
            snapshot(vec![
                view(1, Status::Pending, "parser"),
                view(2, Status::Pending, "lexer"),
            ])
        };
        let mut app = app_as(
            "boss",
            vec![
                view(1, Status::Pending, "parser"),
                view(2, Status::Pending, "lexer"),
            ],
        );
        typed(&mut app, "/parser");
        app.on_key(key(KeyCode::Enter));
        // A read begun before the search, for every task, comes in late: not shown.
        app.replace(all());
        assert_eq!(app.board_rows().len(), 2, "still the board as it was");
        let mut searched = snapshot(vec![view(1, Status::Pending, "parser")]);
        searched.search = Some("parser".to_string());
        app.replace(searched);
        assert_eq!(app.board_rows().len(), 1);
        app.replace(all());
        assert_eq!(
            app.board_rows().len(),
            1,
            "the late read for every task again"
        );
        assert_eq!(app.selected, Some(TaskId(1)));
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
            vec!["cancel", "reassign", "edit"]
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
    fn edit_asks_for_a_field_and_its_value_and_keeps_asking_until_it_reads() {
        let mut app = app_as("boss", vec![view(4, Status::Pending, "old")]);
        typed(&mut app, "epriority=soon");
        assert_eq!(app.on_key(key(KeyCode::Enter)), Effect::Nothing);
        assert!(app.prompt.is_some(), "still asking");
        let notice = app.notice.clone().expect("a notice");
        assert!(
            notice.text.contains("unknown priority `soon`"),
            "{}",
            notice.text
        );
        let mut app = app_as("boss", vec![view(4, Status::Pending, "old")]);
        typed(&mut app, "etouches= src/a/**,docs/");
        let edits = Edits {
            touches: Some(vec!["src/a/**".into(), "docs/".into()]),
            ..Edits::default()
        };
        assert_eq!(
            app.on_key(key(KeyCode::Enter)),
            Effect::Act(TaskId(4), Action::edit(edits))
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
