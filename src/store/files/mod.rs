//! The store on the files of the hub home (SPEC section 2): a project's board changed under
//! `board.lock` (read again under it, written atomically with its activity lines
//! journaled, the finished tasks appended to the archive first), the activity log, the
//! archive; the mail changed under `mail.lock`; each small versioned document under its own
//! lock file ([`HomeFiles`]); presence and duties as lock files held open; changes heard
//! through the kernel's file events ([`feed`]).
//!
//! A process that serves many callers at once (`baton serve`) makes its store resident
//! ([`FileStore::resident`]): it keeps the boards it has read, until their file changes,
//! and a [`Group`] per project that commits the changes arriving while a write is in
//! progress together, under one lock, in one board write and one fsync (group commit). Each
//! change is still applied alone, in the order the changes arrived, and answered with its
//! own result: a refused change leaves the board as the change before it left it, and a
//! change is answered only once the write that holds it is done. The lock is let go after
//! every write, so CLI writers on the same board take turns with the server.

pub mod archive;
pub mod board;
pub mod events;
pub mod feed;
pub mod journal;
pub mod jsonl;
pub mod layout;
pub mod log;
pub mod mail;
pub mod presence;
pub mod source;
pub mod tail;

use std::collections::HashMap;
use std::fs;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use self::events::FileEvents;
use self::feed::{HubFeed, ProjectFeed};
use self::tail::Tail;
use crate::board::Board;
use crate::board::mail::{Message, ReadPositions};
use crate::board::record::ActivityRecord;
use crate::board::search::Search;
use crate::board::task::{Task, TaskId};
use crate::file::lock::{self, FileLock, LockPolicy};
use crate::file::{atomic, regular};
use crate::home::Home;
use crate::metrics::{RoundTrip, StoreKind};
use crate::store::cache::{FileCache, Stamp};
use crate::store::copy::{BoardImage, ProjectImage};
use crate::store::document::{
    COPIED_LIMIT, Collection, Document, DocumentChange, Documents, Edit, Version, Wait, too_long,
};
use crate::store::duty::{Duty, Held};
use crate::store::feed::{ChangeFeed, Scope};
use crate::store::group::{Group, group_of};
use crate::store::mailbox::Mailbox;
use crate::store::mcp_sessions::{MCP_SESSION_IDLE, McpEvent, McpLog};
use crate::store::presence::Presence;
use crate::store::transaction::{Archive, Transaction};
use crate::store::{
    Boards, Feeds, GaveUp, KeptMcpSession, LogTail, Mailboxes, McpSessions, Origin, Presences,
    Restoring, Snapshot, Store, StoreError, Stored,
};
use crate::time::Timestamp;

/// The small versioned documents under a hub home, each file guarded by its lock file:
/// the hub's, for the [`FileStore`], and this machine's own, which are files wherever the
/// hub's state is kept.
#[derive(Debug, Clone)]
pub struct HomeFiles {
    home: Home,
    lock: LockPolicy,
}

impl HomeFiles {
    pub fn new(home: Home, lock: LockPolicy) -> Self {
        HomeFiles { home, lock }
    }

    pub fn home(&self) -> &Home {
        &self.home
    }

    /// The lock file that guards `document`, with the words a wait for it is told in.
    fn lock_of(&self, document: &Document) -> (PathBuf, &'static str) {
        let home = &self.home;
        match document {
            Document::Project(id) => (home.board_lock(id), "the board lock"),
            Document::Agent(name) => (home.agent_lock(name), "the registry lock"),
            Document::Tokens => (home.tokens_lock(), "the tokens lock"),
            Document::Alerts => (home.alerts_lock(), "the alerts"),
            Document::AlertsDropped | Document::QueuedAlert(_) => {
                (home.alert_queue_lock(), "the alert queue lock")
            }
            Document::SetupManifest => (home.setup_lock(), "the setup lock"),
            Document::ProjectMap => (home.project_map_lock(), "the project map"),
        }
    }

