//! The file store's way of hearing that files changed without busy-looping: what its change
//! feed ([`super::feed`]) blocks on, for `wait`, `watch`, the pushes of `baton mcp` and
//! `serve`'s event streams.
//!
//! The kernel says when a file changes (inotify on Linux, FSEvents on macOS,
//! ReadDirectoryChangesW on Windows, through the `notify` crate), so a waiter sleeps until
//! something happens and spends nothing meanwhile. [`DirectoryEvents`] watches the
//! *directories* the followed files live in, one level deep, never the files: a board write
//! replaces board.json by a rename, the logs are appended to and rotated, and a file may not
//! exist yet, where a watch on the file would follow the old one or fail. An event is only a
//! hint that a name may have changed: [`FileWatch`] confirms it with the files' metadata
//! ([`FileStamps`]: inode, length, modification time; a rename changes the inode even when
//! size and time would not, and on Windows the file index), so the events of a read, of a
//! neighbour such as board.lock, or of one change told twice cost a `stat` and wake nobody.
//!
//! Looking at that metadata every [`POLL_EVERY`] is kept as the fallback, chosen once per
//! waiter where file events cannot be had or trusted:
//! - `BATON_FILE_EVENTS=poll` asks for it ([`FileEvents::from_environment`]): for an event
//!   source that misbehaves, and for the tests of the fallback;
//! - the event source does not start, or refuses a directory for anything but its absence
//!   (inotify's per-user limits of instances or watches, a system without one);
//! - a watched directory is on a network filesystem
//!   ([`platform::is_network_filesystem`]), where the kernel does not hear other machines'
//!   writes.
//!
//! Events the kernel dropped (a full queue) make the next wait say that anything may have
//! changed, and the caller looks at everything once.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ::notify::event::{AccessKind, AccessMode};
use ::notify::{EventKind, RecursiveMode, Watcher};

use crate::file::platform;
use crate::store::cache::Stamp;

/// How often the fallback looks at the watched files.
pub const POLL_EVERY: Duration = Duration::from_millis(100);
/// The environment variable that asks for the fallback: `BATON_FILE_EVENTS=poll`.
pub const FILE_EVENTS_VARIABLE: &str = "BATON_FILE_EVENTS";

/// Where the kernel has file events that `notify` reaches; elsewhere it would poll on its
/// own, far more slowly than [`POLL_EVERY`].
const HAS_KERNEL_EVENTS: bool = cfg!(any(
    target_os = "linux",
    target_os = "android",
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly",
    windows
));

/// How a waiter learns that files changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileEvents {
    /// The kernel's file events.
    Kernel,
    /// A look at the files' metadata every [`POLL_EVERY`].
    Poll,
}

impl FileEvents {
    /// The events asked for: [`FileEvents::Poll`] when `BATON_FILE_EVENTS` is `poll`, else
    /// [`FileEvents::Kernel`] (which still falls back where events cannot be had).
    pub fn from_environment() -> FileEvents {
        FileEvents::asked_for(std::env::var(FILE_EVENTS_VARIABLE).ok().as_deref())
    }

    /// The events a value of `BATON_FILE_EVENTS` asks for: only `poll` is the fallback.
    fn asked_for(value: Option<&str>) -> FileEvents {
        match value {
            Some(value) if value.trim().eq_ignore_ascii_case("poll") => FileEvents::Poll,
            _ => FileEvents::Kernel,
        }
    }
}

/// What a wait on [`DirectoryEvents`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touched {
    /// Nothing before the timeout, or a [`Waker`] ended the wait.
    Nothing,
    /// Events named these paths: entries of the watched directories (created, written,
    /// renamed to or from, removed), or the directories themselves. A hint, not a proof.
    Paths(BTreeSet<PathBuf>),
    /// Anything may have changed: time for the fallback's look, events were lost, or a
    /// directory waited for appeared.
    Anything,
}

/// What the event source's thread tells a waiter.
#[derive(Debug)]
enum Signal {
    Paths(Vec<PathBuf>),
    Lost,
    Wake,
}

/// Ends a wait on [`DirectoryEvents`] (or [`FileWatch`]) from another thread.
#[derive(Debug, Clone)]
pub struct Waker(mpsc::Sender<Signal>);

impl Waker {
    pub fn wake(&self) {
        // A waiter that is gone needs no waking.
        let _ = self.0.send(Signal::Wake);
    }
}

