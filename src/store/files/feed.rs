//! The file store's change feeds ([`crate::store::feed`]), on the kernel's file events (else a look
//! at the files' metadata every [`super::events::POLL_EVERY`]; see
//! [`super::events`]).
//!
//! - One project's ([`ProjectFeed`]): its `board.json` and `mail.jsonl`, told as
//!   [`What::Project`] when either differs from the last look.
//! - The hub's ([`HubFeed`]) follows the files every change is written to, as `tail -f`
//!   would: each project's `activity.jsonl` (one line per change: [`What::Logged`] with its
//!   action and task), `mail.jsonl` ([`What::Message`] with its seq) and `board.json` (a
//!   write with no line of its own, such as a delivery mark: [`What::Board`]). It sleeps
//!   until the file events say that one of them, `tokens.json` ([`What::Tokens`]) or the set
//!   of projects changed ([`DirectoryEvents`] on the hub's home, its `projects/` and each
//!   project's directory), and then reads only that project's files; where there are no
//!   events it looks at every project every [`super::events::POLL_EVERY`] instead.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::events::{DirectoryEvents, FileEvents, FileStamps, FileWatch, Touched};
use super::tail::Tail;
use crate::board::record::LogAction;
use crate::home::Home;
use crate::store::StoreError;
use crate::store::feed::{Change, ChangeFeed, FeedWaker, What};

/// The names in a project's directory whose changes the hub's feed reads: the journal's
/// removal ends a change whose board came before its lines (see `Followed::changes`).
const FOLLOWED_NAMES: [&str; 4] = [
    "activity.jsonl",
    "activity.journal",
    "mail.jsonl",
    "board.json",
];

/// The changes of one project's board and mail, from when it was made.
#[derive(Debug)]
pub struct ProjectFeed {
    project: String,
    files: FileWatch,
}

impl ProjectFeed {
    pub fn new(home: &Home, project: &str, events: FileEvents) -> ProjectFeed {
        let mut files = FileWatch::with_source(
            vec![home.board_file(project), home.mail_file(project)],
            events,
        );
        // The files as they are now are no change: only what is written from here on is.
        files.has_changed();
        ProjectFeed {
            project: project.to_string(),
            files,
        }
    }
}

impl ChangeFeed for ProjectFeed {
    fn next(&mut self, within: Duration) -> Result<Vec<Change>, StoreError> {
        Ok(match self.files.wait_for_change(within) {
            true => vec![Change::in_project(&self.project, What::Project)],
            false => Vec::new(),
        })
    }

    fn waker(&self) -> FeedWaker {
        let waker = self.files.waker();
        FeedWaker::new(move || waker.wake())
    }
}

/// Every change on the hub, told as itself, from when it was made (see the module's
/// comment).
pub struct HubFeed {
    home: Home,
    events: DirectoryEvents,
    tokens: FileStamps,
    projects: HashMap<String, Followed>,
}

impl std::fmt::Debug for HubFeed {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("HubFeed")
            .field("home", &self.home)
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

impl HubFeed {
    /// Follows the hub at `home` from its files' ends.
    pub fn new(home: &Home, events: FileEvents) -> HubFeed {
        let mut events = DirectoryEvents::new(events);
        // The home for `tokens.json` (and for `projects/` to appear), `projects/` for new
        // projects, then each project's directory.
        events.watch(home.root());
        events.watch(&home.projects_dir());
        let mut tokens = FileStamps::new(vec![home.tokens_file()]);
        tokens.has_changed();
        let mut projects: HashMap<String, Followed> = HashMap::new();
        for id in project_dirs(home) {
            // Watched before it is read, so that no change falls between the two. Projects
            // there when the feed began are followed from their ends; one made since, from
            // its beginning.
            events.watch(&home.project_dir(&id));
            projects.insert(id.clone(), Followed::new(home, &id, true));
        }
        HubFeed {
            home: home.clone(),
            events,
            tokens,
            projects,
        }
    }