    /// Takes the lock of `document`; `None` when it is busy and `wait` says not to wait.
    fn take_lock(&self, document: &Document, wait: Wait) -> Result<Option<FileLock>, StoreError> {
        let (path, what) = self.lock_of(document);
        match wait {
            Wait::AsTheStoreDoes => Ok(Some(FileLock::acquire(&path, what, self.lock)?)),
            Wait::Never => Ok(FileLock::try_acquire(&path)?),
        }
    }

    fn write(path: &std::path::Path, edit: Edit) -> Result<(), StoreError> {
        match edit {
            Edit::Keep => Ok(()),
            Edit::Write(text) => Ok(atomic::replace(path, &text, None)?),
            Edit::WriteUnsynced(text) => Ok(atomic::replace_unsynced(path, &text)?),
            Edit::Remove => match fs::remove_file(path) {
                Ok(()) => Ok(()),
                Err(error) if error.kind() == ErrorKind::NotFound => Ok(()),
                Err(error) => Err(StoreError::io(path)(error)),
            },
        }
    }
}

/// The names of the entries of `dir` that end in `suffix` (taken off) and pass `keep`,
/// sorted; none when there is no `dir`.
fn names_in(
    dir: &std::path::Path,
    suffix: &str,
    keep: impl Fn(&fs::DirEntry, &str) -> bool,
) -> Result<Vec<String>, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(StoreError::io(dir)(error)),
    };
    let mut names: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let file = entry.file_name().into_string().ok()?;
            let name = file.strip_suffix(suffix)?.to_string();
            keep(&entry, &name).then_some(name)
        })
        .collect();
    names.sort();
    Ok(names)
}

impl HomeFiles {
    /// The file that keeps `document`.
    pub fn document_path(&self, document: &Document) -> PathBuf {
        let home = &self.home;
        match document {
            Document::Project(id) => home.project_file(id),
            Document::Agent(name) => home.agent_file(name),
            Document::Tokens => home.tokens_file(),
            Document::Alerts => home.alerts_file(),
            Document::AlertsDropped => home.alert_dropped(),
            Document::QueuedAlert(name) => home.alert_queue_dir().join(name),
            Document::SetupManifest => home.setup_manifest(),
            Document::ProjectMap => home.project_map_file(),
        }
    }
}

impl Documents for HomeFiles {
    fn document_origin(&self, document: &Document) -> Origin {
        Origin::file(
            Stored::Document(document.clone()),
            &self.document_path(document),
        )
    }

    fn load_document(&self, document: &Document) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.document_path(document);
        match regular::read(&path) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
            Err(error) => Err(StoreError::io(&path)(error)),
        }
    }

    fn load_document_to_copy(&self, document: &Document) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.document_path(document);
        match regular::read_unlinked(&path, COPIED_LIMIT) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
            Err(error) if error.kind() == ErrorKind::FileTooLarge => {
                Err(too_long(self.document_origin(document)))
            }
            Err(error) => Err(StoreError::io(&path)(error)),
        }
    }

    fn document_version(&self, document: &Document) -> Option<Version> {
        Stamp::of(&self.document_path(document)).map(Version::File)
    }

    fn update_document(
        &self,
        document: &Document,
        wait: Wait,
        change: &mut DocumentChange<'_>,
    ) -> Result<bool, StoreError> {
        let _trip = RoundTrip::start(StoreKind::Files);
        let Some(_guard) = self.take_lock(document, wait)? else {
            return Ok(false);
        };
        let current = self.load_document(document)?;
        if let Ok(edit) = change(current.as_deref()) {
            HomeFiles::write(&self.document_path(document), edit)?;
        }
        Ok(true)
    }

    fn save_document(&self, document: &Document, edit: Edit) -> Result<(), StoreError> {
        HomeFiles::write(&self.document_path(document), edit)
    }

    fn remove_document(&self, document: &Document) -> Result<bool, StoreError> {
        let _guard = match document {
            Document::QueuedAlert(_) => None,
            _ => self.take_lock(document, Wait::AsTheStoreDoes)?,
        };
        let path = self.document_path(document);
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(false),
            Err(error) => Err(StoreError::io(&path)(error)),
        }
    }

    fn list_documents(&self, collection: Collection) -> Result<Vec<String>, StoreError> {
        let home = &self.home;
        match collection {
            // Whatever sits at project.json counts: skipping one that is not a regular file
            // would route its workspace's commands to `default` without a word.
            Collection::Projects => names_in(&home.projects_dir(), "", |entry, name| {
                entry.path().join("project.json").exists()
                    && crate::names::check(crate::names::NameKind::Project, name).is_ok()
            }),
            Collection::Agents => names_in(&home.agents_dir(), ".json", |_, name| {
                crate::names::check(crate::names::NameKind::Agent, name).is_ok()
            }),
            Collection::QueuedAlerts => names_in(&home.alert_queue_dir(), "", |_, name| {
                std::path::Path::new(name)
                    .extension()
                    .is_some_and(|extension| extension == "json")
            }),
        }
    }
}

