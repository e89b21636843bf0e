//! The only place that locks: an exclusive `fs4` lock on a sidecar file that is never
//! deleted and never renamed over. The holder writes its pid into it so that a waiter can
//! say whom it waits for.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use fs4::{FileExt, TryLockError};

use super::atomic::{create_private_dir_all, private_open_options};
use super::{FileError, platform, regular};
use crate::process::is_process_alive;
use crate::setting::SettingError;

/// How long to wait for a lock and whom to tell about the wait.
#[derive(Debug, Clone, Copy)]
pub struct LockPolicy {
    pub timeout: Duration,
    /// Called once, with a line like `waiting for the board lock held by pid 42`, when the
    /// lock is busy. The CLI prints it to stderr; tests may collect it.
    pub on_wait: fn(&str),
}

/// How long a lock is waited for when `BATON_LOCK_TIMEOUT` is unset (or empty).
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest wait `BATON_LOCK_TIMEOUT` may ask for: an hour.
pub const MAX_LOCK_TIMEOUT_SECONDS: f64 = 3600.0;

impl LockPolicy {
    /// `BATON_LOCK_TIMEOUT` seconds (default 10; empty counts as unset), announcing waits
    /// on stderr. Any value but a number of seconds from 0 to 3600 is refused rather than
    /// guessed at: `abc` silently meaning 10, or `1e300` overflowing a `Duration`, hid the
    /// mistake.
    pub fn from_environment() -> Result<Self, SettingError> {
        let timeout = match std::env::var_os("BATON_LOCK_TIMEOUT") {
            None => DEFAULT_LOCK_TIMEOUT,
            Some(value) if value.is_empty() => DEFAULT_LOCK_TIMEOUT,
            Some(value) => value.to_str().and_then(parse_lock_timeout).ok_or_else(|| {
                SettingError::new(
                    format!(
                        "BATON_LOCK_TIMEOUT must be a number of seconds from 0 to 3600, \
                             not `{}`",
                        value.to_string_lossy().escape_debug()
                    ),
                    Some(
                        "e.g. BATON_LOCK_TIMEOUT=10 (the default), or 2.5; unset it for \
                         the default"
                            .into(),
                    ),
                )
            })?,
        };
        Ok(LockPolicy {
            timeout,
            on_wait: |line| eprintln!("{line}"),
        })
    }
}

/// A lock timeout in seconds, `0` to `3600`, fractions allowed; `None` for anything else
/// (words, `inf`, `NaN`, negatives, more than an hour).
pub fn parse_lock_timeout(text: &str) -> Option<Duration> {
    let seconds: f64 = text.trim().parse().ok()?;
    // NaN compares false with both ends, so it is refused here too.
    (0.0..=MAX_LOCK_TIMEOUT_SECONDS)
        .contains(&seconds)
        .then(|| Duration::from_secs_f64(seconds))
}

impl LockPolicy {
    /// Waits up to `timeout` and announces nothing: for tests, and for a caller with nobody
    /// to tell of a wait.
    pub fn silent(timeout: Duration) -> Self {
        LockPolicy {
            timeout,
            on_wait: |_| {},
        }
    }
}

/// A held lock; released when dropped (closing the file releases the `flock`).
#[derive(Debug)]
pub struct FileLock {
    file: File,
    path: PathBuf,
}

impl FileLock {
    /// Takes the lock at `path`, creating the file if needed. `what` names the lock in the
    /// waiting line ("the board lock").
    pub fn acquire(path: &Path, what: &str, policy: LockPolicy) -> Result<FileLock, FileError> {
        let mut file = open_lock_file(path)?;
        if !try_lock(&file, path)? {
            let holder = Holder::of(read_holder(&mut file));
            (policy.on_wait)(&format!("waiting for {what} held by {holder}"));
            wait_for(&file, path, policy.timeout, holder)?;
        }
        FileLock::held(file, path)
    }

    /// Takes the lock at `path` if nobody holds it; `None` when someone does. For locks
    /// whose holder is doing the job already (the wake supervisor), so waiting is pointless.
    pub fn try_acquire(path: &Path) -> Result<Option<FileLock>, FileError> {
        let file = open_lock_file(path)?;
        if !try_lock(&file, path)? {
            return Ok(None);
        }
        FileLock::held(file, path).map(Some)
    }

    /// Wraps a file whose lock this process now holds, and signs it with our pid.
    fn held(file: File, path: &Path) -> Result<FileLock, FileError> {
        let mut lock = FileLock {
            file,
            path: path.to_path_buf(),
        };
        lock.record_holder()?;
        Ok(lock)
    }