    /// What `look` finds changed: the tokens first (a stream hears of a token removed before
    /// any change found with it), then each project's changes in the order written.
    fn changes(&mut self, look: Look) -> Vec<Change> {
        let home = &self.home;
        let mut changes = Vec::new();
        if look.is_tokens && self.tokens.has_changed() {
            changes.push(Change {
                project: None,
                what: What::Tokens,
            });
        }
        let mut looked_at: BTreeSet<String> = look.projects;
        if look.is_new_projects {
            for id in project_dirs(home) {
                if !self.projects.contains_key(&id) {
                    self.events.watch(&home.project_dir(&id));
                    self.projects
                        .insert(id.clone(), Followed::new(home, &id, false));
                    looked_at.insert(id);
                }
            }
        }
        if look.is_everything {
            looked_at = self.projects.keys().cloned().collect();
        }
        for id in &looked_at {
            if let Some(followed) = self.projects.get_mut(id) {
                changes.extend(followed.changes(id));
            }
        }
        changes
    }
}

impl ChangeFeed for HubFeed {
    fn next(&mut self, within: Duration) -> Result<Vec<Change>, StoreError> {
        let started = Instant::now();
        loop {
            let look = match self.events.wait(within.saturating_sub(started.elapsed())) {
                Touched::Nothing => return Ok(Vec::new()),
                Touched::Anything => Look::everything(),
                Touched::Paths(paths) => Look::of(&paths, &self.home),
            };
            let changes = self.changes(look);
            // Events that named no change (a read, a lock file) wait on.
            if !changes.is_empty() || started.elapsed() >= within {
                return Ok(changes);
            }
        }
    }

    fn waker(&self) -> FeedWaker {
        let waker = self.events.waker();
        FeedWaker::new(move || waker.wake())
    }
}

/// What a batch of file events asks the hub's feed to read.
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
    /// The journal of a change being written (`store::files::journal`): there from before its
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
            .map(|logged| {
                Change::in_project(
                    project,
                    What::Logged {
                        action: logged.action,
                        task: logged.task,
                    },
                )
            })
            .collect();
        for line in self.mail.fresh_lines() {
            let Ok(message) = serde_json::from_str::<Seq>(&line) else {
                continue;
            };
            if message.seq > self.last_seq {
                self.last_seq = message.seq;
                changes.push(Change::in_project(
                    project,
                    What::Message { seq: message.seq },
                ));
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
            changes.push(Change::in_project(project, What::Board));
        }
        changes
    }
}

/// The fields of an activity line a change needs.
#[derive(Deserialize)]
struct Logged {
    action: LogAction,
    #[serde(default)]
    task: Option<u64>,
}

#[derive(Deserialize)]
struct Seq {
    seq: u64,
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::board::mail::{Draft, MessageType};
    use crate::board::record::ActivityRecord;
    use crate::board::task::TaskId;
    use crate::file::lock::LockPolicy;
    use crate::store::document::{Document, Documents, Edit, Wait};
    use crate::store::files::FileStore;
    use crate::store::{Boards, Feeds, GaveUp, Mailboxes, Scope};

    /// Long enough for any event on a loaded machine; a wait that ends this late failed.
    const WOKEN_WITHIN: Duration = Duration::from_secs(10);
    /// Short: how long a wait with nothing happening is given to end with no change.
    const QUIET_FOR: Duration = Duration::from_millis(300);
    /// Where the test that plays another process finds its orders: `HOME|PROJECT|CHANGE`.
    const CHILD_ORDERS: &str = "BATON_TEST_FEED_CHANGE";
    const CHILD_TEST: &str = "store::files::feed::tests::another_process_changes_the_store";

    fn store_at(home: &Home) -> FileStore {
        FileStore::new(home.clone(), LockPolicy::silent(Duration::from_secs(30)))
    }