/// The hub's state in the files under its home.
#[derive(Debug)]
pub struct FileStore {
    home: Home,
    lock: LockPolicy,
    documents: HomeFiles,
    /// What a long-running process keeps between changes; a command, run once, keeps
    /// nothing.
    resident: Option<Arc<Resident>>,
    /// The MCP sessions this process handed out, by session id, each with when it was last
    /// used. In memory: on the files one `baton serve` serves every session, so no other
    /// process needs them, and a file written at every `initialize` would be written for
    /// nobody.
    mcp_sessions: Arc<Mutex<HeldMcpSessions>>,
}

/// The MCP sessions a process handed out, by id: each as kept, when last used, and its
/// event log.
type HeldMcpSessions = HashMap<String, (KeptMcpSession, Instant, McpLog)>;

/// What a long-running process keeps between changes: the boards it read or wrote, and the
/// group commit of each project's board and of its mail.
#[derive(Debug, Default)]
struct Resident {
    boards: FileCache<Board>,
    groups: Mutex<HashMap<String, Arc<Group<Transaction>>>>,
    mail: Mutex<HashMap<String, Arc<Group<mail::Opened>>>>,
}

impl FileStore {
    /// The store of the hub at `home`, whose locks wait as `lock` says.
    pub fn new(home: Home, lock: LockPolicy) -> Self {
        FileStore {
            documents: HomeFiles::new(home.clone(), lock),
            home,
            lock,
            resident: None,
            mcp_sessions: Arc::default(),
        }
    }

    /// The store for a process that serves many requests: boards are kept between them and
    /// changes that arrive together are committed together.
    pub fn resident(home: Home, lock: LockPolicy) -> Self {
        FileStore {
            resident: Some(Arc::default()),
            ..FileStore::new(home, lock)
        }
    }

    pub fn home(&self) -> &Home {
        &self.home
    }

    /// A change of `board`, read under the lock of `project`, whose archive it reads in the
    /// files (under the same lock).
    fn transaction(&self, project: &str, board: Board, now: Timestamp) -> Transaction {
        Transaction::new(board, now).with_archive(Arc::new(ArchiveFiles {
            home: self.home.clone(),
            project: project.to_string(),
        }))
    }

    /// The MCP sessions this process handed out.
    fn mcp_sessions(&self) -> std::sync::MutexGuard<'_, HeldMcpSessions> {
        // The map stays whole whatever panicked while holding it: every change is one call.
        self.mcp_sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The lock file whose holder holds `duty`.
    fn duty_lock(&self, duty: &Duty) -> PathBuf {
        match duty {
            Duty::AlertSender => self.home.alert_sender_lock(),
            Duty::Wake(agent) => self.home.wake_lock(agent),
        }
    }

    /// Takes the mail lock of `project`, which every write of its mail holds.
    fn lock_mail(&self, project: &str) -> Result<FileLock, StoreError> {
        Ok(FileLock::acquire(
            &self.home.mail_lock(project),
            "the mail lock",
            self.lock,
        )?)
    }

