//! A command run to its end or to a bound in time, whichever comes first: a project's
//! `--setup` in a new worktree, its `--verify` on a landing. Its output goes to a log file
//! (never into memory whole), and on the bound the command and everything it started are
//! stopped: it runs in a process group of its own, which is killed as one.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a bounded run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code (none when a signal ended it).
    Exited(Option<i32>),
    /// It ran past its bound and was stopped.
    TimedOut,
}

impl Ended {
    pub fn succeeded(&self) -> bool {
        *self == Ended::Exited(Some(0))
    }
}

/// The shell that runs a command given as one string by the person who set it.
pub fn shell(line: &str) -> Command {
    #[cfg(unix)]
    {
        let mut command = Command::new("sh");
        command.arg("-c").arg(line);
        command
    }
    #[cfg(windows)]
    {
        let mut command = Command::new("cmd");
        command.arg("/C").arg(line);
        command
    }
}

/// Runs `command` in `dir` with no input, its output and errors appended to `log`, for at
/// most `bound`.
pub fn run(mut command: Command, dir: &Path, log: &Path, bound: Duration) -> io::Result<Ended> {
    if let Some(parent) = log.parent() {
        fs::create_dir_all(parent)?;
    }
    let out = File::create(log)?;
    let err = out.try_clone()?;
    command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err));
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command.spawn()?;
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Ended::Exited(status.code()));
        }
        if started.elapsed() >= bound {
            stop_group(&mut child);
            return Ok(Ended::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills the child's process group (everything it started), then reaps it.
fn stop_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        if let Ok(pid) = i32::try_from(child.id()) {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The last `lines` lines of `log`, read from its end (at most 64 KiB of it), as text.
pub fn tail(log: &Path, lines: usize) -> String {
    const MOST: u64 = 64 * 1024;
    let Ok(mut file) = File::open(log) else {
        return String::new();
    };
    let length = file.metadata().map(|meta| meta.len()).unwrap_or(0);
    let start = length.saturating_sub(MOST);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return String::new();
    }
    let mut bytes = Vec::new();
    let _ = file.take(MOST).read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    // A cut first line is only part of one.
    let skip = usize::from(start > 0 && all.len() > 1);
    let kept = &all[skip..];
    kept[kept.len().saturating_sub(lines)..].join("\n")
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_command_past_its_bound_is_stopped_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("run.log");
        let started = Instant::now();
        let ended = run(
            shell("echo before; sleep 30 & sleep 30; echo after"),
            dir.path(),
            &log,
            Duration::from_millis(300),
        )
        .unwrap();
        assert_eq!(ended, Ended::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(20));
        assert_eq!(tail(&log, 50), "before");
    }

    #[test]
    fn the_tail_is_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("run.log");
        let ended = run(
            shell("for n in $(seq 1 80); do echo line $n; done; exit 3"),
            dir.path(),
            &log,
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(ended, Ended::Exited(Some(3)));
        let tail = tail(&log, 50);
        assert!(tail.starts_with("line 31\n"), "{tail}");
        assert!(tail.ends_with("line 80"), "{tail}");
    }
}