/// The kernel's events for the entries of a few directories, or, where those cannot be had
/// (see the module's comment), a clock that says to look every [`POLL_EVERY`].
pub struct DirectoryEvents {
    kernel: Option<Kernel>,
    /// Kept for [`Waker`]s; the watcher's handler holds another.
    sender: mpsc::Sender<Signal>,
    receiver: mpsc::Receiver<Signal>,
    /// A wake that came with events: the wait after the one that told them ends at once.
    is_woken: bool,
}

impl std::fmt::Debug for DirectoryEvents {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DirectoryEvents")
            .field("source", &self.source())
            .finish_non_exhaustive()
    }
}

/// A watcher and what it watches.
struct Kernel {
    watcher: ::notify::RecommendedWatcher,
    /// Each watched directory as the events name it (resolved: macOS reports the real path)
    /// → as the caller named it.
    watched: HashMap<PathBuf, PathBuf>,
    /// Directories asked for that did not exist: each is watched once it appears, and its
    /// nearest existing ancestor meanwhile.
    missing: Vec<PathBuf>,
}

impl DirectoryEvents {
    /// Events from `source`, for no directory yet ([`DirectoryEvents::watch`] adds them).
    pub fn new(source: FileEvents) -> DirectoryEvents {
        let (sender, receiver) = mpsc::channel();
        let kernel = match source {
            FileEvents::Kernel if HAS_KERNEL_EVENTS => Kernel::start(sender.clone()),
            _ => None,
        };
        DirectoryEvents {
            kernel,
            sender,
            receiver,
            is_woken: false,
        }
    }

    /// Where the events come from now: [`FileEvents::Poll`] once the kernel's failed.
    pub fn source(&self) -> FileEvents {
        match self.kernel {
            Some(_) => FileEvents::Kernel,
            None => FileEvents::Poll,
        }
    }

    pub fn waker(&self) -> Waker {
        Waker(self.sender.clone())
    }

    /// Watches the entries of `dir`, not deeper. A directory that does not exist yet is
    /// watched from when it appears; one that cannot be watched (a network filesystem, a
    /// kernel limit) turns these events into the fallback.
    pub fn watch(&mut self, dir: &Path) {
        if let Some(kernel) = &mut self.kernel
            && !kernel.add(dir)
        {
            self.kernel = None;
        }
    }

    /// Blocks until events name something in the watched directories, for `timeout` at
    /// most. The fallback waits [`POLL_EVERY`] (or what is left of `timeout`) and says
    /// [`Touched::Anything`].
    pub fn wait(&mut self, timeout: Duration) -> Touched {
        if std::mem::take(&mut self.is_woken) {
            return Touched::Nothing;
        }
        let Some(kernel) = &mut self.kernel else {
            return match self.receiver.recv_timeout(timeout.min(POLL_EVERY)) {
                Ok(Signal::Wake) => Touched::Nothing,
                // The kernel's events from before it failed are nothing the look misses.
                Ok(_) | Err(_) => Touched::Anything,
            };
        };
        let first = match self.receiver.recv_timeout(timeout) {
            Ok(signal) => signal,
            Err(mpsc::RecvTimeoutError::Timeout) => return Touched::Nothing,
            // Not while `self.sender` lives; said for completeness.
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                self.kernel = None;
                return Touched::Anything;
            }
        };
        // One change is several events (a rename and the write before it): take all that
        // came, for one look.
        let mut paths = BTreeSet::new();
        let mut is_lost = false;
        for signal in std::iter::once(first).chain(self.receiver.try_iter()) {
            match signal {
                Signal::Paths(named) => paths.extend(named),
                Signal::Lost => is_lost = true,
                Signal::Wake => self.is_woken = true,
            }
        }
        let appeared = match kernel.follow_directories(&paths) {
            Some(appeared) => appeared,
            None => {
                self.kernel = None;
                return Touched::Anything;
            }
        };
        if is_lost || appeared {
            return Touched::Anything;
        }
        let paths = kernel.as_named(paths);
        if paths.is_empty() && std::mem::take(&mut self.is_woken) {
            return Touched::Nothing;
        }
        Touched::Paths(paths)
    }
}

impl Kernel {
    /// A watcher whose handler passes on the events that may mean a change; `None` when the
    /// system will not give one.
    fn start(sender: mpsc::Sender<Signal>) -> Option<Kernel> {
        let handler = move |event: ::notify::Result<::notify::Event>| {
            let signal = match event {
                Ok(event) if event.need_rescan() => Signal::Lost,
                Ok(event) if is_a_read(&event.kind) => return,
                Ok(event) => Signal::Paths(event.paths),
                // The source's own trouble (a read that failed): look at everything.
                Err(_) => Signal::Lost,
            };
            // A waiter that is gone hears nothing more.
            let _ = sender.send(signal);
        };
        let watcher = ::notify::recommended_watcher(handler).ok()?;
        Some(Kernel {
            watcher,
            watched: HashMap::new(),
            missing: Vec::new(),
        })
    }

