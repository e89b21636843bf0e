//! Projects: one board each, optionally bound to a workspace directory (SPEC section 7).
//!
//! A command finds its project from `--project` or from the current directory (the longest
//! bound workspace containing it, else `default`), and a bound project refuses commands
//! from outside its workspace.

pub mod worktrees;

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ProjectError, Result, WideDirectory};
use crate::file::platform;
use crate::names::{self, NameKind};
use crate::secret::machine_key::MachineKey;
use crate::store::versioned::{self, Versioned};
use crate::store::{Collection, Store, Transaction};
use crate::text;
use crate::time::Timestamp;

pub const PROJECT_SCHEMA: u32 = 1;
/// The project of every directory not inside a bound workspace.
/// What an agent on another machine is told of its project: baton's MCP tools reach the hub
/// over HTTP, where a call that names no project acts on [`DEFAULT_PROJECT`] (SPEC section
/// 13), while the `baton` command and the hooks take it from the mapped directory. `None`
/// for `default`, which needs no naming.
pub fn tools_over_http_note(id: &str) -> Option<String> {
    (id != DEFAULT_PROJECT).then(|| {
        format!(
            "Pass `project: {}` to every baton tool: they reach the hub, which does not know \
             this directory.",
            crate::text::inline(id)
        )
    })
}

pub const DEFAULT_PROJECT: &str = "default";

/// Per-project knobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// How long a claim holds before the task counts as stalled.
    #[serde(default = "default_lease_minutes")]
    pub lease_minutes: u32,
    /// Whether handing work over starts the receiver's wake command.
    #[serde(default = "default_true")]
    pub wake: bool,
    /// Human identities that may change the coordinator.
    #[serde(default)]
    pub humans: Vec<String>,
    /// Each task in a git worktree of its own, and how its work lands (SPEC 18.4, 18.5);
    /// not written while never set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktrees: Option<worktrees::Worktrees>,
}

fn default_lease_minutes() -> u32 {
    30
}

/// The shortest lease `project set --lease` takes, in minutes.
pub const LEASE_LEAST_MINUTES: u32 = 1;
/// The longest: a week, past which a crashed agent's claim would never be noticed.
pub const LEASE_MOST_MINUTES: u32 = 7 * 24 * 60;

/// A lease as `project set --lease` takes it: `45m`, `2h`, `1d` ([`crate::time::parse_duration`]),
/// a whole number of minutes from [`LEASE_LEAST_MINUTES`] to [`LEASE_MOST_MINUTES`].
pub fn parse_lease(text: &str) -> std::result::Result<u32, String> {
    let length = crate::time::parse_duration(text)?;
    let seconds = length.num_seconds();
    let shown = text::inline(text.trim());
    if seconds % 60 != 0 {
        return Err(format!(
            "a lease is a whole number of minutes, not {shown}: e.g. 45m or 2h"
        ));
    }
    let minutes = u32::try_from(seconds / 60).unwrap_or(u32::MAX);
    if !(LEASE_LEAST_MINUTES..=LEASE_MOST_MINUTES).contains(&minutes) {
        return Err(format!("a lease is from 1m to 7d, not {shown}"));
    }
    Ok(minutes)
}

fn default_true() -> bool {
    true
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            lease_minutes: default_lease_minutes(),
            wake: true,
            humans: Vec::new(),
            worktrees: None,
        }
    }
}

/// A note in the project's shared context, kept with who wrote it and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextNote {
    pub at: Timestamp,
    pub by: String,
    pub text: String,
}

/// The contents of `project.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Project {
    #[serde(default = "default_schema")]
    pub schema: u32,
    pub id: String,
    /// The canonical workspace directory, or none for a project usable from anywhere.
    pub workspace: Option<PathBuf>,
    /// The signature, by the key of the machine that bound the workspace, of the project's
    /// id and workspace ([`Project::is_workspace_signed_by`]): on a store several machines
    /// share, a wake command runs in a workspace only on the machine that bound it, so nobody
    /// with the store's credentials picks the directory another machine's agent runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_signature: Option<String>,
    #[serde(default)]
    pub goal: Option<String>,
    #[serde(default)]
    pub coordinator: Option<String>,
    pub created_at: Timestamp,
    #[serde(default)]
    pub settings: Settings,
    #[serde(default)]
    pub context: Vec<ContextNote>,
}

impl Versioned for Project {
    const SCHEMA: u32 = PROJECT_SCHEMA;

    fn schema(&self) -> u32 {
        self.schema
    }
}

fn default_schema() -> u32 {
    PROJECT_SCHEMA
}