    /// Takes the board lock, then completes (or drops) what a killed writer left
    /// half-logged: how every change begins.
    fn lock_board(&self, project: &str) -> Result<FileLock, StoreError> {
        let guard = FileLock::acquire(&self.home.board_lock(project), "the board lock", self.lock)?;
        board::recover_log::<ActivityRecord>(&self.home, project)?;
        Ok(guard)
    }

    /// Writes what `transaction` changed; the caller holds the board lock. The project's
    /// record first, then the tasks leaving the board into the archive (a crash before the
    /// board is written leaves a task in both places, never in neither), then the board
    /// with its activity lines. The board written, when it was.
    fn commit(&self, project: &str, transaction: Transaction) -> Result<Option<Board>, StoreError> {
        let committed = transaction
            .commit()
            .map_err(|refused| StoreError::board(board::origin_in(&self.home, project), refused))?;
        if let Some(document) = &committed.project {
            atomic::replace(&self.home.project_file(project), document, None)?;
        }
        if !committed.archived.is_empty() {
            archive::append(&self.home, project, &committed.archived)?;
        }
        if let Some(board) = &committed.board {
            board::persist(&self.home, project, board, &committed.records)?;
        }
        Ok(committed.board)
    }

    /// The board of `project`, through the boards a resident store keeps.
    fn read_board(&self, project: &str) -> Result<Board, StoreError> {
        let Some(resident) = &self.resident else {
            return board::read(&self.home, project);
        };
        resident.boards.get(&self.home.board_file(project), || {
            let board = board::read(&self.home, project)?;
            // Every task decoded once, here: each request works on a copy of the board,
            // which shares the decoded tasks, and would otherwise decode them all again. A
            // task that does not decode is left to fail where it is used, as on the CLI.
            for task in board.tasks() {
                let _ = task;
            }
            Ok(board)
        })
    }

    /// [`Boards::change_board`] committed together with the changes of other threads that
    /// arrive while a write is in progress.
    fn change_in_group(
        &self,
        resident: &Resident,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Transaction) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        let group = group_of(&resident.groups, project);
        let path = self.home.board_file(project);
        // A change that gave up was rolled back by the group and refuses only itself: its
        // caller holds why.
        let _gave_up: Result<(), GaveUp> = group.run(
            || {
                // The batch's one locked read-change-write, until its write is done.
                let trip = RoundTrip::start(StoreKind::Files);
                let guard = self.lock_board(project)?;
                let board = self.read_board(project)?;
                Ok(((guard, trip), self.transaction(project, board, now)))
            },
            |transaction| transaction.apply_at(now, change),
            |transaction, _lock| match self.commit(project, transaction) {
                Ok(written) => {
                    if let Some(board) = written {
                        resident.boards.keep(&path, board);
                    }
                    Ok(())
                }
                Err(error) => {
                    // A write that failed half-way (the rename done, the directory's sync
                    // not) leaves a board nobody should guess at: read it again next time.
                    resident.boards.forget(&path);
                    Err(error)
                }
            },
        )?;
        Ok(())
    }
}

/// The archive files of a project, as a change reads them under the board lock.
#[derive(Debug)]
struct ArchiveFiles {
    home: Home,
    project: String,
}

impl Archive for ArchiveFiles {
    fn task(&self, id: TaskId) -> Result<Option<Task>, StoreError> {
        archive::find(&self.home, &self.project, id)
    }

    fn tasks(&self) -> Result<Vec<Task>, StoreError> {
        archive::all(&self.home, &self.project)
    }

    fn highest_id(&self) -> Result<u64, StoreError> {
        archive::highest_id(&self.home, &self.project)
    }
}

/// The file store's documents are its home's files.
impl Documents for FileStore {
    fn document_origin(&self, document: &Document) -> Origin {
        self.documents.document_origin(document)
    }

    fn load_document(&self, document: &Document) -> Result<Option<Vec<u8>>, StoreError> {
        self.documents.load_document(document)
    }

    fn load_document_to_copy(&self, document: &Document) -> Result<Option<Vec<u8>>, StoreError> {
        self.documents.load_document_to_copy(document)
    }