    /// Watches `dir`, or its nearest existing ancestor while it is missing; false when
    /// events cannot be trusted or had for it.
    fn add(&mut self, dir: &Path) -> bool {
        if self.watched.values().any(|watched| watched == dir) {
            return true;
        }
        let resolved = match fs::canonicalize(dir) {
            Ok(resolved) => resolved,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return self.add_missing(dir),
            Err(_) => return false,
        };
        if platform::is_network_filesystem(&resolved) {
            return false;
        }
        match self.watcher.watch(&resolved, RecursiveMode::NonRecursive) {
            Ok(()) => {
                self.watched.insert(resolved, dir.to_path_buf());
                true
            }
            Err(error) if is_not_found(&error) => self.add_missing(dir),
            Err(_) => false,
        }
    }

    /// Watches the nearest existing ancestor of the missing `dir` for it to appear.
    fn add_missing(&mut self, dir: &Path) -> bool {
        if !self.missing.iter().any(|missing| missing == dir) {
            self.missing.push(dir.to_path_buf());
        }
        match dir.ancestors().skip(1).find(|ancestor| ancestor.is_dir()) {
            Some(ancestor) => self.add(ancestor),
            // A relative path, or no root: nothing to watch.
            None => false,
        }
    }

    /// Keeps the watches up with the directories: a watched directory that went is waited
    /// for again, and a missing one that appeared is watched. `Some(true)` when one
    /// appeared (files may have been made in it before its watch began), `None` when
    /// events cannot be had for it.
    fn follow_directories(&mut self, paths: &BTreeSet<PathBuf>) -> Option<bool> {
        let gone: Vec<PathBuf> = paths
            .iter()
            .filter(|path| self.watched.contains_key(*path) && !path.is_dir())
            .cloned()
            .collect();
        for resolved in gone {
            let _ = self.watcher.unwatch(&resolved);
            if let Some(dir) = self.watched.remove(&resolved)
                && !self.add_missing(&dir)
            {
                return None;
            }
        }
        let mut appeared = false;
        for dir in std::mem::take(&mut self.missing) {
            if dir.is_dir() {
                appeared = true;
            }
            if !self.add(&dir) {
                return None;
            }
        }
        Some(appeared)
    }

    /// `paths` as the caller names them: the entries of the watched directories (and the
    /// directories), spelled as the caller spelled each directory.
    fn as_named(&self, paths: BTreeSet<PathBuf>) -> BTreeSet<PathBuf> {
        paths
            .into_iter()
            .filter_map(|path| {
                if let Some(dir) = self.watched.get(&path) {
                    return Some(dir.clone());
                }
                let dir = self.watched.get(path.parent()?)?;
                Some(dir.join(path.file_name()?))
            })
            .collect()
    }
}

/// Whether an event is a read's (an open, a read, a close after reading), which every look
/// of every reader makes and which changes nothing; every other event may mean a change.
fn is_a_read(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => false,
        EventKind::Access(_) => true,
        _ => false,
    }
}

fn is_not_found(error: &::notify::Error) -> bool {
    match &error.kind {
        ::notify::ErrorKind::PathNotFound => true,
        ::notify::ErrorKind::Io(error) => error.kind() == io::ErrorKind::NotFound,
        _ => false,
    }
}

/// The look at a few files' metadata that tells when any of them changed (appeared,
/// vanished, or was written), without reading them.
#[derive(Debug)]
pub struct FileStamps {
    paths: Vec<PathBuf>,
    stamps: Option<Vec<Option<Stamp>>>,
}

impl FileStamps {
    pub fn new(paths: Vec<PathBuf>) -> Self {
        FileStamps {
            paths,
            stamps: None,
        }
    }

    /// True on the first call, then whenever a file differs from the previous call.
    pub fn has_changed(&mut self) -> bool {
        let stamps: Vec<Option<Stamp>> = self.paths.iter().map(|path| Stamp::of(path)).collect();
        let is_changed = self.stamps.as_ref() != Some(&stamps);
        self.stamps = Some(stamps);
        is_changed
    }
}

