//! Crash-safe replacement of a whole file: temp file in the same directory, fsync, rename,
//! fsync the directory. A reader sees the old file or the new one, never a mix.
//!
//! [`replace_unsynced`] is the same rename without the two syncs, for what a power cut may
//! lose: caches, and records of activity (an agent's last seen).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub use super::platform::private_open_options;
use super::{FileError, platform, regular};

/// Creates `dir` and its missing parents, private to their owner (0700 on Unix).
pub fn create_private_dir_all(dir: &Path) -> Result<(), FileError> {
    if dir.is_dir() {
        return Ok(());
    }
    platform::create_private_dirs(dir).map_err(FileError::io(dir))
}

/// The temp file a replacement of `path` is written to. One fixed name per file is safe
/// because every writer holds that file's lock, and it means a writer killed mid-write
/// leaves at most one stray temp file, which the next writer overwrites.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Replaces `path` with `contents` atomically. With `backup`, the previous contents stay
/// reachable there (hard-linked, so keeping them costs no copy). The caller holds the lock
/// that guards `path`.
pub fn replace(path: &Path, contents: &[u8], backup: Option<&Path>) -> Result<(), FileError> {
    stage(path, contents)?.commit(backup)
}

/// New contents written and synced beside their file, not yet in place.
#[must_use = "a staged file does nothing until committed"]
pub struct Staged {
    temp: PathBuf,
    path: PathBuf,
    identity: FileIdentity,
}

/// Which file a path names, told apart from any other: its inode number (on Windows its file
/// index: [`platform::file_id`]) and length. A rename keeps both, so the file at `path`
/// after [`Staged::commit`] has the staged file's identity, and as long as the staged file
/// exists no other file can have its inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileIdentity {
    pub inode: u64,
    pub length: u64,
}

impl FileIdentity {
    /// The identity of the file at `path`, whose `metadata` the caller has read.
    pub fn of(path: &Path, metadata: &fs::Metadata) -> Self {
        FileIdentity {
            inode: platform::file_id(path, metadata),
            length: metadata.len(),
        }
    }

    /// The identity of the file at `path` now; `None` when there is none.
    pub fn at(path: &Path) -> Result<Option<Self>, FileError> {
        match fs::metadata(path) {
            Ok(metadata) => Ok(Some(FileIdentity::of(path, &metadata))),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(FileError::io(path)(error)),
        }
    }
}

/// Writes `contents` to the temp file of `path` and syncs it. Nothing a reader sees changes
/// until [`Staged::commit`]; a full disk fails here, with `path` untouched.
pub fn stage(path: &Path, contents: &[u8]) -> Result<Staged, FileError> {
    stage_with(path, |file| file.write_all(contents))
}

/// As [`stage`], with the contents written by `write` (buffered), so a large file need not
/// be built in memory first.
pub fn stage_with(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<&File>) -> std::io::Result<()>,
) -> Result<Staged, FileError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_private_dir_all(dir)?;
    let temp = temp_path(path);
    let written = write_synced(&temp, write);
    if written.is_err() {
        // Give the space back at once; the next writer would truncate it anyway.
        let _ = fs::remove_file(&temp);
    }
    Ok(Staged {
        identity: written?,
        temp,
        path: path.to_path_buf(),
    })
}

fn write_synced(
    temp: &Path,
    write: impl FnOnce(&mut BufWriter<&File>) -> std::io::Result<()>,
) -> Result<FileIdentity, FileError> {
    let file = write_temp(temp, write)?;
    file.sync_all()
        .and_then(|()| file.metadata())
        .map(|metadata| FileIdentity::of(temp, &metadata))
        .map_err(FileError::io(temp))
}

/// Writes the temp file `temp` (a regular file, private) through `write`, flushed to the
/// system but not synced.
fn write_temp(
    temp: &Path,
    write: impl FnOnce(&mut BufWriter<&File>) -> std::io::Result<()>,
) -> Result<File, FileError> {
    let file = regular::open_with(
        temp,
        private_open_options()
            .write(true)
            .create(true)
            .truncate(true),
    )
    .map_err(FileError::io(temp))?;
    let mut out = BufWriter::with_capacity(64 * 1024, &file);
    write(&mut out)
        .and_then(|()| out.flush())
        .map_err(FileError::io(temp))?;
    drop(out);
    Ok(file)
}

/// Replaces `path` with `contents` by a rename, syncing nothing: a reader still sees the old
/// file or the new one, never a mix, and the caller holds the lock that guards `path`, as
/// for [`replace`]. What a power cut soon after leaves depends on the filesystem: the old
/// file or the new one where it writes a file's data before a rename over it (ext4's
/// default, btrfs, ZFS), possibly an empty file elsewhere (XFS, NTFS). So it is for what
/// may be lost: a cache made again from other files, or a record of activity rewritten
/// often (an agent's last seen), where the writes it saves are the cost that matters.
pub fn replace_unsynced(path: &Path, contents: &[u8]) -> Result<(), FileError> {
    let temp = temp_path(path);
    let written = write_temp(&temp, |out| out.write_all(contents));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    drop(written?);
    platform::rename_replacing(&temp, path).map_err(FileError::io(path))
}

