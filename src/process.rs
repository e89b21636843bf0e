//! Starting other programs: finding one the way `exec` will, and starting baton's own
//! detached processes (the wake supervisor, the notifier) with a clean environment. The
//! base floor: it knows processes and paths, nothing of tasks or agents' work.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where a wake command's program is, if it can be found.
#[derive(Debug, PartialEq, Eq)]
pub enum ProgramLookup {
    Found(PathBuf),
    Missing,
    /// A relative path with a slash: it depends on the project's workspace.
    Relative,
}

/// Finds `program` the way the wake supervisor's `exec` will: a path if it has a directory
/// separator, else the first executable file of that name on `path_variable`.
pub fn find_program(program: &str, path_variable: Option<&OsStr>) -> ProgramLookup {
    if program.contains('/') || (cfg!(windows) && program.contains('\\')) {
        let path = Path::new(program);
        return if path.is_relative() {
            ProgramLookup::Relative
        } else if is_executable(path) {
            ProgramLookup::Found(path.to_path_buf())
        } else {
            ProgramLookup::Missing
        };
    }
    path_variable
        .into_iter()
        .flat_map(std::env::split_paths)
        .flat_map(|dir| program_names(program).map(move |name| dir.join(name)))
        .find(|candidate| is_executable(candidate))
        .map_or(ProgramLookup::Missing, ProgramLookup::Found)
}