/// Tells when any of a few files changed, waiting on the events of their directories.
#[derive(Debug)]
pub struct FileWatch {
    stamps: FileStamps,
    events: DirectoryEvents,
}

impl FileWatch {
    pub fn with_source(paths: Vec<PathBuf>, source: FileEvents) -> Self {
        let mut events = DirectoryEvents::new(source);
        let mut dirs: Vec<&Path> = paths.iter().filter_map(|path| path.parent()).collect();
        dirs.dedup();
        for dir in dirs {
            events.watch(dir);
        }
        FileWatch {
            stamps: FileStamps::new(paths),
            events,
        }
    }

    pub fn source(&self) -> FileEvents {
        self.events.source()
    }

    pub fn waker(&self) -> Waker {
        self.events.waker()
    }

    /// True on the first call, then whenever a file differs from the previous look, without
    /// waiting.
    pub fn has_changed(&mut self) -> bool {
        self.stamps.has_changed()
    }

    /// Blocks until a file differs from the previous look (on the first call: at once) and
    /// says true; false once `timeout` passed, or a [`Waker`] woke it, with no change.
    pub fn wait_for_change(&mut self, timeout: Duration) -> bool {
        if self.stamps.stamps.is_none() {
            return self.stamps.has_changed();
        }
        let started = Instant::now();
        loop {
            match self.events.wait(timeout.saturating_sub(started.elapsed())) {
                Touched::Nothing => return false,
                Touched::Paths(paths)
                    if !self.stamps.paths.iter().any(|path| paths.contains(path)) => {}
                Touched::Paths(_) | Touched::Anything => {
                    if self.stamps.has_changed() {
                        return true;
                    }
                }
            }
            if started.elapsed() >= timeout {
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::thread;

    use super::*;

    /// Long enough for any event on a loaded machine; a wait that ends this late failed.
    const WOKEN_WITHIN: Duration = Duration::from_secs(5);
    /// Short: how long a wait with nothing happening is given to end with no change.
    const QUIET_FOR: Duration = Duration::from_millis(300);

    #[test]
    fn a_replaced_file_counts_as_changed_even_with_the_same_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.json");
        let mut watch = FileWatch::with_source(vec![path.clone()], FileEvents::Poll);
        assert!(watch.has_changed(), "the first look always counts");
        assert!(!watch.has_changed());
        fs::write(&path, "one").unwrap();
        assert!(watch.has_changed(), "appeared");
        assert!(!watch.has_changed());
        let temp = dir.path().join("board.json.tmp");
        fs::write(&temp, "two").unwrap();
        fs::rename(&temp, &path).unwrap();
        assert!(watch.has_changed(), "renamed over");
        fs::remove_file(&path).unwrap();
        assert!(watch.has_changed(), "vanished");
    }

    /// Appends a line to `path` in one write, as the logs are written.
    fn append(path: &Path, line: &str) {
        use std::io::Write;
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        file.write_all(format!("{line}\n").as_bytes()).unwrap();
    }

    /// One change to make to the watched files, from another thread.
    type FileChange<'a> = Box<dyn Fn() + Sync + 'a>;

    /// Each kind of change a board or a log goes through wakes a waiter on `source`, and
    /// nothing else does: creating the file, appending to it, renaming another file over
    /// it, removing it; while a neighbour's write, a read, and nothing at all do not.
    fn every_change_wakes_and_nothing_else_does(source: FileEvents) {
        let dir = tempfile::tempdir().unwrap();
        let board = dir.path().join("board.json");
        let log = dir.path().join("activity.jsonl");
        // The log is there before the watch: appending to a file that does not exist yet
        // creates it and then writes it, two changes, which a loaded machine may show as
        // two.
        fs::write(&log, "").unwrap();
        let mut watch = FileWatch::with_source(vec![board.clone(), log.clone()], source);
        assert_eq!(
            watch.source(),
            source,
            "the source asked for is the one used"
        );
        assert!(
            watch.wait_for_change(QUIET_FOR),
            "the first look always counts"
        );
        assert!(!watch.wait_for_change(QUIET_FOR), "nothing happened");

        // Each change is one step for a reader (one call), so that it is told once.
        let changes: [(&str, FileChange); 5] = [
            (
                "created",
                Box::new(|| drop(fs::File::create(&board).unwrap())),
            ),
            ("appended to", Box::new(|| append(&log, "a line"))),
            ("appended to again", Box::new(|| append(&log, "another"))),
            (
                "renamed over",
                Box::new(|| {
                    let temp = dir.path().join(".board.json.tmp");
                    fs::write(&temp, "two").unwrap();
                    fs::rename(&temp, &board).unwrap();
                }),
            ),
            ("removed", Box::new(|| fs::remove_file(&board).unwrap())),
        ];
        for (what, change) in changes {
            thread::scope(|scope| {
                // The change comes while the waiter waits, from another thread.
                scope.spawn(|| {
                    thread::sleep(Duration::from_millis(50));
                    change();
                });
                assert!(
                    watch.wait_for_change(WOKEN_WITHIN),
                    "{source:?}: a file {what} woke the waiter"
                );
            });
            assert!(
                !watch.wait_for_change(QUIET_FOR),
                "{source:?}: one change after the file was {what} is told once"
            );
        }

        fs::write(dir.path().join("board.lock"), "pid 1").unwrap();
        let _ = fs::read(&log).unwrap();
        assert!(
            !watch.wait_for_change(QUIET_FOR),
            "{source:?}: a neighbour's write and a read are no change"
        );
    }

    #[test]
    fn kernel_events_see_each_change_and_wake_no_one_for_anything_else() {
        every_change_wakes_and_nothing_else_does(FileEvents::Kernel);
    }

    #[test]
    fn the_forced_fallback_sees_the_same_changes() {
        every_change_wakes_and_nothing_else_does(FileEvents::Poll);
    }

    #[test]
    fn a_change_already_made_is_seen_without_waiting_for_another() {
        for source in [FileEvents::Kernel, FileEvents::Poll] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("mail.jsonl");
            let mut watch = FileWatch::with_source(vec![path.clone()], source);
            assert!(watch.wait_for_change(Duration::ZERO));
            append(&path, "a message");
            assert!(
                watch.wait_for_change(WOKEN_WITHIN),
                "{source:?}: a change between two waits"
            );
        }
    }

    #[test]
    fn a_directory_made_after_the_watch_began_is_watched_once_it_appears() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("projects").join("api");
        let board = project.join("board.json");
        let mut watch = FileWatch::with_source(vec![board.clone()], FileEvents::Kernel);
        assert_eq!(watch.source(), FileEvents::Kernel);
        assert!(watch.wait_for_change(QUIET_FOR));
        fs::create_dir_all(&project).unwrap();
        assert!(
            !watch.wait_for_change(QUIET_FOR),
            "the directory alone is no change of the file"
        );
        fs::write(&board, "{}").unwrap();
        assert!(watch.wait_for_change(WOKEN_WITHIN), "the file made in it");
        append(&board, "more");
        assert!(
            watch.wait_for_change(WOKEN_WITHIN),
            "and written to, heard through the directory's own watch now"
        );
    }