    fn document_version(&self, document: &Document) -> Option<Version> {
        self.documents.document_version(document)
    }

    fn update_document(
        &self,
        document: &Document,
        wait: Wait,
        change: &mut DocumentChange<'_>,
    ) -> Result<bool, StoreError> {
        self.documents.update_document(document, wait, change)
    }

    fn save_document(&self, document: &Document, edit: Edit) -> Result<(), StoreError> {
        self.documents.save_document(document, edit)
    }

    fn remove_document(&self, document: &Document) -> Result<bool, StoreError> {
        self.documents.remove_document(document)
    }

    fn list_documents(&self, collection: Collection) -> Result<Vec<String>, StoreError> {
        self.documents.list_documents(collection)
    }
}

/// The archive files of a project's mail (`archive/mail-<YYYY-MM>.jsonl`), sorted.
fn mail_archive_files(home: &Home, project: &str) -> Result<Vec<PathBuf>, StoreError> {
    let dir = home.archive_dir(project);
    let mut files: Vec<PathBuf> = match fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| {
                path.file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| name.starts_with("mail-") && name.ends_with(".jsonl"))
            })
            .collect(),
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(StoreError::io(&dir)(error)),
    };
    files.sort();
    Ok(files)
}

/// Removes the file at `path` if there is one.
fn remove_if_there(path: &std::path::Path) -> Result<(), StoreError> {
    match fs::remove_file(path) {
        Err(error) if error.kind() != ErrorKind::NotFound => Err(StoreError::io(path)(error)),
        _ => Ok(()),
    }
}

/// Replaces the jsonl file at `path` with `records`, one a line, atomically; none removes it.
fn replace_lines<T: serde::Serialize>(
    path: &std::path::Path,
    records: &[T],
) -> Result<(), StoreError> {
    if records.is_empty() {
        return remove_if_there(path);
    }
    let mut text = Vec::new();
    for record in records {
        serde_json::to_writer(&mut text, record).map_err(|error| {
            StoreError::corrupt(&Origin::file(Stored::Other, path))(error.to_string())
        })?;
        text.push(b'\n');
    }
    Ok(atomic::replace(path, &text, None)?)
}

impl Store for FileStore {
    fn with_lock(&self, policy: LockPolicy) -> Arc<dyn Store> {
        Arc::new(FileStore {
            home: self.home.clone(),
            lock: policy,
            documents: HomeFiles::new(self.home.clone(), policy),
            resident: self.resident.clone(),
            mcp_sessions: self.mcp_sessions.clone(),
        })
    }

    fn readable_files(&self) -> Option<&Home> {
        Some(&self.home)
    }

    fn is_shared_by_machines(&self) -> bool {
        false
    }

    fn location(&self) -> String {
        self.home.root().display().to_string()
    }

    /// Keeps the boards it read until their file changes, and commits the changes of many
    /// threads to one board (or one mail) together ([`FileStore::resident`]).
    fn resident(&self) -> Arc<dyn Store> {
        Arc::new(FileStore::resident(self.home.clone(), self.lock))
    }

    fn export_project(&self, project: &str) -> Result<ProjectImage, StoreError> {
        let home = &self.home;
        // A project never made here: nothing to read, and no directory (or lock file) made
        // for looking.
        if fs::symlink_metadata(home.project_dir(project)).is_err() {
            return Ok(ProjectImage::empty());
        }
        // What the copy of a line that does not read would be is unknown: it stays behind,
        // named, rather than dropped without a word.
        let mut unreadable = Vec::new();
        let mut image = {
            let _guard = self.lock_board(project)?;
            let origin = board::origin_in(home, project);
            let board = board::read_if_there(&origin)?;
            ProjectImage {
                record: self
                    .documents
                    .load_document_to_copy(&Document::Project(project.to_string()))?,
                board: board
                    .as_ref()
                    .map(|board| BoardImage::of(board, &origin))
                    .transpose()?,
                log: log::read_noting(&home.activity_file(project), &mut unreadable)?,
                archive: archive::all_noting(home, project, &mut unreadable)?,
                ..ProjectImage::empty()
            }
        };
        let _guard = self.lock_mail(project)?;
        let mail = home.mail_file(project);
        image.mail = jsonl::read_all(&mail)?.records_noting(&mail, &mut unreadable);
        image.read_positions = mail::load_positions(home, project)?;
        for path in mail_archive_files(home, project)? {
            image
                .mail_archive
                .extend(jsonl::read_all::<Message>(&path)?.records_noting(&path, &mut unreadable));
        }
        image.unreadable = unreadable;
        Ok(image.normalized())
    }

