//! Carrying a plan out: under the setup lock, each client's files are backed up and written
//! (through a symbolic link, keeping their permissions, temp file and rename), the manifest
//! kept in step, and the agent registered.

use std::fs;
use std::path::{Path, PathBuf};

use crate::client::Client;
use crate::error::{Result, SetupError};
use crate::file::{atomic, platform};
use crate::home::Home;
use crate::names::{self, NameKind};
use crate::registry;
use crate::secret::machine_key::MachineKey;
use crate::store::Store;
use crate::store::StoreError;
use crate::store::files::HomeFiles;
use crate::time::Timestamp;

use super::edit::{FileEdit, Format, read_text};
use super::manifest::Manifest;
use super::plan::{ClientPlan, Registration, plan, wake_after_unwiring, wants_wake_command};
use super::service::check_listen_service;
use super::{Environment, Wiring};

/// Plans (with `dry_run`, only plans) and carries out `wiring` for `clients`, under the
/// setup lock. Returns what changed, client by client.
pub fn run(
    store: &dyn Store,
    local: &HomeFiles,
    env: &Environment,
    clients: &[Client],
    wiring: &Wiring,
    dry_run: bool,
    now: Timestamp,
) -> Result<Vec<ClientPlan>> {
    if let Wiring::Remote {
        listen: Some(_), ..
    } = wiring
    {
        check_listen_service(env, clients)?;
    }
    if let Wiring::Install {
        agent: Some(agent), ..
    } = wiring
    {
        names::check(NameKind::Agent, agent)?;
        if clients.len() > 1 {
            return Err(SetupError::OneAgentManyClients {
                agent: agent.clone(),
                clients: clients.len(),
            }
            .into());
        }
    }
    let hub = local.home();
    if dry_run {
        let manifest = Manifest::load(local)?;
        return clients
            .iter()
            .map(|client| plan(store, hub, env, &manifest, *client, wiring))
            .collect();
    }
    let mut done = Vec::new();
    for client in clients {
        // Under the manifest's lock (the setup lock), which is let go between clients.
        let plan = Manifest::update(local, |manifest| {
            carry_out(store, hub, env, manifest, *client, wiring, now)
        })?;
        if let Some(registration) = &plan.registration {
            register(store, hub, now, registration)?;
        }
        done.push(plan);
    }
    Ok(done)
}

/// How often a client's plan is made again when the client rewrites its file meanwhile
/// (Claude Code writes `.claude.json` while it runs).
const ATTEMPTS: usize = 3;

fn carry_out(
    store: &dyn Store,
    hub: &Home,
    env: &Environment,
    manifest: &mut Manifest,
    client: Client,
    wiring: &Wiring,
    now: Timestamp,
) -> Result<ClientPlan> {
    for _ in 0..ATTEMPTS {
        let mut plan = plan(store, hub, env, manifest, client, wiring)?;
        let mut is_current = true;
        for edit in &plan.files {
            is_current &= read_text(&edit.path)? == edit.before;
        }
        if !is_current {
            continue;
        }
        let mut emptied_dirs = Vec::new();
        for edit in &mut plan.files {
            write_edit(edit, manifest, &mut emptied_dirs, wiring, now)?;
        }
        // Deepest first, so a directory is empty by the time its parent is tried.
        emptied_dirs.sort_by_key(|dir| std::cmp::Reverse(dir.components().count()));
        for dir in emptied_dirs {
            // Not empty means someone else put something there: it stays.
            let _ = fs::remove_dir(&dir);
        }
        return Ok(plan);
    }
    Err(SetupError::KeptChanging { client }.into())
}

/// Backs up, writes (or deletes) one file and keeps the manifest in step.
fn write_edit(
    edit: &mut FileEdit,
    manifest: &mut Manifest,
    emptied_dirs: &mut Vec<PathBuf>,
    wiring: &Wiring,
    now: Timestamp,
) -> Result<()> {
    let record = manifest.record(&edit.path).cloned().unwrap_or_default();
    let is_setups_own = edit.format.is_setups_own()
        || (edit.after.is_none() && record.created_file)
        || edit.before.is_none();
    if !is_setups_own {
        edit.backup = Some(back_up(&edit.path, now)?);
    }
    match &edit.after {
        Some(text) => {
            let mode = match edit.format {
                Format::Json | Format::Toml => Mode::KeepElse(0o600),
                // Whoever could read it could act as the agent on the hub.
                Format::Secret => Mode::Exactly(0o600),
                Format::Markdown | Format::Owned | Format::Plugin | Format::Service => {
                    Mode::KeepElse(0o644)
                }
            };
            let created_dirs = write_file(&edit.path, text, mode)?;
            if !matches!(wiring, Wiring::Uninstall) {
                manifest.remember(
                    &edit.path,
                    edit.before.is_none(),
                    &edit.created_keys,
                    &created_dirs,
                );
                if let Some(before) = &edit.before
                    && !edit.format.is_setups_own()
                {
                    manifest.remember_original(&edit.path, before, text);
                }
            }
        }
        None => {
            fs::remove_file(&edit.path).map_err(StoreError::io(&edit.path))?;
            if let Some(record) = manifest.forget(&edit.path) {
                emptied_dirs.extend(record.created_dirs);
            }
            if edit.takes_empty_dir
                && let Some(dir) = edit.path.parent()
            {
                emptied_dirs.push(dir.to_path_buf());
            }
        }
    }
    if matches!(wiring, Wiring::Uninstall) && edit.after.is_some() {
        manifest.forget(&edit.path);
    }
    Ok(())
}

