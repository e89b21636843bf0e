//! `/api/v1/events`: one server-sent event per change anywhere on the hub (SPEC section 12),
//! `{project, kind, id}`, whoever made it (the CLI, an agent, a page).
//!
//! One thread follows the files every change is written to, as `tail -f` would: each
//! project's `activity.jsonl` (one line per change: `kind` is its action, `id` its task),
//! `mail.jsonl` (`kind` `message`, `id` its seq) and `board.json` (a write with no line of
//! its own, such as a delivery mark: `kind` `board`). It sleeps until the kernel's file
//! events say that one of them, `tokens.json` or the set of projects changed
//! ([`DirectoryEvents`] on the hub's home, its `projects/` and each project's directory), and
//! then reads only that project's files; where there are no events it looks at every
//! project every [`crate::watch::POLL_EVERY`] instead (see `crate::watch`). What it finds
//! goes to every open stream through a bounded broadcast: a client that reads slowly misses
//! events and is told to look again (`kind` `resync`), and never holds up the follower, let
//! alone a change.
//!
//! A stream lasts no longer than its token (SPEC section 13): it asks again whether the
//! token is good whenever `tokens.json` changes, before every event and at every keep-alive,
//! and ends once it is not (removed, replaced, or the login of a server that stopped).

use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Extension, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use serde::Deserialize;
use tokio::sync::{broadcast, watch};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::store::Store;
use crate::store::paths::Home;
use crate::store::tail::Tail;
use crate::tokens::{self, KeptTokens, TokenId};
use crate::watch::{DirectoryEvents, FileStamps, Source, Touched};

/// How long the follower waits for file events before it asks again whether the server is
/// stopping (a stopping server wakes it at once; this is for one that cannot).
const ASK_STOP_EVERY: Duration = Duration::from_secs(5);
/// The names in a project's directory whose changes the follower reads: the journal's
/// removal ends a change whose board came before its lines (see `Followed::changes`).
const FOLLOWED_NAMES: [&str; 4] = [
    "activity.jsonl",
    "activity.journal",
    "mail.jsonl",
    "board.json",
];
/// How many events a stream may fall behind before it is told to look again.
const BACKLOG: usize = 512;
/// A comment line this often keeps proxies and clients from closing an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// One change, as a stream carries it.
pub use crate::wire::Change;

/// The changes found on the hub, for every stream to subscribe to, and a count of the
/// changes of `tokens.json`.
#[derive(Debug, Clone)]
pub struct Feed {
    sender: broadcast::Sender<Change>,
    tokens: watch::Receiver<u64>,
}

impl Feed {
    /// Starts following the hub at `home` from its files' ends, until `stop` is cancelled.
    pub fn start(home: Home, stop: CancellationToken) -> Feed {
        let (sender, _) = broadcast::channel(BACKLOG);
        let (tokens_changed, tokens) = watch::channel(0);
        let feed = Feed {
            sender: sender.clone(),
            tokens,
        };
        let events = DirectoryEvents::new(Source::from_environment());
        // A server that stops wakes the follower, which would otherwise sleep until a file
        // changes.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (stop, waker) = (stop.clone(), events.waker());
            runtime.spawn(async move {
                stop.cancelled().await;
                waker.wake();
            });
        }
        std::thread::Builder::new()
            .name("baton-feed".to_string())
            .spawn(move || follow(&home, events, &sender, &tokens_changed, &stop))
            .expect("a thread for the event feed");
        feed
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.sender.subscribe()
    }

    /// Told each time `tokens.json` changed (a token added, removed or replaced).
    pub fn tokens_changed(&self) -> watch::Receiver<u64> {
        let mut tokens = self.tokens.clone();
        tokens.mark_unchanged();
        tokens
    }
}