    fn import_project(&self, project: &str, image: &ProjectImage) -> Result<(), StoreError> {
        let home = &self.home;
        atomic::create_private_dir_all(&home.project_dir(project))?;
        {
            let _guard = self.lock_board(project)?;
            match &image.record {
                Some(record) => atomic::replace(&home.project_file(project), record, None)?,
                None => remove_if_there(&home.project_file(project))?,
            }
            for path in archive::task_files(home, project)? {
                remove_if_there(&path)?;
            }
            remove_if_there(&home.archive_dir(project).join("ids.json"))?;
            archive::append(home, project, &image.archive)?;
            let log = home.activity_file(project);
            for number in 1..=log::GENERATIONS {
                remove_if_there(&log::generation(&log, number))?;
            }
            replace_lines(&log, &image.log)?;
            match &image.board {
                Some(board) => board::write(home, project, &board.board(project))?,
                None => remove_if_there(&home.board_file(project))?,
            }
            if let Some(resident) = &self.resident {
                resident.boards.forget(&home.board_file(project));
            }
        }
        let _guard = self.lock_mail(project)?;
        replace_lines(&home.mail_file(project), &image.mail)?;
        let positions = home.mail_cursor_file(project);
        match &image.read_positions {
            Some(read) => mail::save_positions(home, project, read)?,
            None => remove_if_there(&positions)?,
        }
        for path in mail_archive_files(home, project)? {
            remove_if_there(&path)?;
        }
        // Each as the sweep writes it: the message's line read as a JSON value, its fields
        // in order of name.
        let mut by_month: std::collections::BTreeMap<String, Vec<serde_json::Value>> =
            Default::default();
        for message in &image.mail_archive {
            let value = serde_json::to_value(message).map_err(|error| {
                let archive = Stored::Archive {
                    project: project.to_string(),
                };
                StoreError::corrupt(&Origin::file(archive, &home.archive_dir(project)))(
                    error.to_string(),
                )
            })?;
            by_month.entry(message.at.month()).or_default().push(value);
        }
        for (month, messages) in by_month {
            let path = home
                .archive_dir(project)
                .join(format!("mail-{month}.jsonl"));
            jsonl::append(&path, &messages)?;
        }
        Ok(())
    }
}

impl Boards for FileStore {
    fn board(&self, project: &str) -> Result<Board, StoreError> {
        self.read_board(project)
    }

    /// The board file's stamp: every write replaces it by a rename (another file), and an
    /// edit in place moves its times.
    fn board_version(&self, project: &str) -> Option<Version> {
        Stamp::of(&self.home.board_file(project)).map(Version::File)
    }