    #[test]
    fn a_waker_ends_the_wait_with_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let mut watch =
            FileWatch::with_source(vec![dir.path().join("board.json")], FileEvents::Kernel);
        assert!(watch.wait_for_change(Duration::ZERO));
        let waker = watch.waker();
        let started = Instant::now();
        thread::scope(|scope| {
            scope.spawn(|| {
                thread::sleep(Duration::from_millis(50));
                waker.wake();
            });
            assert!(!watch.wait_for_change(Duration::from_secs(60)));
        });
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "woken, not timed out"
        );
    }

    #[test]
    fn directory_events_name_the_entries_as_the_caller_spells_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        // A path with a `..` in it resolves elsewhere; the events still say it the caller's way.
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        let spelled = sub.join("..").join("sub");
        let mut events = DirectoryEvents::new(FileEvents::Kernel);
        events.watch(&spelled);
        fs::write(sub.join("tokens.json"), "{}").unwrap();
        let started = Instant::now();
        loop {
            match events.wait(WOKEN_WITHIN) {
                Touched::Paths(paths) if paths.contains(&spelled.join("tokens.json")) => break,
                Touched::Nothing => panic!("no event for the new file"),
                other => assert!(
                    started.elapsed() < WOKEN_WITHIN,
                    "only other events: {other:?}"
                ),
            }
        }
    }

    #[test]
    fn only_poll_in_the_variable_asks_for_the_fallback() {
        assert_eq!(FileEvents::asked_for(Some("poll")), FileEvents::Poll);
        assert_eq!(FileEvents::asked_for(Some(" POLL ")), FileEvents::Poll);
        assert_eq!(FileEvents::asked_for(None), FileEvents::Kernel);
        assert_eq!(FileEvents::asked_for(Some("")), FileEvents::Kernel);
        assert_eq!(FileEvents::asked_for(Some("kernel")), FileEvents::Kernel);
    }
}