    /// Writes the holder's pid over the start of the lock file, padded to one width so the
    /// file need not be cut first: truncating a file makes ext4 flush it when it is closed,
    /// which cost a quarter of a millisecond on every lock here.
    fn record_holder(&mut self) -> Result<(), FileError> {
        let record = format!("{:<10}\n", std::process::id());
        let result = platform::write_all_at(&self.file, record.as_bytes(), 0).and_then(|()| {
            match self.file.metadata()?.len() > record.len() as u64 {
                // Something longer was written here by hand: cut it, once.
                true => self.file.set_len(record.len() as u64),
                false => Ok(()),
            }
        });
        result.map_err(FileError::io(&self.path))
    }
}

/// Opens (creating when needed) a lock file; it is never truncated here, so the holder's
/// pid stays readable to waiters.
fn open_lock_file(path: &Path) -> Result<File, FileError> {
    if let Some(parent) = path.parent() {
        create_private_dir_all(parent)?;
    }
    regular::open_with(
        path,
        private_open_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )
    .map_err(FileError::io(path))
}

/// One attempt: `true` when the lock is now ours, `false` when someone else holds it.
fn try_lock(file: &File, path: &Path) -> Result<bool, FileError> {
    match FileExt::try_lock(file) {
        Ok(()) => Ok(true),
        Err(TryLockError::WouldBlock) => Ok(false),
        Err(TryLockError::Error(source)) => Err(FileError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Who holds a busy lock, as far as a waiter can tell from the pid in the lock file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// The recorded pid, a process that is running.
    Pid(u32),
    /// The recorded pid has exited, so something that does not sign the file holds the
    /// lock: a child that inherited it, or a tool such as `flock(1)`.
    Exited(u32),
    /// No pid is recorded.
    Unknown,
}

impl Holder {
    /// Judges the pid read from a busy lock's file.
    pub fn of(recorded: Option<u32>) -> Holder {
        match recorded {
            Some(pid) if is_process_alive(pid) == Some(false) => Holder::Exited(pid),
            Some(pid) => Holder::Pid(pid),
            None => Holder::Unknown,
        }
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Holder::Pid(pid) => write!(formatter, "pid {pid}"),
            Holder::Exited(pid) => write!(
                formatter,
                "another process (pid {pid}, recorded as its holder, has exited)"
            ),
            Holder::Unknown => write!(formatter, "another process"),
        }
    }
}

/// The pid recorded by the current holder, if it wrote one.
pub fn read_holder_of(path: &Path) -> Option<u32> {
    let mut file = regular::open(path).ok()?;
    read_holder(&mut file)
}

fn read_holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Whether `path` is locked by someone right now, looking without taking the lock: a probe
/// that took it, even for an instant, would make a writer arriving then wait and name the
/// prober as the holder, and a wake supervisor starting then exit as if another ran. Linux
/// lists every held `flock` in `/proc/locks`; where that list is missing or cannot tell
/// this file apart, the lock is tried (and let go at once) instead.
pub fn is_locked(path: &Path) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else {
        return false;
    };
    if !metadata.is_file() {
        return false;
    }
    listed_in_proc_locks(&metadata).unwrap_or_else(|| is_locked_by_trying(path))
}

/// Whether Linux's list of held locks has one on the file of `metadata`; `None` when it
/// cannot tell.
#[cfg(target_os = "linux")]
fn listed_in_proc_locks(metadata: &std::fs::Metadata) -> Option<bool> {
    let (device, inode) = platform::device_and_inode(metadata);
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    listed_as_held(&locks, device, inode)
}

/// Other systems list no locks: the lock is tried instead.
#[cfg(not(target_os = "linux"))]
fn listed_in_proc_locks(_metadata: &std::fs::Metadata) -> Option<bool> {
    None
}