impl Project {
    fn new(id: &str, workspace: Option<PathBuf>, goal: Option<String>, now: Timestamp) -> Self {
        Project {
            schema: PROJECT_SCHEMA,
            id: id.to_string(),
            workspace,
            workspace_signature: None,
            goal,
            coordinator: None,
            created_at: now,
            settings: Settings::default(),
            context: Vec::new(),
        }
    }

    /// Whether the workspace was bound on the machine whose key is `key`, and not bound
    /// anew there since.
    pub fn is_workspace_signed_by(&self, key: &MachineKey) -> bool {
        self.workspace.is_some()
            && self
                .workspace_signature
                .as_deref()
                .is_some_and(|signature| {
                    key.is_latest(
                        &self.workspace_subject(),
                        &self.signed_workspace(),
                        signature,
                    )
                })
    }

    /// Signs the workspace as bound on the machine whose key is `key`.
    fn sign_workspace(&mut self, key: &MachineKey) -> Result<()> {
        let signature = key.sign_latest(&self.workspace_subject(), &self.signed_workspace())?;
        self.workspace_signature = Some(signature);
        Ok(())
    }

    /// What a workspace's signature covers, in one unambiguous encoding.
    fn signed_workspace(&self) -> Vec<u8> {
        let signed = ("baton workspace 1", &self.id, &self.workspace);
        // A string and a path always encode.
        serde_json::to_vec(&signed).unwrap_or_default()
    }

    /// What the machine's ledger keeps this project's workspace signature under.
    fn workspace_subject(&self) -> String {
        format!("workspace-{}", self.id)
    }

    pub fn lease(&self) -> chrono::Duration {
        chrono::Duration::minutes(i64::from(self.settings.lease_minutes.max(1)))
    }

    /// Whether `cwd` lies inside this project's workspace (always, for an unbound project).
    /// Both sides are compared with symlinks resolved.
    pub fn contains(&self, cwd: &Path) -> bool {
        match &self.workspace {
            Some(workspace) => canonical(cwd).starts_with(canonical(workspace)),
            None => true,
        }
    }

    /// Whether `name` may change the coordinator: the coordinator, a human named in the
    /// settings, or anyone while there is no coordinator.
    pub fn may_change_coordinator(&self, name: &str) -> bool {
        match &self.coordinator {
            None => true,
            Some(current) => current == name || self.settings.humans.iter().any(|h| h == name),
        }
    }

    /// Whether `name` may name this project from outside its workspace: one of its humans,
    /// or its coordinator.
    pub fn reaches_anywhere(&self, name: &str) -> bool {
        self.coordinator.as_deref() == Some(name) || self.settings.humans.iter().any(|h| h == name)
    }

    /// Refuses `cwd` when this project is bound to a workspace that does not contain it.
    pub fn check_access(&self, cwd: &Path) -> Result<()> {
        match &self.workspace {
            Some(workspace) if !self.contains(cwd) => Err(Error::OutsideWorkspace {
                mapped: false,
                project: self.id.clone(),
                workspace: workspace.clone(),
                cwd: cwd.to_path_buf(),
            }),
            _ => Ok(()),
        }
    }
}

/// The directory a command runs in. One that was deleted under the caller is an error
/// rather than a guess: taken for `/`, it routed commands to `default` without a word.
pub fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().map_err(|error| {
        match error.kind() {
            ErrorKind::NotFound => ProjectError::CurrentDirGone,
            _ => ProjectError::CurrentDirUnreadable {
                cause: error.to_string(),
            },
        }
        .into()
    })
}

/// Refuses a workspace that would capture every directory (`/`) or every repository of the
/// user (their home directory itself): every command run anywhere under it would belong to
/// this project and be refused elsewhere.
fn check_not_too_wide(workspace: &Path) -> Result<()> {
    let user_home = directories::BaseDirs::new().map(|dirs| canonical(dirs.home_dir()));
    let wide = if workspace.parent().is_none() {
        WideDirectory::Root
    } else if user_home.as_deref() == Some(workspace) {
        WideDirectory::UserHome
    } else {
        return Ok(());
    };
    Err(ProjectError::TooWide {
        workspace: workspace.to_path_buf(),
        wide,
    }
    .into())
}