/// Replaces `target`, a file of the user's rather than baton's (an agent client's
/// configuration), with `contents`, as [`replace`] does: a temp file beside it, synced,
/// renamed over it, the directory synced. The temp file is hidden (`.<name>.baton-tmp`) in
/// a directory the user owns, and the file gets the permission bits `mode` (where the
/// system has them) rather than baton's private ones. The directory must exist.
pub fn replace_user_file(target: &Path, contents: &[u8], mode: u32) -> Result<(), FileError> {
    let dir = target.parent().unwrap_or(Path::new("/"));
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let temp = dir.join(format!(".{name}.baton-tmp"));
    let mut file = regular::open_with(
        &temp,
        platform::open_options_with_mode(mode)
            .write(true)
            .create(true)
            .truncate(true),
    )
    .map_err(FileError::io(&temp))?;
    file.write_all(contents)
        .and_then(|()| platform::set_mode(&file, mode))
        .and_then(|()| file.sync_all())
        .map_err(FileError::io(&temp))?;
    drop(file);
    platform::rename_replacing(&temp, target).map_err(FileError::io(target))?;
    sync_dir(dir)
}

impl Staged {
    /// The staged file's identity, which the file at its path has once committed.
    pub fn identity(&self) -> FileIdentity {
        self.identity
    }

    /// Renames the staged contents over the file (keeping the old one at `backup`) and
    /// makes the rename durable.
    pub fn commit(self, backup: Option<&Path>) -> Result<(), FileError> {
        if let Some(backup) = backup
            && self.path.exists()
        {
            keep_backup(&self.path, backup)?;
        }
        platform::rename_replacing(&self.temp, &self.path).map_err(FileError::io(&self.path))?;
        sync_dir(self.path.parent().unwrap_or(Path::new(".")))
    }

    /// Drops the staged contents.
    pub fn discard(self) {
        let _ = fs::remove_file(&self.temp);
    }
}

/// Points `backup` at the current contents of `path` without a moment where `backup` is
/// missing or half-written.
fn keep_backup(path: &Path, backup: &Path) -> Result<(), FileError> {
    let staged = temp_path(backup);
    match fs::remove_file(&staged) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(FileError::io(&staged)(error)),
    }
    if fs::hard_link(path, &staged).is_err() {
        // Some filesystems refuse hard links; a copy is slower but just as safe.
        fs::copy(path, &staged).map_err(FileError::io(&staged))?;
        File::open(&staged)
            .and_then(|file| file.sync_all())
            .map_err(FileError::io(&staged))?;
    }
    platform::rename_replacing(&staged, backup).map_err(FileError::io(backup))?;
    // A rename between two links to one file does nothing and leaves both names, and that
    // is what a writer killed after keeping the backup but before renaming its new file
    // into place leaves behind: the backup and the file are then one file already.
    let _ = fs::remove_file(&staged);
    Ok(())
}

/// Makes a rename in `dir` durable.
pub fn sync_dir(dir: &Path) -> Result<(), FileError> {
    platform::sync_dir(dir).map_err(FileError::io(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backup_already_linked_to_the_file_leaves_no_temp_file() {
        // As a writer killed between keeping the backup and its rename leaves them.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.json");
        let backup = dir.path().join("board.json.bak");
        fs::write(&path, b"one").unwrap();
        fs::hard_link(&path, &backup).unwrap();
        replace(&path, b"two", Some(&backup)).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::read(&backup).unwrap(), b"one");
        assert!(
            !temp_path(&backup).exists(),
            "the backup's temp file is gone"
        );
    }

    #[cfg(windows)]
    #[test]
    fn a_replace_outwaits_a_reader_holding_the_file_for_a_moment() {
        // Another process reading the board as a write replaces it: where the rename has
        // the classic semantics (Wine, FAT, network shares) it is refused until that reader
        // closes the file.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.json");
        fs::write(&path, b"one").unwrap();
        let reader = File::open(&path).unwrap();
        let staged = stage(&path, b"two").unwrap();
        let closes = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(reader);
        });
        staged.commit(None).unwrap();
        closes.join().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
    }

    #[test]
    fn replaces_keeps_a_backup_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/board.json");
        let backup = dir.path().join("sub/board.json.bak");
        replace(&path, b"one", Some(&backup)).unwrap();
        assert!(!backup.exists(), "no backup of a file that did not exist");
        replace(&path, b"two", Some(&backup)).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::read(&backup).unwrap(), b"one");
        replace(&path, b"three", Some(&backup)).unwrap();
        assert_eq!(fs::read(&backup).unwrap(), b"two");
        assert!(!temp_path(&path).exists());
        if cfg!(unix) {
            let mode = platform::mode(&fs::metadata(&path).unwrap());
            assert_eq!(mode, Some(0o600));
            let dir_mode = platform::mode(&fs::metadata(dir.path().join("sub")).unwrap());
            assert_eq!(dir_mode, Some(0o700));
        }
    }
}
