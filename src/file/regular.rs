//! Opening baton's files: only regular files, and never a wait inside open(2).
//!
//! Anything may sit at a path baton owns: a directory, a socket, or a FIFO left by a
//! confused agent, and a FIFO opened for reading blocks until a writer comes, which froze
//! every command (hooks included) and left a writer holding the board lock. Every file
//! baton reads or writes at its paths is opened here: the path is checked before opening,
//! opened non-blocking so that a FIFO slipped in after the check cannot block either, and
//! the opened file is checked again.

use std::fmt;
use std::fs::{self, File, FileType, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

use super::platform;

/// What was found where a regular file should be. Carried inside an [`io::Error`], so a
/// caller's `NotFound` handling stays as it was; [`super::FileError::io`] turns it into
/// [`super::FileError::NotRegular`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotRegularFile {
    /// `a FIFO`, `a directory`, …
    pub kind: &'static str,
}

impl fmt::Display for NotRegularFile {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}, not a regular file", self.kind)
    }
}

impl std::error::Error for NotRegularFile {}

impl NotRegularFile {
    /// The `NotRegularFile` inside `error`, if that is what it carries.
    pub fn of(error: &io::Error) -> Option<NotRegularFile> {
        error
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<NotRegularFile>())
            .copied()
    }
}

/// Opens `path` for reading.
pub fn open(path: &Path) -> io::Result<File> {
    open_with(path, OpenOptions::new().read(true))
}

/// Opens `path` with `options`, refusing anything but a regular file (a symlink to one is
/// fine). A missing file gives the usual `NotFound`, or is created if `options` say so.
pub fn open_with(path: &Path, options: &OpenOptions) -> io::Result<File> {
    match fs::metadata(path) {
        Ok(metadata) => check(metadata.file_type())?,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    // O_NONBLOCK makes open(2) of a FIFO return at once (or fail, for writing with no
    // reader) should one appear between the check and here; on a regular file it changes
    // nothing.
    let file = platform::never_block(options).open(path)?;
    check(file.metadata()?.file_type())?;
    Ok(file)
}

/// The whole of the regular file at `path`.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = open(path)?;
    let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |meta| meta.len() as usize));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The whole of the regular file at `path`, as UTF-8 text.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    let bytes = read(path)?;
    String::from_utf8(bytes).map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))
}

/// The whole of the regular file at `path` as one store's copy takes it to another: the
/// file itself, never through a symbolic link (which may point at anything of the user's,
/// `/etc/passwd` or another hub's tokens), and at most `limit` bytes, read no further. A
/// link is refused as [`NotRegularFile`] (`a symbolic link`), a longer file with
/// [`io::ErrorKind::FileTooLarge`].
pub fn read_unlinked(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file_type = fs::symlink_metadata(path)?.file_type();
    if file_type.is_symlink() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            NotRegularFile {
                kind: "a symbolic link",
            },
        ));
    }
    check(file_type)?;
    // Nor a link that took the file's place since the look above (nor a FIFO, as `open`).
    let file = platform::never_block_nor_follow(OpenOptions::new().read(true)).open(path)?;
    check(file.metadata()?.file_type())?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("longer than {limit} bytes"),
        ));
    }
    Ok(bytes)
}

/// What sits at `path` when it is not a regular file; `None` for a regular file or nothing.
pub fn not_regular(path: &Path) -> Option<NotRegularFile> {
    fs::metadata(path)
        .ok()
        .and_then(|metadata| check(metadata.file_type()).err())
        .and_then(|error| NotRegularFile::of(&error))
}

fn check(file_type: FileType) -> io::Result<()> {
    let kind = if file_type.is_file() {
        return Ok(());
    } else if file_type.is_dir() {
        "a directory"
    } else {
        platform::special_kind(file_type).unwrap_or("something else")
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        NotRegularFile { kind },
    ))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;
    use std::process::Command;

    #[test]
    fn a_regular_file_opens_and_anything_else_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("board.json");
        fs::write(&file, b"{}").unwrap();
        assert_eq!(read(&file).unwrap(), b"{}");
        assert_eq!(
            read(&dir.path().join("missing")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );

        let fifo = dir.path().join("fifo");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let socket = dir.path().join("socket");
        let _listener = UnixListener::bind(&socket).unwrap();
        for (path, kind) in [
            (dir.path().to_path_buf(), "a directory"),
            (fifo.clone(), "a FIFO"),
            (socket, "a socket"),
            (Path::new("/dev/null").to_path_buf(), "a character device"),
        ] {
            let error = read(&path).unwrap_err();
            assert_eq!(NotRegularFile::of(&error), Some(NotRegularFile { kind }));
            assert_eq!(not_regular(&path), Some(NotRegularFile { kind }));
        }
        // Opening a FIFO to append, with nobody reading, must not block either.
        let mut append = OpenOptions::new();
        append.append(true).create(true);
        let error = open_with(&fifo, &append).unwrap_err();
        assert_eq!(error.to_string(), "a FIFO, not a regular file");
    }
}