/// Resolves symlinks so that two spellings of one directory compare equal.
pub fn canonical(path: &Path) -> PathBuf {
    platform::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Reads the record of project `id`, or `None` when the project does not exist.
pub fn load(store: &dyn Store, id: &str) -> Result<Option<Project>> {
    names::check(NameKind::Project, id)?;
    Ok(versioned::read(store, &Collection::Projects.document(id))?)
}

/// [`load`], from the text of its record as just read (`None`: there was none).
pub fn load_read(store: &dyn Store, id: &str, text: Option<&[u8]>) -> Result<Option<Project>> {
    names::check(NameKind::Project, id)?;
    let origin = store.document_origin(&Collection::Projects.document(id));
    Ok(text
        .map(|text| versioned::decode(&origin, text))
        .transpose()?)
}

/// Every project of the hub, sorted by id. Unreadable ones are errors, not skipped.
pub fn list(store: &dyn Store) -> Result<Vec<Project>> {
    let mut projects = Vec::new();
    for (id, text) in store.load_collection(Collection::Projects)? {
        names::check(NameKind::Project, &id)?;
        let origin = store.document_origin(&Collection::Projects.document(&id));
        projects.push(versioned::decode(&origin, &text)?);
    }
    Ok(projects)
}

/// The ids of the projects, sorted.
pub fn project_ids(store: &dyn Store) -> Result<Vec<String>> {
    Ok(store.list_documents(Collection::Projects)?)
}

/// Finds the project a command acts on and checks that `cwd` may use it.
/// `default` springs into being on first use; any other named project must exist.
pub fn resolve(
    store: &dyn Store,
    requested: Option<&str>,
    cwd: &Path,
    now: Timestamp,
) -> Result<Project> {
    resolve_for(store, requested, None, cwd, now)
}

/// [`resolve`] for `caller`: a project it names (`--project`) that it is a human or the
/// coordinator of is reachable from any directory (SPEC 7: a person coordinating from one
/// terminal); everyone else, agents above all, stays inside the workspace.
pub fn resolve_for(
    store: &dyn Store,
    requested: Option<&str>,
    caller: Option<&str>,
    cwd: &Path,
    now: Timestamp,
) -> Result<Project> {
    resolve_read(store, requested, None, caller, cwd, now)
}

/// [`resolve_for`], given the requested project's record as the caller has just read it
/// (`read`: `None` when it read none), which is not read again.
pub fn resolve_read(
    store: &dyn Store,
    requested: Option<&str>,
    read: Option<Project>,
    caller: Option<&str>,
    cwd: &Path,
    now: Timestamp,
) -> Result<Project> {
    let read = read.filter(|project| requested == Some(project.id.as_str()));
    let project = match requested {
        Some(id) => match read.map_or_else(|| load(store, id), |project| Ok(Some(project)))? {
            Some(project) => project,
            None if id == DEFAULT_PROJECT => ensure_default(store, now)?,
            None => {
                return Err(Error::UnknownProject {
                    project: id.to_string(),
                    known: project_ids(store)?,
                });
            }
        },
        None => {
            let projects = list(store)?;
            let default = projects
                .iter()
                .find(|project| project.id == DEFAULT_PROJECT)
                .cloned();
            match (bound_project_for(projects, cwd), default) {
                (Some(project), _) | (None, Some(project)) => project,
                (None, None) => ensure_default(store, now)?,
            }
        }
    };
    let reaches = requested.is_some() && caller.is_some_and(|name| project.reaches_anywhere(name));
    if !reaches {
        project.check_access(cwd)?;
    }
    Ok(project)
}

/// Refuses `id` unless it names a project that exists, or `default`, which springs into
/// being on first use: the check [`resolve`] makes, for a command that names its project
/// once and resolves it later, call by call (`baton mcp --project ID`).
pub fn check_exists(store: &dyn Store, id: &str) -> Result<()> {
    if id == DEFAULT_PROJECT || load(store, id)?.is_some() {
        return Ok(());
    }
    Err(Error::UnknownProject {
        project: id.to_string(),
        known: project_ids(store)?,
    })
}

/// The project whose workspace is the longest prefix of `cwd`. Workspaces that contain
/// `cwd` are nested in one another, so the longest path is the innermost.
fn bound_project_for(projects: Vec<Project>, cwd: &Path) -> Option<Project> {
    let cwd = canonical(cwd);
    projects
        .into_iter()
        .filter_map(|project| {
            let workspace = canonical(project.workspace.as_deref()?);
            cwd.starts_with(&workspace)
                .then(|| (workspace.as_os_str().len(), project))
        })
        .max_by_key(|(length, _)| *length)
        .map(|(_, project)| project)
}

fn ensure_default(store: &dyn Store, now: Timestamp) -> Result<Project> {
    if let Some(project) = load(store, DEFAULT_PROJECT)? {
        return Ok(project);
    }
    update(store, DEFAULT_PROJECT, |project| {
        Ok(project
            .get_or_insert_with(|| Project::new(DEFAULT_PROJECT, None, None, now))
            .clone())
    })
}

/// A locked read-change-write of the project's record (under the board's lock in the file
/// store, so a project change and a board change never interleave). The closure gets
/// `None` for a new project.
pub fn update<T>(
    store: &dyn Store,
    id: &str,
    change: impl FnOnce(&mut Option<Project>) -> Result<T>,
) -> Result<T> {
    names::check(NameKind::Project, id)?;
    versioned::update(store, &Collection::Projects.document(id), change)
}

/// The project's record as a change of its board sees it: as an earlier change committed
/// together with it left it, else as stored (the change holds the lock that guards it).
pub fn load_in(store: &dyn Store, transaction: &Transaction) -> Result<Option<Project>> {
    let id = Collection::Projects.document(&transaction.board.project);
    let origin = || store.document_origin(&id);
    match transaction.project() {
        Some(pending) => Ok(Some(versioned::decode(&origin(), pending)?)),
        None => match transaction.stored_project() {
            Some(stored) => Ok(stored?
                .map(|text| versioned::decode(&origin(), &text))
                .transpose()?),
            None => Ok(versioned::read(store, &id)?),
        },
    }
}

/// A read-change-write of the project's record inside a change of its board (which holds
/// the lock that guards the record too): written with the board. The closure gets `None`
/// for a project with no record.
pub fn update_in<T>(
    store: &dyn Store,
    transaction: &mut Transaction,
    change: impl FnOnce(&mut Option<Project>) -> Result<T>,
) -> Result<T> {
    let origin = store.document_origin(&Collection::Projects.document(&transaction.board.project));
    let mut project = load_in(store, transaction)?;
    let before = project.clone();
    let result = change(&mut project)?;
    if project != before
        && let Some(project) = &project
    {
        transaction.save_project(versioned::text_of(&origin, project)?);
    }
    Ok(result)
}

/// `project init`: creates a project bound to `workspace`, with `humans` allowed to change
/// its coordinator. Without a name, the workspace's directory name is used, made unique so
/// two workspaces called `api` get two projects. The binding is signed with `key`, this
/// machine's. Run again for the project already bound there (without a name, or with its
/// own), it signs that binding for this machine and changes nothing else.
pub fn init(
    store: &dyn Store,
    key: &MachineKey,
    name: Option<&str>,
    workspace: &Path,
    goal: Option<String>,
    humans: &[String],
    now: Timestamp,
) -> Result<Project> {
    for human in humans {
        names::check(NameKind::Agent, human)?;
    }
    if let Some(goal) = &goal {
        text::check_long("goal", goal)?;
    }
    let workspace =
        platform::canonicalize(workspace).map_err(|error| ProjectError::WorkspaceUnusable {
            workspace: workspace.to_path_buf(),
            cause: error.to_string(),
        })?;
    if !workspace.is_dir() {
        return Err(ProjectError::WorkspaceNotDirectory { workspace }.into());
    }
    check_not_too_wide(&workspace)?;
    let existing = list(store)?;
    if let Some(bound) = existing
        .iter()
        .find(|project| project.workspace.as_deref() == Some(workspace.as_path()))
    {
        if name.is_none_or(|name| name == bound.id) {
            return update(store, &bound.id, |slot| {
                let project = slot.as_mut().ok_or_else(|| ProjectError::Gone {
                    project: bound.id.clone(),
                })?;
                if project.workspace.as_deref() == Some(workspace.as_path()) {
                    project.sign_workspace(key)?;
                }
                Ok(project.clone())
            });
        }
        return Err(ProjectError::AlreadyBound {
            workspace,
            project: bound.id.clone(),
        }
        .into());
    }
    let goal = goal
        .map(|goal| goal.trim().to_string())
        .filter(|goal| !goal.is_empty());
    let create = |id: &str| {
        update(store, id, |slot| {
            if slot.is_some() {
                return Err(ProjectError::Exists {
                    project: id.to_string(),
                }
                .into());
            }
            let mut project = Project::new(id, Some(workspace.clone()), goal.clone(), now);
            project.settings.humans = humans.to_vec();
            project.sign_workspace(key)?;
            Ok(slot.insert(project).clone())
        })
    };
    match name {
        Some(name) => {
            names::check(NameKind::Project, name)?;
            if name == DEFAULT_PROJECT {
                return Err(ProjectError::DefaultUnbindable.into());
            }
            create(name)
        }
        None => {
            // Another `project init` may take the same name between listing and creating;
            // then the next number is tried, so two workspaces never share a project.
            let mut taken: Vec<String> = existing.into_iter().map(|project| project.id).collect();
            loop {
                let id = unique_id(&workspace, &taken);
                match create(&id) {
                    Err(Error::Project(ProjectError::Exists { .. }))
                        if load(store, &id)?.is_some() =>
                    {
                        taken.push(id)
                    }
                    result => return result,
                }
            }
        }
    }
}

/// A project id from the workspace's directory name, numbered when already taken.
fn unique_id(workspace: &Path, taken: &[String]) -> String {
    let base: String = workspace
        .file_name()
        .map(|name| name.to_string_lossy().to_lowercase())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .skip_while(|c| !c.is_ascii_alphanumeric())
        .take(56)
        .collect();
    let base = if base.is_empty() || base == DEFAULT_PROJECT {
        "project".to_string()
    } else {
        base
    };
    let taken = |id: &str| taken.iter().any(|other| other == id);
    if !taken(&base) {
        return base;
    }
    (2..)
        .map(|number| format!("{base}-{number}"))
        .find(|id| !taken(id))
        .unwrap_or(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::file::lock::LockPolicy;
    use crate::home::Home;
    use crate::store::files::FileStore;
    use std::fs;

    fn store_at(home: &Home) -> FileStore {
        FileStore::new(
            home.clone(),
            LockPolicy::silent(std::time::Duration::from_secs(5)),
        )
    }

    fn now() -> Timestamp {
        "2026-11-29T12:00:00Z".parse().unwrap()
    }

    /// The key of the machine whose home is `home`.
    fn key_of(home: &Home) -> MachineKey {
        MachineKey::load_or_make(&home.machine_key_file()).unwrap()
    }

    #[test]
    fn nested_workspaces_pick_the_longest_and_outsiders_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path().join("home"));
        let store = store_at(&home);
        let key = key_of(&home);
        let outer = root.path().join("src");
        let inner = outer.join("api");
        let elsewhere = root.path().join("web");
        for dir in [&inner, &elsewhere] {
            fs::create_dir_all(dir).unwrap();
        }
        init(&store, &key, Some("outer"), &outer, None, &[], now()).unwrap();
        init(&store, &key, None, &inner, None, &[], now()).unwrap();
        let deep = inner.join("src");
        fs::create_dir_all(&deep).unwrap();
        assert_eq!(resolve(&store, None, &deep, now()).unwrap().id, "api");
        assert_eq!(resolve(&store, None, &outer, now()).unwrap().id, "outer");
        assert_eq!(
            resolve(&store, None, &elsewhere, now()).unwrap().id,
            "default"
        );
        let refused = resolve(&store, Some("api"), &elsewhere, now()).unwrap_err();
        assert!(
            matches!(refused, Error::OutsideWorkspace { .. }),
            "{refused}"
        );
        let unknown = resolve(&store, Some("nope"), &elsewhere, now()).unwrap_err();
        assert!(matches!(unknown, Error::UnknownProject { .. }), "{unknown}");
        assert!(!home.project_dir("nope").exists(), "no silent new board");
    }

    #[test]
    fn two_workspaces_with_one_name_get_two_projects() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path().join("home"));
        let store = store_at(&home);
        let key = key_of(&home);
        let first = root.path().join("a/api");
        let second = root.path().join("b/api");
        fs::create_dir_all(&first).unwrap();
        fs::create_dir_all(&second).unwrap();
        let one = init(&store, &key, None, &first, None, &[], now()).unwrap();
        let two = init(&store, &key, None, &second, None, &[], now()).unwrap();
        assert_eq!((one.id.as_str(), two.id.as_str()), ("api", "api-2"));
        assert!(
            init(&store, &key, Some("web"), &first, None, &[], now()).is_err(),
            "bound twice"
        );
        assert!(one.is_workspace_signed_by(&key));
        let other = tempfile::tempdir().unwrap();
        let elsewhere = MachineKey::load_or_make(&other.path().join("machine.key")).unwrap();
        assert!(
            !one.is_workspace_signed_by(&elsewhere),
            "another machine's key"
        );
        let mut moved = one.clone();
        moved.workspace = Some(second.clone());
        assert!(!moved.is_workspace_signed_by(&key), "another directory");
        // Run again where it is bound: the binding is signed anew, nothing else changes.
        let again = init(&store, &key, None, &first, None, &[], now()).unwrap();
        assert_eq!(
            (again.id.as_str(), again.created_at),
            ("api", one.created_at)
        );
        assert!(again.is_workspace_signed_by(&key));
    }
}