    fn change_board(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Transaction) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        if let Some(resident) = &self.resident {
            return self.change_in_group(resident, project, now, change);
        }
        let _trip = RoundTrip::start(StoreKind::Files);
        let _guard = self.lock_board(project)?;
        let board = board::read(&self.home, project)?;
        let mut transaction = self.transaction(project, board, now);
        if change(&mut transaction).is_ok() {
            self.commit(project, transaction)?;
        }
        Ok(())
    }

    fn snapshot(&self, project: &str) -> Result<Option<Snapshot>, StoreError> {
        let Some(_guard) = FileLock::try_acquire(&self.home.board_lock(project))? else {
            return Ok(None);
        };
        let recovered = board::recover_log(&self.home, project)?;
        Ok(Some(Snapshot {
            recovered,
            board: board::read_if_there(&board::origin_in(&self.home, project)),
            log: log::read(&self.home.activity_file(project)),
        }))
    }

    fn previous_board(&self, project: &str) -> Result<Option<Board>, StoreError> {
        board::read_if_there(&super::previous_board_origin(self, project))
    }

    fn restore_board(
        &self,
        project: &str,
        dry_run: bool,
        plan: &mut dyn FnMut(Restoring) -> Result<(Board, Vec<ActivityRecord>), GaveUp>,
    ) -> Result<(), StoreError> {
        let _guard = match dry_run {
            true => None,
            false => Some(self.lock_board(project)?),
        };
        let restoring = Restoring {
            previous: self.previous_board(project),
            current: board::read_if_there(&board::origin_in(&self.home, project)),
            log: log::read(&self.home.activity_file(project)).unwrap_or_default(),
        };
        if let Ok((board, records)) = plan(restoring)
            && !dry_run
        {
            board::persist(&self.home, project, &board, &records)?;
            if let Some(resident) = &self.resident {
                resident.boards.forget(&self.home.board_file(project));
            }
        }
        Ok(())
    }

    fn log(
        &self,
        project: &str,
        since: Option<Timestamp>,
        last: Option<usize>,
    ) -> Result<Vec<ActivityRecord>, StoreError> {
        let mut records: Vec<ActivityRecord> = log::read(&self.home.activity_file(project))?;
        if let Some(since) = since {
            records.retain(|record| record.at >= since);
        }
        if let Some(last) = last {
            let skip = records.len().saturating_sub(last);
            records.drain(..skip);
        }
        Ok(records)
    }

    fn tail_log(&self, project: &str) -> Result<Box<dyn LogTail>, StoreError> {
        let mut tail = Tail::new(self.home.activity_file(project));
        tail.skip_to_end();
        Ok(Box::new(tail))
    }

    fn catch_up_log(&self, project: &str) -> Result<(), StoreError> {
        board::try_recover_log::<ActivityRecord>(&self.home, project)?;
        Ok(())
    }

    fn archived_task(&self, project: &str, id: TaskId) -> Result<Option<Task>, StoreError> {
        archive::find(&self.home, project, id)
    }

    fn archived_tasks(&self, project: &str) -> Result<Vec<Task>, StoreError> {
        archive::all(&self.home, project)
    }

    fn search_archive(&self, project: &str, search: &Search) -> Result<Vec<Task>, StoreError> {
        archive::search(&self.home, project, search)
    }

    fn highest_archived_id(&self, project: &str) -> Result<u64, StoreError> {
        archive::highest_id(&self.home, project)
    }
}

impl Mailboxes for FileStore {
    fn mail(&self, project: &str) -> Result<Vec<Message>, StoreError> {
        mail::read(&self.home, project)
    }

    fn read_positions(&self, project: &str) -> Result<ReadPositions, StoreError> {
        mail::read_positions(&self.home, project)
    }

    fn change_mail(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Mailbox) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        let Some(resident) = &self.resident else {
            let _trip = RoundTrip::start(StoreKind::Files);
            let _guard = self.lock_mail(project)?;
            let mut opened = mail::open(&self.home, project, now)?;
            if change(&mut opened.mailbox).is_ok() {
                mail::commit(&self.home, project, opened)?;
            }
            return Ok(());
        };
        // Committed together with the messages of other threads that arrive while a write
        // of the mail is in progress.
        let group = group_of(&resident.mail, project);
        // A change that gave up was rolled back by the group and refuses only itself: its
        // caller holds why.
        let _gave_up: Result<(), GaveUp> = group.run(
            || {
                let trip = RoundTrip::start(StoreKind::Files);
                let guard = self.lock_mail(project)?;
                Ok(((guard, trip), mail::open(&self.home, project, now)?))
            },
            |opened| {
                let latest = opened.mailbox.now.max(now);
                opened.mailbox.now = now;
                let result = change(&mut opened.mailbox);
                opened.mailbox.now = latest;
                result
            },
            |opened, _lock| mail::commit(&self.home, project, opened),
        )?;
        Ok(())
    }
}

