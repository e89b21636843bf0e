//! The store on the files of the hub home (SPEC section 2): a project's board changed under
//! `board.lock` (read again under it, written atomically with its activity lines
//! journaled, the finished tasks appended to the archive first), the activity log, the
//! archive; the mail changed under `mail.lock`; each small versioned document under its own
//! lock file ([`HomeFiles`]); presence and duties as lock files held open; changes heard
//! through the kernel's file events ([`super::file_feed`]).
//!
//! A process that serves many callers at once (`baton serve`) makes its store resident
//! ([`FileStore::resident`]): it keeps the boards it has read, until their file changes,
//! and a [`Group`] per project that commits the changes arriving while a write is in
//! progress together, under one lock, in one board write and one fsync (group commit). Each
//! change is still applied alone, in the order the changes arrived, and answered with its
//! own result: a refused change leaves the board as the change before it left it, and a
//! change is answered only once the write that holds it is done. The lock is let go after
//! every write, so CLI writers on the same board take turns with the server.

use std::collections::HashMap;
use std::fs;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use super::cache::{FileCache, Stamp};
use super::copy::{BoardImage, ProjectImage};
use super::document::{
    COPIED_LIMIT, Collection, Document, DocumentChange, Documents, Edit, Version, Wait, too_long,
};
use super::duty::{Duty, Held};
use super::feed::{ChangeFeed, Scope};
use super::file_events::FileEvents;
use super::file_feed::{HubFeed, ProjectFeed};
use super::group::{Group, group_of};
use super::mailbox::Mailbox;
use super::presence::{self, Presence};
use super::tail::Tail;
use super::transaction::{Archive, Transaction};
use super::{
    GaveUp, LogTail, Restoring, Snapshot, Store, StoreError, archive_file, board_file, jsonl, log,
    mail_file, versioned,
};
use crate::board::Board;
use crate::board::mail::{Message, ReadPositions};
use crate::board::record::ActivityRecord;
use crate::board::task::{Task, TaskId};
use crate::file::lock::{self, FileLock, LockPolicy};
use crate::file::{atomic, regular};
use crate::home::Home;
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

impl Documents for HomeFiles {
    fn document_origin(&self, document: &Document) -> PathBuf {
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

    fn load_document(&self, document: &Document) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.document_origin(document);
        match regular::read(&path) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
            Err(error) => Err(StoreError::io(&path)(error)),
        }
    }

    fn load_document_to_copy(&self, document: &Document) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.document_origin(document);
        match regular::read_unlinked(&path, COPIED_LIMIT) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
            Err(error) if error.kind() == ErrorKind::FileTooLarge => Err(too_long(path)),
            Err(error) => Err(StoreError::io(&path)(error)),
        }
    }

    fn document_version(&self, document: &Document) -> Option<Version> {
        Stamp::of(&self.document_origin(document)).map(Version::File)
    }

    fn update_document(
        &self,
        document: &Document,
        wait: Wait,
        change: &mut DocumentChange<'_>,
    ) -> Result<bool, StoreError> {
        let Some(_guard) = self.take_lock(document, wait)? else {
            return Ok(false);
        };
        let current = self.load_document(document)?;
        if let Ok(edit) = change(current.as_deref()) {
            HomeFiles::write(&self.document_origin(document), edit)?;
        }
        Ok(true)
    }

    fn save_document(&self, document: &Document, edit: Edit) -> Result<(), StoreError> {
        HomeFiles::write(&self.document_origin(document), edit)
    }

    fn remove_document(&self, document: &Document) -> Result<bool, StoreError> {
        let _guard = match document {
            Document::QueuedAlert(_) => None,
            _ => self.take_lock(document, Wait::AsTheStoreDoes)?,
        };
        let path = self.document_origin(document);
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
    /// The token (its hash) that opened each MCP session this process handed out, by
    /// session id. In memory: on the files, an MCP session lives in the memory of the one
    /// `baton serve` that opened it (rmcp's session manager), so no other process could
    /// serve it whatever it knew of its owner, and a file written at every `initialize`
    /// would be written for nobody.
    mcp_sessions: Arc<Mutex<HashMap<String, String>>>,
}