/// The server-sent event stream of every change from now on, until the client goes, the
/// server stops or the request's token is no longer good.
pub async fn stream(
    State(state): State<super::State>,
    Extension(token): Extension<TokenId>,
    Extension(caller): Extension<crate::mcp::Caller>,
    headers: axum::http::HeaderMap,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    // A `baton listen` of the token's agent is announced for as long as its stream is open,
    // so that work handed to the agent meanwhile is known to reach it (SPEC section 13).
    // Announced before the stream opens: once the listener hears it open, it is known.
    let is_listener = headers
        .get(crate::remote::OBSERVER_HEADER)
        .is_some_and(|value| value == crate::remote::Observer::Listen.as_str());
    let listener = match is_listener {
        true => {
            let store = state.hub.store.clone();
            let agent = caller.0.clone();
            tokio::task::spawn_blocking(move || store.announce_listener(&agent).ok())
                .await
                .ok()
                .flatten()
        }
        false => None,
    };
    let mut changes = state.feed.subscribe();
    let mut tokens_changed = state.feed.tokens_changed();
    let (sender, events) = tokio::sync::mpsc::channel::<Change>(16);
    let stopping = state.stopping.clone();
    let store = state.hub.store.clone();
    let kept = state.tokens.clone();
    let mut keep_alive =
        tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
    tokio::spawn(async move {
        // Taken back when the stream ends, whichever way (its client gone, its token removed).
        let _listener = listener;
        loop {
            // `biased`: a change of `tokens.json` is looked at before the changes the
            // follower found in the same look, so a token removed with them sees none.
            let change = tokio::select! {
                biased;
                () = stopping.cancelled() => break,
                () = sender.closed() => break,
                changed = tokens_changed.changed() => {
                    if changed.is_err() || !is_current(&store, &kept, &token).await {
                        break;
                    }
                    continue;
                }
                _ = keep_alive.tick() => {
                    // A login whose server stopped leaves `tokens.json` as it was.
                    if !is_current(&store, &kept, &token).await {
                        break;
                    }
                    continue;
                }
                change = changes.recv() => match change {
                    Ok(change) => change,
                    Err(broadcast::error::RecvError::Lagged(_)) => Change::resync(),
                    Err(broadcast::error::RecvError::Closed) => break,
                },
            };
            if !is_current(&store, &kept, &token).await {
                break;
            }
            // A slow reader holds up only this loop; the feed goes on and this stream is
            // told to look again once it catches up.
            if sender.send(change).await.is_err() {
                break;
            }
        }
    });
    let events = ReceiverStream::new(events).map(|change| {
        let data = serde_json::to_string(&change).unwrap_or_default();
        Ok(Event::default().event("change").data(data))
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"))
}

/// Whether `token` is still good; a tokens file that cannot be read says no, as it refuses
/// every request meanwhile.
pub(super) async fn is_current(
    store: &Arc<dyn Store>,
    kept: &Arc<KeptTokens>,
    token: &TokenId,
) -> bool {
    let (store, kept, token) = (store.clone(), kept.clone(), token.clone());
    tokio::task::spawn_blocking(move || tokens::is_current(&*store, &kept, &token))
        .await
        .is_ok_and(|current| current.unwrap_or(false))
}

fn follow(
    home: &Home,
    mut events: DirectoryEvents,
    sender: &broadcast::Sender<Change>,
    tokens_changed: &watch::Sender<u64>,
    stop: &CancellationToken,
) {
    let projects_dir = home.projects_dir();
    // The home for `tokens.json` (and for `projects/` to appear), `projects/` for new
    // projects, then each project's directory.
    events.watch(home.root());
    events.watch(&projects_dir);
    let mut tokens = FileStamps::new(vec![home.tokens_file()]);
    tokens.has_changed();
    let mut projects: HashMap<String, Followed> = HashMap::new();
    for id in project_dirs(home) {
        // Watched before it is read, so that no change falls between the two. Projects
        // there when the server started are followed from their ends; one made since, from
        // its beginning.
        events.watch(&home.project_dir(&id));
        projects.insert(id.clone(), Followed::new(home, &id, true));
    }
    while !stop.is_cancelled() {
        let touched = events.wait(ASK_STOP_EVERY);
        if stop.is_cancelled() {
            break;
        }
        let look = match touched {
            Touched::Nothing => continue,
            Touched::Anything => Look::everything(),
            Touched::Paths(paths) => Look::of(&paths, home),
        };
        // Before the projects: a stream hears of a token removed before any change found
        // with it (see `stream`).
        if look.is_tokens && tokens.has_changed() {
            tokens_changed.send_modify(|count| *count += 1);
        }
        let mut looked_at: BTreeSet<String> = look.projects;
        if look.is_new_projects {
            for id in project_dirs(home) {
                if !projects.contains_key(&id) {
                    events.watch(&home.project_dir(&id));
                    projects.insert(id.clone(), Followed::new(home, &id, false));
                    looked_at.insert(id);
                }
            }
        }
        if look.is_everything {
            looked_at = projects.keys().cloned().collect();
        }
        for id in &looked_at {
            let Some(followed) = projects.get_mut(id) else {
                continue;
            };
            for change in followed.changes(id) {
                // Nobody listening is not an error: the next stream starts from now.
                let _ = sender.send(change);
            }
        }
    }
}

/// What a batch of file events asks the follower to read.
struct Look {
    is_everything: bool,
    is_tokens: bool,
    is_new_projects: bool,
    projects: BTreeSet<String>,
}

impl Look {
    /// Everything: events were lost, or there are none and this is the fallback's look.
    fn everything() -> Look {
        Look {
            is_everything: true,
            is_tokens: true,
            is_new_projects: true,
            projects: BTreeSet::new(),
        }
    }

    /// What the events for `paths` may have changed.
    fn of(paths: &BTreeSet<PathBuf>, home: &Home) -> Look {
        let projects_dir = home.projects_dir();
        let tokens_file = home.tokens_file();
        let mut look = Look {
            is_everything: false,
            is_tokens: false,
            is_new_projects: false,
            projects: BTreeSet::new(),
        };
        for path in paths {
            let parent = path.parent();
            if *path == tokens_file {
                look.is_tokens = true;
            } else if *path == projects_dir || parent == Some(projects_dir.as_path()) {
                look.is_new_projects = true;
            } else if let Some(dir) = parent
                && dir.parent() == Some(projects_dir.as_path())
                && path
                    .file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| FOLLOWED_NAMES.contains(&name))
                && let Some(id) = dir.file_name().and_then(|name| name.to_str())
            {
                look.projects.insert(id.to_string());
            }
        }
        look
    }
}

/// The project directories, by name; a name baton would not make is not followed.
fn project_dirs(home: &Home) -> Vec<String> {
    let Ok(entries) = fs::read_dir(home.projects_dir()) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| crate::names::check(crate::names::NameKind::Project, name).is_ok())
        .collect()
}