/// How a name in the environment is matched.
#[derive(Debug, Clone, Copy)]
enum Name {
    Exactly(&'static str),
    StartingWith(&'static str),
}

impl Name {
    fn matches(self, name: &str) -> bool {
        match self {
            Name::Exactly(exact) => name == exact,
            Name::StartingWith(prefix) => name.starts_with(prefix),
        }
    }
}

/// What a coding client sets in the environment of the programs its session starts (its
/// shell tool, hooks, MCP servers), to say that they run inside that session. A woken agent
/// must not see the waker's: with `CLAUDECODE` set and no terminal, Claude Code takes itself
/// for a child session of the waker (CLIENTS.md, "Session markers in the environment").
/// [`CLIENT_CONFIGURATION`] keeps what the user set that these patterns would also catch.
const SESSION_MARKERS: &[Name] = &[
    // Claude Code: CLAUDECODE=1, CLAUDE_CODE_ENTRYPOINT, CLAUDE_CODE_SSE_PORT, …; and the
    // paths it hands its hooks and plugins, which name the waker's project, not the agent's.
    Name::Exactly("CLAUDECODE"),
    Name::StartingWith("CLAUDE_CODE_"),
    Name::Exactly("CLAUDE_PROJECT_DIR"),
    Name::Exactly("CLAUDE_ENV_FILE"),
    Name::Exactly("CLAUDE_PLUGIN_ROOT"),
    // Codex: CODEX_THREAD_ID, CODEX_SANDBOX, CODEX_SANDBOX_NETWORK_DISABLED, and what its
    // launcher and IDE integrations set for the process they start (CODEX_MANAGED_BY_NPM,
    // CODEX_INTERNAL_ORIGINATOR_OVERRIDE, …).
    Name::StartingWith("CODEX_"),
    // Gemini CLI: GEMINI_CLI=1 in its shell tool, GEMINI_CLI_NO_RELAUNCH after it restarts
    // itself, GEMINI_CLI_IDE_* from the IDE companion; the paths it hands its hooks.
    Name::Exactly("GEMINI_CLI"),
    Name::StartingWith("GEMINI_CLI_"),
    Name::Exactly("GEMINI_PROJECT_DIR"),
    Name::Exactly("GEMINI_SESSION_ID"),
    // opencode: OPENCODE=1 in its tools, OPENCODE_PID, OPENCODE_SERVER, OPENCODE_CLIENT, …
    Name::StartingWith("OPENCODE"),
    // Other agents that Claude Code looks for in the same way (CLIENTS.md). REPL_ID and
    // JUNIE_DATA are left: they describe the machine or the user's data, not one session.
    Name::Exactly("COPILOT_CLI"),
    Name::Exactly("CURSOR_AGENT"),
];

/// The user's configuration of a client, set in the user's own environment and as right for
/// the woken agent as for the waker, that a pattern of [`SESSION_MARKERS`] would catch:
/// where a client keeps its files, which provider and account it uses, what it may do.
const CLIENT_CONFIGURATION: &[Name] = &[
    Name::Exactly("CODEX_HOME"),
    Name::Exactly("CODEX_API_KEY"),
    Name::StartingWith("CLAUDE_CODE_USE_"),
    Name::StartingWith("CLAUDE_CODE_SKIP_"),
    Name::StartingWith("CLAUDE_CODE_DISABLE_"),
    Name::Exactly("CLAUDE_CODE_OAUTH_TOKEN"),
    Name::Exactly("CLAUDE_CODE_API_KEY_HELPER_TTL_MS"),
    Name::Exactly("CLAUDE_CODE_MAX_OUTPUT_TOKENS"),
    Name::Exactly("CLAUDE_CODE_SUBAGENT_MODEL"),
    Name::StartingWith("CLAUDE_CODE_CLIENT_"),
    Name::Exactly("CLAUDE_CODE_SHELL_PREFIX"),
    Name::Exactly("GEMINI_CLI_HOME"),
    Name::Exactly("GEMINI_CLI_TRUST_WORKSPACE"),
    Name::StartingWith("GEMINI_CLI_SYSTEM_"),
    Name::StartingWith("OPENCODE_CONFIG"),
    Name::Exactly("OPENCODE_PERMISSION"),
    Name::StartingWith("OPENCODE_DISABLE_"),
    Name::StartingWith("OPENCODE_ENABLE_"),
    Name::StartingWith("OPENCODE_EXPERIMENTAL"),
];

/// Whether `name` is a marker of the session of the client that ran the waker.
pub fn is_session_marker(name: &str) -> bool {
    SESSION_MARKERS.iter().any(|marker| marker.matches(name))
        && !CLIENT_CONFIGURATION.iter().any(|kept| kept.matches(name))
}

/// The environment of a process baton starts detached (the supervisor, the wake run, the
/// notifier), from the waker's `inherited` one (SPEC section 8): without the client session
/// markers and without the waker's `BATON_*` (its identity, project, hub URL and token are
/// its own), with `BATON_HOME` set to `home` made absolute and, for a wake run, `BATON_AGENT`
/// set to the agent woken. Everything else, API keys included, is passed on.
pub fn detached_environment(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    home: &Path,
    agent: Option<&str>,
) -> Vec<(OsString, OsString)> {
    let mut environment: Vec<(OsString, OsString)> = inherited
        .into_iter()
        .filter(|(name, _)| {
            // A name that is not UTF-8 is nobody's marker.
            name.to_str()
                .is_none_or(|name| !name.starts_with("BATON_") && !is_session_marker(name))
        })
        .collect();
    // A relative home would name another hub in the run's own directory.
    let home = std::path::absolute(home).unwrap_or_else(|_| home.to_path_buf());
    environment.push(("BATON_HOME".into(), home.into_os_string()));
    if let Some(agent) = agent {
        environment.push(("BATON_AGENT".into(), agent.into()));
    }
    environment
}

/// What a process baton started detached (the supervisor, the notifier) does first: on
/// Unix it takes a session of its own, unless setsid(1) gave it one already, and closes
/// every descriptor above 2 that it inherited, so that it holds nothing of its caller's open
/// (a caller reading the waker's output through a pipe on descriptor 7 would otherwise wait
/// for the whole agent run). Call it before this process opens anything of its own, which
/// it would close too. On Windows [`spawn_detached`] did it all: the child has no console,
/// and Rust opens no handle inheritable.
pub fn detach_from_caller() {
    #[cfg(unix)]
    {
        // Fails only where the process leads its group or session already: setsid(1) ran it.
        let _ = nix::unistd::setsid();
        close_inherited_descriptors();
    }
}

#[cfg(unix)]
fn close_inherited_descriptors() {
    // Linux lists the open descriptors; macOS has /dev/fd for the same.
    let listed = ["/proc/self/fd", "/dev/fd"]
        .iter()
        .find_map(|dir| fs::read_dir(dir).ok());
    let open: Vec<i32> = match listed {
        Some(entries) => entries
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
            .collect(),
        // Without a list, every number a descriptor is likely to have.
        None => (3..1024).collect(),
    };
    for descriptor in open.into_iter().filter(|descriptor| *descriptor > 2) {
        // The listing's own descriptor is among them, closed already: that close fails
        // harmlessly, as does one of a number nothing has open.
        let _ = nix::unistd::close(descriptor);
    }
}

/// Starts `program args…` detached from the caller: no terminal, no standard streams, not
/// waited for, in the environment of [`detached_environment`], so that the child uses the
/// caller's hub, whose home directory is `home`. The child closes the other descriptors it
/// inherits itself, at its start ([`detach_from_caller`]).
pub(crate) fn spawn_detached(program: &Path, args: &[&str], home: &Path) -> io::Result<()> {
    let mut command = detached_command(program);
    command
        .args(args)
        .env_clear()
        .envs(detached_environment(std::env::vars_os(), home, None))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command.spawn()?;
    // Reap it when it ends, so that a long-lived caller (the MCP server) gathers no
    // zombies; a CLI command exits long before and leaves it to init.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

// What differs between Unix and Windows in starting and finding processes, one function
// per difference.

/// A command that runs `program` away from the caller's terminal.
///
/// On Unix, a session of its own takes the child away from the terminal for good: no SIGHUP
/// when the terminal closes, and an agent CLI run inside cannot open /dev/tty and wait for
/// keys nobody will press. Calling setsid() between fork and exec would need `unsafe`
/// (pre_exec), so setsid(1) runs it where the PATH has one (util-linux; it execs in place,
/// the child not being a group leader). Without it (macOS), the child calls setsid() itself
/// as it starts ([`detach_from_caller`]); it must not lead a process group of its own for that.
#[cfg(unix)]
fn detached_command(program: &Path) -> Command {
    match find_program("setsid", std::env::var_os("PATH").as_deref()) {
        ProgramLookup::Found(setsid) => {
            let mut command = Command::new(setsid);
            command.arg(program);
            command
        }
        _ => Command::new(program),
    }
}

/// A command that runs `program` away from the caller's console: in a process group of its
/// own (Ctrl+C in the caller's console does not reach it) and with no console at all.
#[cfg(windows)]
fn detached_command(program: &Path) -> Command {
    use std::os::windows::process::CommandExt;
    // The values of winbase.h.
    const DETACHED_PROCESS: u32 = 0x0000_0008;
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    let mut command = Command::new(program);
    command.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
    command
}

/// Whether the file at `path` is a program this user can run: on Unix a file with an
/// execute bit, on Windows any file (Windows asks the extension, which [`program_names`]
/// supplies).
fn is_executable(path: &Path) -> bool {
    let Ok(metadata) = fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}

/// The file names `program` is looked for under on the PATH: itself on Unix; on Windows
/// also with `.exe`, which is what `Command` itself adds to a name without an extension.
fn program_names(program: &str) -> impl Iterator<Item = String> {
    let with_exe = (cfg!(windows) && Path::new(program).extension().is_none())
        .then(|| format!("{program}.exe"));
    std::iter::once(program.to_string()).chain(with_exe)
}

/// Whether process `pid` is running: `None` where the system cannot tell. On Unix,
/// kill(pid, 0) asks without sending anything (a process of another user answers "not
/// permitted", so it is running); on Windows the process is opened to read its exit code,
/// which is STILL_ACTIVE while it runs (a process that exited with code 259 looks running).
pub fn is_process_alive(pid: u32) -> Option<bool> {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        // 0 and numbers past i32 name no process (to kill(2) they would name groups).
        let Some(pid) = i32::try_from(pid).ok().filter(|pid| *pid > 0) else {
            return Some(false);
        };
        match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
            Ok(()) | Err(Errno::EPERM) => Some(true),
            Err(Errno::ESRCH) => Some(false),
            Err(_) => None,
        }
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::Foundation::{CloseHandle, ERROR_INVALID_PARAMETER, STILL_ACTIVE};
        use windows_sys::Win32::System::Threading::{
            GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
        };
        // SAFETY: takes plain values; gives a handle, or null with the error set.
        let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if handle.is_null() {
            // No process has that pid; any other refusal (access denied) is of one that runs.
            let error = io::Error::last_os_error().raw_os_error();
            return Some(error != Some(ERROR_INVALID_PARAMETER as i32));
        }
        let mut code = 0u32;
        // SAFETY: `handle` is the open process handle from above, `code` a writable u32.
        let asked = unsafe { GetExitCodeProcess(handle, &mut code) };
        // SAFETY: the handle is ours, closed once, and not used after.
        unsafe { CloseHandle(handle) };
        (asked != 0).then_some(code == STILL_ACTIVE as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn programs_are_found_on_the_path_given() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("wake-me");
        fs::write(&program, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([Path::new("/nonexistent"), dir.path()]).unwrap();
        assert_eq!(
            find_program("wake-me", Some(&path)),
            ProgramLookup::Found(program.clone())
        );
        assert_eq!(
            find_program("no-such-program", Some(&path)),
            ProgramLookup::Missing
        );
        assert_eq!(
            find_program(program.to_str().unwrap(), None),
            ProgramLookup::Found(program.clone())
        );
        fs::set_permissions(&program, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(find_program("wake-me", Some(&path)), ProgramLookup::Missing);
        assert_eq!(find_program("bin/x", Some(&path)), ProgramLookup::Relative);
    }

    #[cfg(unix)]
    #[test]
    fn a_process_is_alive_until_it_has_exited_and_been_reaped() {
        assert_eq!(is_process_alive(std::process::id()), Some(true));
        // pid 1 runs as another user (root) in most test setups: still alive.
        assert_eq!(is_process_alive(1), Some(true));
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        assert_eq!(is_process_alive(child.id()), Some(true));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(is_process_alive(child.id()), Some(false));
        // Numbers kill(2) would take for process groups name no process here.
        assert_eq!(is_process_alive(0), Some(false));
        assert_eq!(is_process_alive(u32::MAX), Some(false));
    }

    #[cfg(windows)]
    #[test]
    fn a_process_is_alive_until_it_has_exited() {
        assert_eq!(is_process_alive(std::process::id()), Some(true));
        let mut child = Command::new("cmd").args(["/c", "exit 0"]).spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        // Our handle to the child is still open, so the pid is not reused meanwhile.
        assert_eq!(is_process_alive(pid), Some(false));
        assert_eq!(
            is_process_alive(0),
            Some(false),
            "the idle process is no process"
        );
    }

    #[test]
    fn a_detached_process_gets_the_environment_without_session_markers_or_batons() {
        // An absolute path on each system, so it is passed on as written.
        let hub = if cfg!(windows) { r"C:\hub" } else { "/hub" };
        let inherited = [
            ("PATH", "/usr/bin"),
            ("ANTHROPIC_API_KEY", "key"),
            ("CLAUDECODE", "1"),
            ("CLAUDE_CODE_ENTRYPOINT", "cli"),
            ("CLAUDE_CODE_USE_BEDROCK", "1"),
            ("CLAUDE_CONFIG_DIR", "/c"),
            ("CODEX_THREAD_ID", "t"),
            ("CODEX_SANDBOX", "seatbelt"),
            ("CODEX_SANDBOX_NETWORK_DISABLED", "1"),
            ("CODEX_HOME", "/x"),
            ("GEMINI_CLI", "1"),
            ("GEMINI_CLI_NO_RELAUNCH", "true"),
            ("GEMINI_CLI_HOME", "/g"),
            ("GEMINI_API_KEY", "key"),
            ("OPENCODE", "1"),
            ("OPENCODE_CONFIG", "/o.json"),
            ("BATON_AGENT", "lead"),
            ("BATON_PROJECT", "api"),
            ("BATON_TOKEN", "secret"),
            ("BATON_HOME", "relative"),
        ];
        let environment = detached_environment(
            inherited
                .iter()
                .map(|(name, value)| (OsString::from(name), OsString::from(value))),
            Path::new(hub),
            Some("codex"),
        );
        let names: Vec<String> = environment
            .iter()
            .map(|(name, value)| format!("{}={}", name.display(), value.display()))
            .collect();
        assert_eq!(
            names,
            [
                "PATH=/usr/bin",
                "ANTHROPIC_API_KEY=key",
                "CLAUDE_CODE_USE_BEDROCK=1",
                "CLAUDE_CONFIG_DIR=/c",
                "CODEX_HOME=/x",
                "GEMINI_CLI_HOME=/g",
                "GEMINI_API_KEY=key",
                "OPENCODE_CONFIG=/o.json",
                format!("BATON_HOME={hub}").as_str(),
                "BATON_AGENT=codex",
            ]
        );
        let home = detached_environment([], Path::new("hub"), None);
        assert_eq!(home.len(), 1, "no agent for the supervisor: {home:?}");
        assert!(Path::new(&home[0].1).is_absolute(), "{home:?}");
    }
}