/// What a long-running process keeps between changes: the boards it read or wrote, and the
/// group commit of each project's board and of its mail.
#[derive(Debug, Default)]
struct Resident {
    boards: FileCache<Board>,
    groups: Mutex<HashMap<String, Arc<Group<Transaction>>>>,
    mail: Mutex<HashMap<String, Arc<Group<mail_file::Opened>>>>,
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

    /// The owners of the MCP sessions this process handed out.
    fn mcp_sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
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
        board_file::recover_log::<ActivityRecord>(&self.home, project)?;
        Ok(guard)
    }

    /// Writes what `transaction` changed; the caller holds the board lock. The project's
    /// record first, then the tasks leaving the board into the archive (a crash before the
    /// board is written leaves a task in both places, never in neither), then the board
    /// with its activity lines. The board written, when it was.
    fn commit(&self, project: &str, transaction: Transaction) -> Result<Option<Board>, StoreError> {
        let committed = transaction.commit()?;
        if let Some(document) = &committed.project {
            atomic::replace(&self.home.project_file(project), document, None)?;
        }
        if !committed.archived.is_empty() {
            archive_file::append(&self.home, project, &committed.archived)?;
        }
        if let Some(board) = &committed.board {
            board_file::persist(&self.home, project, board, &committed.records)?;
        }
        Ok(committed.board)
    }

    /// The board of `project`, through the boards a resident store keeps.
    fn read_board(&self, project: &str) -> Result<Board, StoreError> {
        let Some(resident) = &self.resident else {
            return board_file::read(&self.home, project);
        };
        resident.boards.get(&self.home.board_file(project), || {
            let board = board_file::read(&self.home, project)?;
            // Every task decoded once, here: each request works on a copy of the board,
            // which shares the decoded tasks, and would otherwise decode them all again. A
            // task that does not decode is left to fail where it is used, as on the CLI.
            for task in board.tasks() {
                let _ = task;
            }
            Ok(board)
        })
    }

    /// [`Store::change_board`] committed together with the changes of other threads that
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
                let guard = self.lock_board(project)?;
                let board = self.read_board(project)?;
                Ok((guard, self.transaction(project, board, now)))
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
        archive_file::find(&self.home, &self.project, id)
    }

    fn tasks(&self) -> Result<Vec<Task>, StoreError> {
        archive_file::all(&self.home, &self.project)
    }

    fn highest_id(&self) -> Result<u64, StoreError> {
        archive_file::highest_id(&self.home, &self.project)
    }
}