/// What one project's files looked like at the last look.
struct Followed {
    activity: Tail,
    mail: Tail,
    /// The highest message seq reported: the sweep rewrites `mail.jsonl`, and what it
    /// keeps is not new.
    last_seq: u64,
    board: FileStamps,
    /// The journal of a change being written (`store::journal`): there from before its
    /// board is renamed into place until after its lines are appended.
    journal: PathBuf,
    /// A board change not told yet, waiting for the lines of its journal.
    is_board_untold: bool,
}

impl Followed {
    fn new(home: &Home, project: &str, from_end: bool) -> Followed {
        let mut followed = Followed {
            activity: Tail::new(home.activity_file(project)),
            mail: Tail::new(home.mail_file(project)),
            last_seq: 0,
            board: FileStamps::new(vec![home.board_file(project)]),
            journal: home.activity_journal(project),
            is_board_untold: false,
        };
        if from_end {
            followed.activity.skip_to_end();
            // The board as it is now is no change (a first look always counts as one).
            followed.board.has_changed();
            followed.last_seq = followed
                .mail
                .fresh_lines()
                .iter()
                .filter_map(|line| serde_json::from_str::<Seq>(line).ok())
                .map(|message| message.seq)
                .max()
                .unwrap_or(0);
        }
        followed
    }

    fn changes(&mut self, project: &str) -> Vec<Change> {
        // The board and its journal are looked at before the lines are read: a journal gone
        // by now was removed after its lines were appended, so they are read below. Looked
        // at after, a change finishing between the two would be told as `board` first.
        if self.board.has_changed() {
            self.is_board_untold = true;
        }
        let is_journal_there = self.journal.exists();
        let mut changes: Vec<Change> = self
            .activity
            .fresh_lines()
            .iter()
            .filter_map(|line| serde_json::from_str::<Logged>(line).ok())
            .map(|logged| Change {
                project: Some(project.to_string()),
                kind: logged.action,
                id: logged.task,
            })
            .collect();
        for line in self.mail.fresh_lines() {
            let Ok(message) = serde_json::from_str::<Seq>(&line) else {
                continue;
            };
            if message.seq > self.last_seq {
                self.last_seq = message.seq;
                changes.push(Change {
                    project: Some(project.to_string()),
                    kind: "message".to_string(),
                    id: Some(message.seq),
                });
            }
        }
        // A board write that logged a line was told above; one that did not (a delivery
        // mark, a lease renewal, a board restored) is told as itself. A change's lines are
        // appended after its board is in place, and events tell of the board first: while
        // its journal is there, the lines are on their way and will tell it.
        if !changes.is_empty() {
            self.is_board_untold = false;
        } else if self.is_board_untold && !is_journal_there {
            self.is_board_untold = false;
            changes.push(Change {
                project: Some(project.to_string()),
                kind: "board".to_string(),
                id: None,
            });
        }
        changes
    }
}

/// The fields of an activity line an event needs.
#[derive(Deserialize)]
struct Logged {
    action: String,
    #[serde(default)]
    task: Option<u64>,
}

#[derive(Deserialize)]
struct Seq {
    seq: u64,
}