    /// One change of the store at `home`, through the store, as a command would make it:
    /// `record N` (a board change logged as `counted` on task N), `board` (a board change
    /// with no record), `message` (one message), `tokens` (the tokens rewritten).
    fn change(home: &Home, project: &str, change: &str) {
        let store = store_at(home);
        let now = crate::time::now();
        match change.split_once(' ').unwrap_or((change, "")) {
            ("record", n) => {
                let n: u64 = n.parse().unwrap();
                store
                    .change_board(project, now, &mut |transaction| {
                        transaction.board.next_id += 1;
                        transaction.record(ActivityRecord {
                            at: now,
                            project: project.to_string(),
                            actor: "tester".to_string(),
                            action: "counted".into(),
                            task: Some(TaskId(n)),
                            from_status: None,
                            to_status: None,
                            text: None,
                        });
                        Ok(())
                    })
                    .unwrap();
            }
            ("board", _) => store
                .change_board(project, now, &mut |transaction| {
                    transaction.board.next_id += 1;
                    transaction.touch();
                    Ok(())
                })
                .unwrap(),
            ("message", _) => store
                .change_mail(project, now, &mut |mailbox| {
                    mailbox.add(
                        now,
                        vec![Draft {
                            from: "tester".to_string(),
                            to: "other".to_string(),
                            kind: MessageType::Text,
                            summary: "hello".to_string(),
                            body: String::new(),
                            payload: serde_json::Value::Null,
                        }],
                    );
                    Ok::<(), GaveUp>(())
                })
                .unwrap(),
            ("tokens", _) => {
                store
                    .update_document(&Document::Tokens, Wait::AsTheStoreDoes, &mut |_| {
                        Ok(Edit::Write(b"{\"schema\":1,\"tokens\":[]}\n".to_vec()))
                    })
                    .unwrap();
            }
            (other, _) => panic!("no such change: {other}"),
        }
    }

    /// `change` made by another process: this test binary, running only
    /// [`another_process_changes_the_store`]. Its verdict is read from what it printed, into
    /// a file rather than a pipe: under Wine, the services a process starts hold a pipe open
    /// after it ends, and Wine may kill a process that is slow to end after it printed it.
    fn in_another_process(home: &Home, project: &str, what: &str) {
        let orders = format!("{}|{project}|{what}", home.root().display());
        let printed = tempfile::NamedTempFile::new().unwrap();
        let appending = || {
            fs::OpenOptions::new()
                .append(true)
                .open(printed.path())
                .unwrap()
        };
        let status = crate::process::started_for_test(
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", CHILD_TEST, "--ignored", "--test-threads", "1"])
                .env(CHILD_ORDERS, orders)
                .stdin(std::process::Stdio::null())
                .stdout(appending())
                .stderr(appending()),
        )
        .wait()
        .unwrap();
        let printed = fs::read_to_string(printed.path()).unwrap();
        assert!(
            printed.contains("test result: ok. 1 passed"),
            "the other process ({status}) failed: {printed}"
        );
    }

    /// Not a test of its own: the other process of the tests here, which makes the change
    /// its orders say and ends.
    #[test]
    #[ignore = "run by the feed's tests as another process"]
    fn another_process_changes_the_store() {
        let Ok(orders) = std::env::var(CHILD_ORDERS) else {
            return;
        };
        let mut words = orders.splitn(3, '|');
        let (root, project, what) = (
            words.next().unwrap(),
            words.next().unwrap(),
            words.next().unwrap(),
        );
        change(&Home::new(PathBuf::from(root)), project, what);
    }

    /// The changes `feed` tells until `is_enough` says they are all there, or
    /// [`WOKEN_WITHIN`] passed.
    fn told_until(feed: &mut dyn ChangeFeed, is_enough: impl Fn(&[Change]) -> bool) -> Vec<Change> {
        let started = Instant::now();
        let mut told = Vec::new();
        while !is_enough(&told) && started.elapsed() < WOKEN_WITHIN {
            told.extend(feed.next(WOKEN_WITHIN - started.elapsed()).unwrap());
        }
        told
    }

    fn logged(project: &str, task: u64) -> Change {
        Change::in_project(
            project,
            What::Logged {
                action: "counted".into(),
                task: Some(task),
            },
        )
    }