/// The file store's documents are its home's files.
impl Documents for FileStore {
    fn document_origin(&self, document: &Document) -> PathBuf {
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
        serde_json::to_writer(&mut text, record).map_err(|error| StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: error.to_string(),
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

    fn home_files(&self) -> Option<&Home> {
        Some(&self.home)
    }

    fn location(&self) -> String {
        self.home.root().display().to_string()
    }

    /// Keeps the boards it read until their file changes, and commits the changes of many
    /// threads to one board (or one mail) together ([`FileStore::resident`]).
    fn resident(&self) -> Arc<dyn Store> {
        Arc::new(FileStore::resident(self.home.clone(), self.lock))
    }

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
        let _guard = self.lock_board(project)?;
        let board = board_file::read(&self.home, project)?;
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
        let recovered = board_file::recover_log(&self.home, project)?;
        Ok(Some(Snapshot {
            recovered,
            board: board_file::read_if_there(&self.home.board_file(project)),
            log: log::read(&self.home.activity_file(project)),
        }))
    }

    fn previous_board(&self, project: &str) -> Result<Option<Board>, StoreError> {
        board_file::read_if_there(&self.home.board_backup(project))
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
            current: board_file::read_if_there(&self.home.board_file(project)),
            log: log::read(&self.home.activity_file(project)).unwrap_or_default(),
        };
        if let Ok((board, records)) = plan(restoring)
            && !dry_run
        {
            board_file::persist(&self.home, project, &board, &records)?;
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
        board_file::try_recover_log::<ActivityRecord>(&self.home, project)?;
        Ok(())
    }

    fn archived_task(&self, project: &str, id: TaskId) -> Result<Option<Task>, StoreError> {
        archive_file::find(&self.home, project, id)
    }

    fn archived_tasks(&self, project: &str) -> Result<Vec<Task>, StoreError> {
        archive_file::all(&self.home, project)
    }

    fn highest_archived_id(&self, project: &str) -> Result<u64, StoreError> {
        archive_file::highest_id(&self.home, project)
    }

    /// A mark is a file of `alerts/stalled/`, created only if it is not there yet: the first
    /// to create it is the first to mark.
    fn mail(&self, project: &str) -> Result<Vec<Message>, StoreError> {
        mail_file::read(&self.home, project)
    }

    fn read_positions(&self, project: &str) -> Result<ReadPositions, StoreError> {
        mail_file::read_positions(&self.home, project)
    }

    fn change_mail(
        &self,
        project: &str,
        now: Timestamp,
        change: &mut dyn FnMut(&mut Mailbox) -> Result<(), GaveUp>,
    ) -> Result<(), StoreError> {
        let Some(resident) = &self.resident else {
            let _guard = self.lock_mail(project)?;
            let mut opened = mail_file::open(&self.home, project, now)?;
            if change(&mut opened.mailbox).is_ok() {
                mail_file::commit(&self.home, project, opened)?;
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
                let guard = self.lock_mail(project)?;
                Ok((guard, mail_file::open(&self.home, project, now)?))
            },
            |opened| {
                let latest = opened.mailbox.now.max(now);
                opened.mailbox.now = now;
                let result = change(&mut opened.mailbox);
                opened.mailbox.now = latest;
                result
            },
            |opened, _lock| mail_file::commit(&self.home, project, opened),
        )?;
        Ok(())
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
            let board = board_file::read_if_there(&home.board_file(project))?;
            ProjectImage {
                record: self
                    .documents
                    .load_document_to_copy(&Document::Project(project.to_string()))?,
                board: board.as_ref().map(BoardImage::of).transpose()?,
                log: log::read_noting(&home.activity_file(project), &mut unreadable)?,
                archive: archive_file::all_noting(home, project, &mut unreadable)?,
                ..ProjectImage::empty()
            }
        };
        let _guard = self.lock_mail(project)?;
        let mail = home.mail_file(project);
        image.mail = jsonl::read_all(&mail)?.records_noting(&mail, &mut unreadable);
        image.read_positions = versioned::load(&home.mail_cursor_file(project))?;
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
            for path in archive_file::task_files(home, project)? {
                remove_if_there(&path)?;
            }
            remove_if_there(&home.archive_dir(project).join("ids.json"))?;
            archive_file::append(home, project, &image.archive)?;
            let log = home.activity_file(project);
            for number in 1..=log::GENERATIONS {
                remove_if_there(&log::generation(&log, number))?;
            }
            replace_lines(&log, &image.log)?;
            match &image.board {
                Some(board) => board_file::write(home, project, &board.board(project))?,
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
            Some(read) => versioned::save(&positions, read)?,
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
            let value = serde_json::to_value(message).map_err(|error| StoreError::Corrupt {
                path: home.archive_dir(project),
                detail: error.to_string(),
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

    /// On the kernel's file events, or the look every 100 ms that `BATON_FILE_EVENTS=poll`
    /// asks for ([`FileEvents::from_environment`]).
    fn changes(&self, scope: &Scope) -> Result<Box<dyn ChangeFeed>, StoreError> {
        let events = FileEvents::from_environment();
        Ok(match scope {
            Scope::Project(project) => Box::new(ProjectFeed::new(&self.home, project, events)),
            Scope::Hub => Box::new(HubFeed::new(&self.home, events)),
        })
    }

    /// A duty is a lock file of the home, held open.
    fn try_hold(&self, duty: &Duty) -> Result<Option<Held>, StoreError> {
        Ok(FileLock::try_acquire(&self.duty_lock(duty))?.map(Held::new))
    }

    fn is_held(&self, duty: &Duty) -> bool {
        lock::is_locked(&self.duty_lock(duty))
    }

    fn record_mcp_session(&self, session: &str, token: &str) -> Result<(), StoreError> {
        self.mcp_sessions()
            .insert(session.to_string(), token.to_string());
        Ok(())
    }

    fn mcp_session_owner(&self, session: &str) -> Result<Option<String>, StoreError> {
        Ok(self.mcp_sessions().get(session).cloned())
    }

    fn forget_mcp_sessions(&self, sessions: &[String]) -> Result<(), StoreError> {
        let mut owners = self.mcp_sessions();
        for session in sessions {
            owners.remove(session);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::panic::{self, AssertUnwindSafe};
    use std::time::Duration;

    use super::*;
    use crate::error::{Error, Result};
    use crate::store::{at_once, change_board};

    const CHANGES: u64 = 24;

    fn line(n: u64, now: Timestamp) -> ActivityRecord {
        ActivityRecord {
            at: now,
            project: "p".into(),
            actor: format!("agent{n}"),
            action: "counted".into(),
            task: Some(TaskId(n)),
            from_status: None,
            to_status: None,
            text: None,
        }
    }

    /// Change `n` counts itself on the board (next_id) and logs one line; every fourth
    /// changes the board and then refuses, every seventh changes it and then panics, and
    /// one in three comes through a writer of its own, as a CLI process would.
    fn change(n: u64) -> impl FnOnce(&mut Transaction) -> Result<u64> {
        move |tx| {
            tx.board.next_id += 1;
            if n % 4 == 1 {
                return Err(Error::invalid(format!("change {n} refused")));
            }
            if n % 7 == 5 {
                panic!("change {n} panics");
            }
            tx.record(line(n, tx.now));
            Ok(tx.board.next_id)
        }
    }

    #[test]
    fn changes_committed_together_each_get_their_own_answer_and_lose_nothing() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path().to_path_buf());
        let lock = LockPolicy::silent(Duration::from_secs(30));
        let command = FileStore::new(home.clone(), lock);
        let resident = FileStore::resident(home.clone(), lock);
        let now = crate::time::now();
        let answers = at_once(CHANGES as usize, |n| {
            let n = n as u64;
            let answer = panic::catch_unwind(AssertUnwindSafe(|| {
                if n.is_multiple_of(3) {
                    change_board(&command, "p", now, change(n))
                } else {
                    change_board(&resident, "p", now, change(n))
                }
            }));
            (n, answer)
        });
        let mut counts = BTreeSet::new();
        let mut committed = BTreeSet::new();
        for (n, answer) in answers {
            match answer {
                Err(_) => assert_eq!(n % 7, 5, "only the panicking change panics ({n})"),
                Ok(Err(refused)) => {
                    assert_eq!(n % 4, 1, "{n} refused: {refused}");
                    assert_eq!(refused.to_string(), format!("change {n} refused"));
                }
                Ok(Ok(count)) => {
                    assert!(n % 4 != 1 && n % 7 != 5, "{n} should have failed");
                    assert!(
                        counts.insert(count),
                        "{n} saw the count {count} another saw"
                    );
                    committed.insert(n);
                }
            }
        }
        // What a refused or panicking change did to the board is gone; every other change
        // counted exactly once, in some order, each on the board its predecessor left.
        let board = board_file::read(&home, "p").unwrap();
        let first = Board::new("p").next_id;
        assert_eq!(board.next_id, first + committed.len() as u64);
        let expected: BTreeSet<u64> = (first + 1..=board.next_id).collect();
        assert_eq!(counts, expected);
        assert_eq!(resident.board("p").unwrap().next_id, board.next_id);
        let logged: Vec<u64> = resident
            .log("p", None, None)
            .unwrap()
            .iter()
            .map(|record| record.task.unwrap().0)
            .collect();
        assert_eq!(
            logged.len(),
            committed.len(),
            "one line per committed change"
        );
        assert_eq!(logged.into_iter().collect::<BTreeSet<_>>(), committed);
    }

    #[test]
    fn a_duty_has_one_holder_among_the_stores_of_one_home_until_it_lets_go() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path().to_path_buf());
        let lock = LockPolicy::silent(Duration::from_secs(5));
        let (one, other) = (
            FileStore::new(home.clone(), lock),
            FileStore::new(home, lock),
        );
        for duty in [Duty::AlertSender, Duty::Wake("codex".to_string())] {
            assert!(!other.is_held(&duty), "{duty:?}: nobody holds it yet");
            let held = one
                .try_hold(&duty)
                .unwrap()
                .expect("a free duty is taken up");
            assert!(
                other.is_held(&duty),
                "{duty:?}: seen held from another store"
            );
            assert!(
                other.try_hold(&duty).unwrap().is_none(),
                "{duty:?}: a second holder is refused"
            );
            assert!(
                other
                    .try_hold(&Duty::Wake("gemini".to_string()))
                    .unwrap()
                    .is_some(),
                "{duty:?}: another duty is free"
            );
            drop(held);
            assert!(!other.is_held(&duty), "{duty:?}: let go when dropped");
            assert!(
                other.try_hold(&duty).unwrap().is_some(),
                "{duty:?}: free again"
            );
        }
    }

    #[test]
    fn an_mcp_sessions_owner_is_known_to_the_store_that_recorded_it_until_forgotten() {
        let root = tempfile::tempdir().unwrap();
        let lock = LockPolicy::silent(Duration::from_secs(5));
        let store = FileStore::resident(Home::new(root.path().to_path_buf()), lock);
        let waiting_briefly = store.with_lock(LockPolicy::silent(Duration::from_millis(10)));
        assert_eq!(store.mcp_session_owner("s1").unwrap(), None);
        store.record_mcp_session("s1", "hash-a").unwrap();
        store.record_mcp_session("s2", "hash-b").unwrap();
        assert_eq!(
            waiting_briefly.mcp_session_owner("s1").unwrap().as_deref(),
            Some("hash-a"),
            "the same store with another lock policy knows it"
        );
        waiting_briefly
            .forget_mcp_sessions(&["s1".to_string(), "s9".to_string()])
            .unwrap();
        assert_eq!(store.mcp_session_owner("s1").unwrap(), None);
        assert_eq!(
            store.mcp_session_owner("s2").unwrap().as_deref(),
            Some("hash-b")
        );
    }

    #[test]
    fn a_batch_that_cannot_begin_refuses_each_of_its_changes_and_the_next_one_begins() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path().to_path_buf());
        let lock = LockPolicy::silent(Duration::from_secs(5));
        let resident = FileStore::resident(home.clone(), lock);
        let now = crate::time::now();
        std::fs::create_dir_all(home.board_file("p").parent().unwrap()).unwrap();
        std::fs::write(home.board_file("p"), "{ not a board").unwrap();
        let refused = change_board(&resident, "p", now, |_| Ok::<_, Error>(())).unwrap_err();
        assert_eq!(refused.exit_code(), 4, "{refused}");
        assert_eq!(refused.duplicate().to_string(), refused.to_string());
        std::fs::remove_file(home.board_file("p")).unwrap();
        let count = change_board(&resident, "p", now, change(0)).unwrap();
        assert_eq!(count, Board::new("p").next_id + 1);
    }
}