/// Whether the `flock` list `locks` (as `/proc/locks` writes it) has a lock held on the
/// file `device`:`inode`; `None` when it cannot say, because a lock on that inode number is
/// listed under a device that `stat` names differently (btrfs subvolumes, some overlays).
#[cfg(target_os = "linux")]
fn listed_as_held(locks: &str, device: u64, inode: u64) -> Option<bool> {
    let inode = inode.to_string();
    let mut same_inode_elsewhere = false;
    for line in locks.lines() {
        // `1: FLOCK  ADVISORY  WRITE 42 fe:00:5686273 0 EOF`; a waiter's line has `->`
        // before its kind and holds nothing.
        let mut fields = line.split_whitespace().skip(1);
        if fields.next() != Some("FLOCK") {
            continue;
        }
        let Some(place) = fields.nth(3) else {
            continue;
        };
        let mut parts = place.split(':');
        let (Some(major), Some(minor), Some(listed_inode), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if listed_inode != inode {
            continue;
        }
        let numbers = (
            u64::from_str_radix(major, 16),
            u64::from_str_radix(minor, 16),
        );
        match numbers {
            (Ok(major), Ok(minor)) if (major, minor) == split_device(device) => return Some(true),
            _ => same_inode_elsewhere = true,
        }
    }
    (!same_inode_elsewhere).then_some(false)
}

/// The major and minor numbers of a device number, as Linux encodes them in `st_dev`.
#[cfg(target_os = "linux")]
fn split_device(device: u64) -> (u64, u64) {
    let major = ((device >> 32) & 0xffff_f000) | ((device >> 8) & 0x0fff);
    let minor = ((device >> 12) & 0xffff_ff00) | (device & 0xff);
    (major, minor)
}

/// The probe where the system lists no locks: tries the lock and lets it go at once.
fn is_locked_by_trying(path: &Path) -> bool {
    let Ok(file) = regular::open_with(path, OpenOptions::new().read(true).write(true)) else {
        return false;
    };
    matches!(FileExt::try_lock(&file), Err(TryLockError::WouldBlock))
}

/// Waits for the lock by blocking on a duplicate of `file`'s handle in a helper thread (a
/// duplicate shares the lock), so the lock passes to a waiter the moment its holder lets go.
/// Polling with pauses left the lock idle between holders and cost a third of the
/// throughput of sixteen writers. `flock` has no timed wait: on timeout the helper stays
/// blocked, and if it gets the lock after all it lets go at once, nobody being left to
/// receive it.
fn wait_for(file: &File, path: &Path, timeout: Duration, holder: Holder) -> Result<(), FileError> {
    let waiter = file.try_clone().map_err(FileError::io(path))?;
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let is_locked = FileExt::lock(&waiter).map_err(|error| sender.send(Err(error)).ok());
        if is_locked.is_ok() && sender.send(Ok(())).is_err() {
            let _ = FileExt::unlock(&waiter);
        }
    });
    match receiver.recv_timeout(timeout) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(source)) => Err(FileError::Io {
            path: path.to_path_buf(),
            source,
        }),
        Err(_) => Err(FileError::LockTimeout {
            path: path.to_path_buf(),
            holder,
            seconds: timeout.as_secs_f64(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_timeout_is_seconds_from_zero_to_an_hour() {
        for (text, seconds) in [("0", 0.0), ("2.5", 2.5), (" 10 ", 10.0), ("3600", 3600.0)] {
            assert_eq!(
                parse_lock_timeout(text),
                Some(Duration::from_secs_f64(seconds)),
                "{text:?}"
            );
        }
        for text in [
            "1e300", "inf", "-inf", "NaN", "-1", "abc", "3601", "", "10s",
        ] {
            assert_eq!(parse_lock_timeout(text), None, "{text:?}");
        }
    }

    fn quiet(timeout_ms: u64) -> LockPolicy {
        LockPolicy::silent(Duration::from_millis(timeout_ms))
    }

    /// The probe macOS and Windows take (no /proc/locks there), run here too.
    #[test]
    fn trying_the_lock_tells_a_held_lock_from_a_free_one_and_leaves_it_free() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.lock");
        assert!(!is_locked_by_trying(&path), "no file, no lock");
        let held = FileLock::acquire(&path, "the board lock", quiet(100)).unwrap();
        assert!(is_locked_by_trying(&path));
        drop(held);
        assert!(!is_locked_by_trying(&path));
        // The probe let go: the lock is still there to take.
        assert!(FileLock::try_acquire(&path).unwrap().is_some());
    }

    #[test]
    fn a_second_holder_times_out_naming_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.lock");
        let held = FileLock::acquire(&path, "the board lock", quiet(100)).unwrap();
        assert_eq!(read_holder_of(&path), Some(std::process::id()));
        assert!(is_locked(&path));
        let error = FileLock::acquire(&path, "the board lock", quiet(50)).unwrap_err();
        match error {
            FileError::LockTimeout { holder, .. } => {
                assert_eq!(holder, Holder::Pid(std::process::id()))
            }
            other => panic!("expected a timeout, got {other}"),
        }
        assert!(FileLock::try_acquire(&path).unwrap().is_none(), "held");
        drop(held);
        // The waiter that timed out is still blocked in its helper thread (flock has no
        // timed wait): it may take the lock as the holder lets go, and lets go at once.
        let is_let_go = (0..2_000).any(|_| {
            let free = !is_locked(&path);
            if !free {
                std::thread::sleep(Duration::from_millis(5));
            }
            free
        });
        assert!(is_let_go, "the lock stays held after its holders let go");
        FileLock::acquire(&path, "the board lock", quiet(50)).unwrap();
        assert!(path.exists(), "the lock file is never deleted");
    }

    #[cfg(unix)]
    #[test]
    fn a_recorded_holder_that_exited_is_not_named_as_the_holder() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let exited = child.id();
        child.wait().unwrap();
        let holder = Holder::of(Some(exited));
        assert_eq!(holder, Holder::Exited(exited));
        assert_eq!(
            holder.to_string(),
            format!("another process (pid {exited}, recorded as its holder, has exited)")
        );
        assert_eq!(
            Holder::of(Some(std::process::id())),
            Holder::Pid(std::process::id())
        );
        assert_eq!(Holder::of(None).to_string(), "another process");
    }

    #[test]
    fn the_holder_is_written_over_whatever_the_file_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.lock");
        for before in [
            "",
            "7",
            "4194304",
            "4242 and then a long line someone wrote here",
        ] {
            std::fs::write(&path, before).unwrap();
            let held = FileLock::acquire(&path, "the board lock", quiet(100)).unwrap();
            assert_eq!(
                read_holder_of(&path),
                Some(std::process::id()),
                "over {before:?}"
            );
            assert_eq!(std::fs::metadata(&path).unwrap().len(), 11);
            drop(held);
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn held_locks_are_read_from_the_list_of_flocks() {
        let device = 0xfe00; // major fe, minor 00
        let locks = "1: FLOCK  ADVISORY  WRITE 42 fe:00:77 0 EOF\n\
                     1: -> FLOCK  ADVISORY  WRITE 43 fe:00:78 0 EOF\n\
                     2: POSIX  ADVISORY  WRITE 44 fe:00:79 0 EOF\n\
                     3: FLOCK  ADVISORY  WRITE 45 00:2e:80 0 EOF\n";
        assert_eq!(listed_as_held(locks, device, 77), Some(true));
        assert_eq!(
            listed_as_held(locks, device, 78),
            Some(false),
            "only waited for"
        );
        assert_eq!(
            listed_as_held(locks, device, 79),
            Some(false),
            "not a flock"
        );
        assert_eq!(listed_as_held(locks, device, 81), Some(false));
        assert_eq!(
            listed_as_held(locks, device, 80),
            None,
            "cannot tell: try it"
        );
        assert_eq!(split_device(0x1_2000_6783_459a), (0x12345, 0x6789a));
    }

    /// Only where the system lists its locks: elsewhere a look tries the lock. It runs in a
    /// process of its own (this test binary again, running only it): a `flock` is held by
    /// every descriptor of its open file, and a child another test forks in this process
    /// holds a copy of each until it execs, so a lock let go here can stay held for that
    /// instant and the writer's next try fail, whoever looks.
    #[cfg(target_os = "linux")]
    #[test]
    fn looking_at_a_lock_never_takes_it_from_a_writer() {
        const ALONE: &str = "BATON_LOCK_TEST_ALONE";
        if std::env::var_os(ALONE).is_none() {
            let output = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "file::lock::tests::looking_at_a_lock_never_takes_it_from_a_writer",
                    "--test-threads=1",
                ])
                .env(ALONE, "1")
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success() && said.contains("1 passed"),
                "{said}{}",
                String::from_utf8_lossy(&output.stderr)
            );
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.lock");
        drop(FileLock::acquire(&path, "the board lock", quiet(100)).unwrap());
        assert!(!is_locked(&path));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let looker = {
            let (path, stop) = (path.clone(), stop.clone());
            thread::spawn(move || {
                let mut looks = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    is_locked(&path);
                    looks += 1;
                }
                looks
            })
        };
        // Every try by a writer finds the lock free, and a waiter never hears of a holder:
        // the only one looking never holds it.
        let until = std::time::Instant::now() + Duration::from_millis(400);
        while std::time::Instant::now() < until {
            let held = FileLock::try_acquire(&path).unwrap();
            assert!(held.is_some(), "a look took the lock from a writer");
            drop(held);
            drop(FileLock::acquire(&path, "the board lock", quiet(0)).unwrap());
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(looker.join().unwrap() > 0);
        let held = FileLock::acquire(&path, "the board lock", quiet(100)).unwrap();
        assert!(is_locked(&path), "a held lock is seen");
        drop(held);
        assert!(!is_locked(&path));
    }
}