/// This machine's key, which signs the wake commands setup registers.
fn machine_key(hub: &Home) -> Result<MachineKey> {
    Ok(MachineKey::load_or_make(&hub.machine_key_file())?)
}

/// Registers the agent: a wake command or strengths the user set are never replaced (a wake
/// command an earlier setup registered is brought up to date).
fn register(
    store: &dyn Store,
    hub: &Home,
    now: Timestamp,
    registration: &Registration,
) -> Result<()> {
    match registration {
        Registration::Wire { agent, client } => registry::update(store, agent, now, |record, _| {
            if record.strengths.is_empty() {
                record.strengths = client.default_strengths().to_string();
            }
            let ours = client.wake_command_on(Some(hub.root()), store.is_shared_by_machines());
            let key = machine_key(hub)?;
            // Setup's own command is signed again when this machine did not sign it (written
            // before wake commands were signed, or by another machine).
            let unsigned_ours =
                record.wake.as_ref() == Some(&ours) && !record.is_wake_signed_by(&key);
            if unsigned_ours || wants_wake_command(hub, store, *client, record.wake.as_deref()) {
                record.set_wake(ours, &key)?;
            }
            if !record.clients.iter().any(|name| name == client.name()) {
                record.clients.push(client.name().to_string());
            }
            Ok(())
        }),
        Registration::Unwire { agent, client } => {
            if registry::load(store, agent)?.is_none() {
                return Ok(());
            }
            registry::update(store, agent, now, |record, _| {
                match wake_after_unwiring(hub, store, *client, record) {
                    Some(Some(wake)) => record.set_wake(wake, &machine_key(hub)?)?,
                    Some(None) => record.remove_wake(Some(&machine_key(hub)?))?,
                    None => {}
                }
                record.clients.retain(|name| name != client.name());
                Ok(())
            })
        }
    }
}

/// Copies `path` to `<path>.baton-backup-<time>` (a free name) before it changes.
fn back_up(path: &Path, now: Timestamp) -> Result<PathBuf> {
    let stamp = now.datetime().format("%Y%m%dT%H%M%SZ").to_string();
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut backup = path.with_file_name(format!("{name}.baton-backup-{stamp}"));
    let mut counter = 1;
    while fs::symlink_metadata(&backup).is_ok() {
        counter += 1;
        backup = path.with_file_name(format!("{name}.baton-backup-{stamp}-{counter}"));
    }
    // fs::copy follows a symbolic link and keeps the permissions, as a backup should.
    fs::copy(path, &backup).map_err(StoreError::io(&backup))?;
    Ok(backup)
}

/// The permission bits a written file gets, where the system has them (Unix).
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// The file's own, or these for a new file.
    KeepElse(u32),
    /// These, whatever the file had.
    Exactly(u32),
}

/// Replaces the file at `path` (through a symbolic link, keeping its permissions unless
/// `mode` says otherwise) with a temp-file-and-rename write. Returns the directories it had
/// to create.
fn write_file(path: &Path, text: &str, mode: Mode) -> Result<Vec<PathBuf>> {
    let is_link = fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink());
    let target = if is_link {
        fs::canonicalize(path).map_err(StoreError::io(path))?
    } else {
        path.to_path_buf()
    };
    let dir = target.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut created_dirs = Vec::new();
    let mut missing = dir.as_path();
    while !missing.exists() {
        created_dirs.push(missing.to_path_buf());
        match missing.parent() {
            Some(parent) => missing = parent,
            None => break,
        }
    }
    fs::create_dir_all(&dir).map_err(StoreError::io(&dir))?;
    let mode = match mode {
        Mode::KeepElse(mode_if_new) => fs::metadata(&target)
            .ok()
            .and_then(|meta| platform::mode(&meta))
            .unwrap_or(mode_if_new),
        Mode::Exactly(mode) => mode,
    };
    atomic::replace_user_file(&target, text.as_bytes(), mode)?;
    Ok(created_dirs)
}

// Its one test reads Unix's permission bits.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn writes_through_symlinks_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/settings.json");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "{}").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_file(&link, "{\"a\": 1}", Mode::KeepElse(0o600)).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "{\"a\": 1}");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );

        let fresh = dir.path().join("a/b/new.json");
        let created = write_file(&fresh, "{}", Mode::KeepElse(0o600)).unwrap();
        assert_eq!(created, vec![dir.path().join("a/b"), dir.path().join("a")]);
        assert_eq!(
            fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}