impl Presences for FileStore {
    fn announce_session(
        &self,
        project: &str,
        agent: &str,
        client: &str,
    ) -> Result<Presence, StoreError> {
        presence::announce(&self.home, project, agent, client)
    }

    fn announce_listener(&self, agent: &str) -> Result<Presence, StoreError> {
        presence::announce_listener(&self.home, agent)
    }

    fn is_listened(&self, agent: &str) -> bool {
        presence::is_listened(&self.home, agent)
    }

    fn live_clients(&self, project: &str, agent: &str) -> Vec<String> {
        presence::live_clients(&self.home, project, agent)
    }

    /// A duty is a lock file of the home, held open.
    fn try_hold(&self, duty: &Duty) -> Result<Option<Held>, StoreError> {
        Ok(FileLock::try_acquire(&self.duty_lock(duty))?.map(Held::new))
    }

    fn is_held(&self, duty: &Duty) -> bool {
        lock::is_locked(&self.duty_lock(duty))
    }

    /// A mark is a file of `alerts/stalled/`, created only if it is not there yet: the first
    /// to create it is the first to mark.
    fn mark_once(&self, mark: &str) -> Result<bool, StoreError> {
        let dir = self.home.alerts_dir().join("stalled");
        atomic::create_private_dir_all(&dir)?;
        let path = dir.join(mark);
        match atomic::private_open_options()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(_) => Ok(true),
            Err(error) if error.kind() == ErrorKind::AlreadyExists => Ok(false),
            Err(error) => Err(StoreError::io(&path)(error)),
        }
    }
}

impl Feeds for FileStore {
    /// On the kernel's file events, or the look every 100 ms that `BATON_FILE_EVENTS=poll`
    /// asks for ([`FileEvents::from_environment`]).
    fn changes(&self, scope: &Scope) -> Result<Box<dyn ChangeFeed>, StoreError> {
        let events = FileEvents::from_environment();
        Ok(match scope {
            Scope::Project(project) => Box::new(ProjectFeed::new(&self.home, project, events)),
            Scope::Hub => Box::new(HubFeed::new(&self.home, events)),
        })
    }
}

impl McpSessions for FileStore {
    fn record_mcp_session(&self, session: &str, kept: &KeptMcpSession) -> Result<(), StoreError> {
        let mut sessions = self.mcp_sessions();
        sessions.retain(|_, (_, used, _)| used.elapsed() <= MCP_SESSION_IDLE);
        let log = sessions.remove(session).map(|(_, _, log)| log);
        sessions.insert(
            session.to_string(),
            (kept.clone(), Instant::now(), log.unwrap_or_default()),
        );
        Ok(())
    }

    fn mcp_session(&self, session: &str) -> Result<Option<KeptMcpSession>, StoreError> {
        let mut sessions = self.mcp_sessions();
        Ok(match sessions.get_mut(session) {
            Some((kept, used, _)) if used.elapsed() <= MCP_SESSION_IDLE => {
                *used = Instant::now();
                Some(kept.clone())
            }
            _ => None,
        })
    }

    fn forget_mcp_sessions(&self, sessions: &[String]) -> Result<(), StoreError> {
        let mut kept = self.mcp_sessions();
        for session in sessions {
            kept.remove(session);
        }
        Ok(())
    }

    fn append_mcp_event(&self, session: &str, key: &str, data: &str) -> Result<(), StoreError> {
        if let Some((_, _, log)) = self.mcp_sessions().get_mut(session) {
            log.append(key, data);
        }
        Ok(())
    }

    fn mcp_events_after(&self, session: &str, after: u64) -> Result<Vec<McpEvent>, StoreError> {
        Ok(self
            .mcp_sessions()
            .get(session)
            .map(|(_, _, log)| log.after(after))
            .unwrap_or_default())
    }

    fn mcp_events_end(&self, session: &str) -> Result<u64, StoreError> {
        Ok(self
            .mcp_sessions()
            .get(session)
            .map_or(0, |(_, _, log)| log.end()))
    }
}

#[cfg(test)]
mod tests;