    #[test]
    fn a_change_by_another_process_is_told_to_the_feed_of_its_project_once() {
        for events in [FileEvents::Kernel, FileEvents::Poll] {
            let root = tempfile::tempdir().unwrap();
            let home = Home::new(root.path().to_path_buf());
            let mut feed = ProjectFeed::new(&home, "api", events);
            let project = vec![Change::in_project("api", What::Project)];
            for what in ["record 1", "message", "board"] {
                in_another_process(&home, "api", what);
                assert_eq!(
                    feed.next(WOKEN_WITHIN).unwrap(),
                    project,
                    "{events:?}: {what} in another process"
                );
                assert_eq!(
                    feed.next(QUIET_FOR).unwrap(),
                    Vec::new(),
                    "{events:?}: {what} is told once"
                );
            }
            in_another_process(&home, "web", "record 2");
            assert_eq!(
                feed.next(QUIET_FOR).unwrap(),
                Vec::new(),
                "{events:?}: another project's change is not this one's"
            );
        }
    }

    #[test]
    fn a_change_between_making_the_feed_and_its_first_wait_is_not_missed() {
        for events in [FileEvents::Kernel, FileEvents::Poll] {
            let root = tempfile::tempdir().unwrap();
            let home = Home::new(root.path().to_path_buf());
            // The project there before the feeds, and one made after them.
            change(&home, "api", "record 1");
            let mut project = ProjectFeed::new(&home, "api", events);
            let mut hub = HubFeed::new(&home, events);
            change(&home, "api", "record 2");
            change(&home, "web", "record 3");
            assert_eq!(
                project.next(WOKEN_WITHIN).unwrap(),
                vec![Change::in_project("api", What::Project)],
                "{events:?}"
            );
            let expected = [logged("api", 2), logged("web", 3)];
            let told = told_until(&mut hub, |told| told.len() >= expected.len());
            assert_eq!(told.len(), expected.len(), "{events:?}: {told:?}");
            assert_eq!(
                told.iter().collect::<std::collections::HashSet<_>>(),
                expected.iter().collect::<std::collections::HashSet<_>>(),
                "{events:?}: the changes made before the first wait, and only those"
            );
        }
    }

    #[test]
    fn the_feed_of_the_hub_tells_each_change_of_another_process_as_itself() {
        for events in [FileEvents::Kernel, FileEvents::Poll] {
            let root = tempfile::tempdir().unwrap();
            let home = Home::new(root.path().to_path_buf());
            change(&home, "api", "record 1");
            change(&home, "api", "message");
            let mut feed = HubFeed::new(&home, events);
            let steps: [(&str, &str, Change); 5] = [
                ("api", "record 7", logged("api", 7)),
                (
                    "api",
                    "message",
                    Change::in_project("api", What::Message { seq: 2 }),
                ),
                ("api", "board", Change::in_project("api", What::Board)),
                (
                    "api",
                    "tokens",
                    Change {
                        project: None,
                        what: What::Tokens,
                    },
                ),
                // A project made after the feed began is followed from its beginning.
                ("web", "record 1", logged("web", 1)),
            ];
            for (project, what, expected) in steps {
                in_another_process(&home, project, what);
                let told = told_until(&mut feed, |told| !told.is_empty());
                assert_eq!(told, vec![expected], "{events:?}: {what} in {project}");
                assert_eq!(
                    feed.next(QUIET_FOR).unwrap(),
                    Vec::new(),
                    "{events:?}: {what} in {project} is told once"
                );
            }
        }
    }

    #[test]
    fn the_store_makes_a_feed_of_each_scope_and_a_waker_ends_its_wait() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path().to_path_buf());
        let store = store_at(&home);
        for scope in [Scope::Project("api".to_string()), Scope::Hub] {
            let mut feed = store.changes(&scope).unwrap();
            let waker = feed.waker();
            let started = Instant::now();
            std::thread::scope(|threads| {
                threads.spawn(|| {
                    std::thread::sleep(Duration::from_millis(50));
                    waker.wake();
                });
                assert_eq!(feed.next(Duration::from_secs(60)).unwrap(), Vec::new());
            });
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{scope:?}: woken, not timed out"
            );
            change(&home, "api", "record 1");
            assert!(
                !told_until(&mut *feed, |told| !told.is_empty()).is_empty(),
                "{scope:?}: a change after a wake is told"
            );
        }
    }
}
