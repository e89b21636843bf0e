//! Starting other programs: finding one the way `exec` will, and starting baton's own
//! detached processes (the wake supervisor, the notifier) with a clean environment. The
//! base floor: it knows processes and paths, nothing of tasks or agents' work.

pub mod bounded;

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The name of this machine, which an agent's wake command is tied to on a store several
/// machines share (SPEC section 16): `BATON_HOST` when it is a host name (a container's own
/// name may change at each start), else the system's, in lowercase; `None` when neither is
/// a host name.
pub fn this_host() -> Option<String> {
    let chosen = std::env::var("BATON_HOST")
        .ok()
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| crate::names::is_host_name(name));
    chosen.or_else(|| {
        system_host_name()
            .map(|name| name.trim().to_ascii_lowercase())
            .filter(|name| crate::names::is_host_name(name))
    })
}

#[cfg(unix)]
fn system_host_name() -> Option<String> {
    nix::unistd::gethostname().ok()?.into_string().ok()
}

#[cfg(windows)]
fn system_host_name() -> Option<String> {
    std::env::var("COMPUTERNAME").ok()
}

/// Where a wake command's program is, if it can be found.
#[derive(Debug, PartialEq, Eq)]
pub enum ProgramLookup {
    Found(PathBuf),
    Missing,
    /// A relative path with a slash: it depends on the project's workspace.
    Relative,
}

/// How a system turns a program's name into a file it can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgramRules {
    /// The name as given, a file with an execute bit: what `execvp` does.
    Unix,
    /// What a Windows shell does: a name with an extension as given; a name without one with
    /// each of `extensions` in turn (never as the bare file, which Windows cannot start:
    /// npm puts a shell script for Git Bash there, beside `claude.cmd`); any file.
    Windows { extensions: Vec<String> },
}

/// The extensions Windows can start a program by, in the order `PATHEXT` has them by
/// default: CreateProcess runs `.com` and `.exe`, and std runs `.bat` and `.cmd` through
/// cmd.exe. PATHEXT's others (`.vbs`, `.js`, `.ps1`, …) need a host program a wake command
/// would have to name.
const RUNNABLE_ON_WINDOWS: [&str; 4] = [".com", ".exe", ".bat", ".cmd"];

impl ProgramRules {
    /// The rules of the system baton runs on, Windows' from this process's `PATHEXT`.
    pub fn of_this_system() -> Self {
        if cfg!(windows) {
            ProgramRules::windows(std::env::var_os("PATHEXT").as_deref())
        } else {
            ProgramRules::Unix
        }
    }

    /// Windows' rules for a `PATHEXT` value: its runnable extensions in its order, or all four
    /// in the default order when it is unset or names none of them.
    pub fn windows(pathext: Option<&OsStr>) -> Self {
        let mut extensions: Vec<String> = Vec::new();
        let listed = pathext.map(OsStr::to_string_lossy).unwrap_or_default();
        for extension in listed
            .split(';')
            .map(|item| item.trim().to_ascii_lowercase())
        {
            if RUNNABLE_ON_WINDOWS.contains(&extension.as_str()) && !extensions.contains(&extension)
            {
                extensions.push(extension);
            }
        }
        if extensions.is_empty() {
            extensions = RUNNABLE_ON_WINDOWS.map(String::from).to_vec();
        }
        ProgramRules::Windows { extensions }
    }

    /// Whether `program` names a path (it has a directory separator), not a name to look
    /// for on `PATH`.
    pub fn is_path(&self, program: &str) -> bool {
        match self {
            ProgramRules::Unix => program.contains('/'),
            ProgramRules::Windows { .. } => program.contains(['/', '\\']),
        }
    }

    /// The files `path` (a program's name, or a path to it) may stand for, in the order they
    /// are tried.
    fn candidates(&self, path: &Path) -> Vec<PathBuf> {
        match self {
            ProgramRules::Windows { extensions } if path.extension().is_none() => extensions
                .iter()
                .map(|extension| {
                    let mut name = path.as_os_str().to_os_string();
                    name.push(extension);
                    PathBuf::from(name)
                })
                .collect(),
            _ => vec![path.to_path_buf()],
        }
    }

    /// Whether the file at `path` is a program this user can run: on Unix a file with an
    /// execute bit, on Windows any file (Windows goes by the extension, which
    /// [`ProgramRules::candidates`] supplied).
    fn is_runnable(&self, path: &Path) -> bool {
        let Ok(metadata) = fs::metadata(path) else {
            return false;
        };
        match self {
            ProgramRules::Windows { .. } => metadata.is_file(),
            ProgramRules::Unix => {
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
        }
    }
}

/// Finds `program` by the rules of the system baton runs on ([`find_program_by`]).
pub fn find_program(program: &str, path_variable: Option<&OsStr>) -> ProgramLookup {
    find_program_by(&ProgramRules::of_this_system(), program, path_variable)
}

/// Finds `program` the way a shell of the system whose `rules` are given would: a path if it
/// has a directory separator, else the first runnable file for that name in the directories
/// of `path_variable`.
pub fn find_program_by(
    rules: &ProgramRules,
    program: &str,
    path_variable: Option<&OsStr>,
) -> ProgramLookup {
    if rules.is_path(program) {
        let path = Path::new(program);
        if path.is_relative() {
            return ProgramLookup::Relative;
        }
        return rules
            .candidates(path)
            .into_iter()
            .find(|candidate| rules.is_runnable(candidate))
            .map_or(ProgramLookup::Missing, ProgramLookup::Found);
    }
    path_variable
        .into_iter()
        .flat_map(std::env::split_paths)
        .flat_map(|dir| rules.candidates(&dir.join(program)))
        .find(|candidate| rules.is_runnable(candidate))
        .map_or(ProgramLookup::Missing, ProgramLookup::Found)
}

/// The program a wake run starts for the first word of its command: the file found on
/// `path_variable` by this system's rules (on Windows the `claude.cmd` npm installs, which
/// std's own search would miss, as it looks for `.exe` alone), else the word as given (a
/// relative path, for the workspace; a name nobody has, for `Command` to report).
pub fn program_to_run(program: &str, path_variable: Option<&OsStr>) -> PathBuf {
    match find_program(program, path_variable) {
        // A relative PATH entry would be taken from the run's own directory, not this one's.
        ProgramLookup::Found(path) if path.is_absolute() => path,
        _ => PathBuf::from(program),
    }
}

/// Why `program` could not be started with `args`, for the wake log: the system's `error`,
/// and the reason where std refused a line break in an argument of a `.bat` or `.cmd`
/// program. Windows runs those through cmd.exe, which has no way to quote a line break, so
/// std will not start one with such an argument rather than let cmd.exe end the command
/// there and run the rest as another.
pub fn why_not_started(program: &Path, args: &[&str], error: &io::Error) -> String {
    let is_batch_file = program.extension().is_some_and(|extension| {
        extension.eq_ignore_ascii_case("bat") || extension.eq_ignore_ascii_case("cmd")
    });
    let has_line_break = args.iter().any(|arg| arg.contains(['\r', '\n']));
    if is_batch_file && has_line_break && error.kind() == io::ErrorKind::InvalidInput {
        format!(
            "{error}: a .bat or .cmd program runs through cmd.exe, which cannot be given an \
             argument holding a line break; take the line breaks out of the wake command, or \
             name a .exe"
        )
    } else {
        error.to_string()
    }
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

/// Where the hub's state is kept, for the processes this one starts detached, when this
/// process was told it otherwise than by `BATON_STORE` (`serve --store URL`).
static STORE_FOR_CHILDREN: std::sync::OnceLock<OsString> = std::sync::OnceLock::new();

/// Makes `address` the `BATON_STORE` of every process this one starts detached: they keep
/// their state where this process keeps it.
pub fn pass_store_to_children(address: &str) {
    let _ = STORE_FOR_CHILDREN.set(address.into());
}

/// The environment of a process baton starts detached (the supervisor, the wake run, the
/// notifier), from the waker's `inherited` one (SPEC section 8): without the client session
/// markers and without the waker's `BATON_*` (its identity, project, hub URL and token are
/// its own), with `BATON_HOME` set to `home` made absolute and, for a wake run, `BATON_AGENT`
/// set to the agent woken. `BATON_STORE` stays (the store is the hub's, not the waker's:
/// what the supervisor, the sender and the agent's own commands change must be the same
/// state), or is set as [`pass_store_to_children`] said; `BATON_HOST` stays (the machine's
/// name, [`this_host`], is the machine's). Everything else, API keys included,
/// is passed on.
pub fn detached_environment(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    home: &Path,
    agent: Option<&str>,
) -> Vec<(OsString, OsString)> {
    let mut environment: Vec<(OsString, OsString)> = inherited
        .into_iter()
        .filter(|(name, _)| {
            // A name that is not UTF-8 is nobody's marker.
            name.to_str().is_none_or(|name| {
                (!name.starts_with("BATON_") || name == "BATON_STORE" || name == "BATON_HOST")
                    && !is_session_marker(name)
            })
        })
        .collect();
    // A relative home would name another hub in the run's own directory.
    let home = std::path::absolute(home).unwrap_or_else(|_| home.to_path_buf());
    environment.push(("BATON_HOME".into(), home.into_os_string()));
    if let Some(store) = STORE_FOR_CHILDREN.get() {
        environment.retain(|(name, _)| name != "BATON_STORE");
        environment.push(("BATON_STORE".into(), store.clone()));
    }
    if let Some(agent) = agent {
        environment.push(("BATON_AGENT".into(), agent.into()));
    }
    environment
}

/// What a process baton started detached (the supervisor, the notifier) does first: on
/// Unix it takes a session of its own (which leaves the caller's terminal behind for good:
/// no SIGHUP when it closes, no /dev/tty for the agent a supervisor runs, which inherits
/// the session) and closes every descriptor above 2 that it inherited, so that it holds
/// nothing of its caller's open (a caller reading the waker's output through a pipe on
/// descriptor 7 would otherwise wait for the whole agent run). Call it before this process
/// opens anything of its own, which it would close too. On Windows [`spawn_detached`] did it
/// all: the child has no console, and Rust opens no handle inheritable.
pub fn detach_from_caller() {
    #[cfg(unix)]
    {
        // setsid() fails only for a process group leader, and [`detached_command`] starts
        // none: the child stays in its caller's group until this call. Should it fail all
        // the same, the child still runs, with no terminal on its standard streams.
        let _ = nix::unistd::setsid();
        close_inherited_descriptors();
    }
}

/// What a long-running command that starts the user's programs itself (`baton listen`,
/// whose wake runs are its children) does first: closes every descriptor above 2 that it
/// inherited, so that the runs it starts hold none of its caller's (SPEC section 8), and a
/// caller reading it through a pipe on another descriptor is not held by them. Call it
/// before this process opens anything of its own, which it would close too. Descriptors
/// baton opens itself are never passed on (Rust opens them close-on-exec).
pub fn close_inherited() {
    #[cfg(unix)]
    close_inherited_descriptors();
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
    start_detached(program, args, home, None)
}

/// [`spawn_detached`], with `input` written to the child's stdin, which is then closed: for
/// what must not be in its arguments, which every local user can read (`ps`,
/// /proc/PID/cmdline). `input` should fit a pipe's buffer (64 KiB on Linux, 16 KiB on
/// macOS): more waits for the child to read it.
pub(crate) fn spawn_detached_with_input(
    program: &Path,
    args: &[&str],
    home: &Path,
    input: &[u8],
) -> io::Result<()> {
    start_detached(program, args, home, Some(input))
}

fn start_detached(
    program: &Path,
    args: &[&str],
    home: &Path,
    input: Option<&[u8]>,
) -> io::Result<()> {
    let mut command = detached_command(program);
    command
        .args(args)
        .env_clear()
        .envs(detached_environment(std::env::vars_os(), home, None))
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command.spawn()?;
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        // A child that died before reading it all is the child's failure, not the caller's;
        // dropping `stdin` closes it, so the child reads to its end.
        let _ = io::Write::write_all(&mut stdin, input);
    }
    // Reap it when it ends, so that a long-lived caller (the MCP server) gathers no
    // zombies; a CLI command exits long before and leaves it to init.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

// What differs between Unix and Windows in starting and finding processes, one function
// per difference.

/// A command that runs `program` away from the caller's terminal: with its standard
/// streams on /dev/null or a pipe ([`start_detached`]), and, on Unix, in a session of its
/// own, which the child takes itself as it starts ([`detach_from_caller`]): `program` is
/// baton. It is started directly, as the caller's own child, and not through setsid(1),
/// which cost one more exec on every hand-over, because std cannot call setsid() between
/// fork and exec without `unsafe` (`pre_exec`). Nor in a process group of its own
/// (`process_group(0)`): a group leader cannot call setsid(). What that leaves is the
/// moment between exec and the child's setsid(), in which a signal to the caller's
/// process group (Ctrl+C) still reaches it; setsid(1) had the same moment, from the fork
/// to its own setsid().
#[cfg(unix)]
fn detached_command(program: &Path) -> Command {
    Command::new(program)
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

/// `command` started, for a test. Under Wine, CreateProcess now and then fails with
/// ERROR_INTERNAL_ERROR (1359) on a loaded machine, before the process exists (CI saw it
/// once in 430 tests): that failure is tried again, a few times, after a pause; any other
/// is the test's to see.
#[cfg(test)]
pub(crate) fn started_for_test(command: &mut Command) -> std::process::Child {
    const ERROR_INTERNAL_ERROR: i32 = 1359;
    let mut tries = 0;
    loop {
        match command.spawn() {
            Err(error)
                if cfg!(windows)
                    && error.raw_os_error() == Some(ERROR_INTERNAL_ERROR)
                    && tries < 5 =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(200 * tries));
            }
            started => return started.unwrap(),
        }
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

    /// Windows' rules with PATHEXT as Windows sets it by default.
    fn windows_rules() -> ProgramRules {
        ProgramRules::windows(Some(OsStr::new(
            ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC",
        )))
    }

    fn files(dir: &Path, names: &[&str]) {
        for name in names {
            fs::write(dir.join(name), "").unwrap();
        }
    }

    #[test]
    fn windows_finds_the_cmd_npm_installs_and_never_the_bare_script_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        // What `npm install -g @anthropic-ai/claude-code` leaves in npm's directory.
        files(dir.path(), &["claude", "claude.cmd", "claude.ps1"]);
        let rules = windows_rules();
        assert_eq!(
            find_program_by(&rules, "claude", Some(&path)),
            ProgramLookup::Found(dir.path().join("claude.cmd"))
        );
        // A name with an extension is taken as given.
        assert_eq!(
            find_program_by(&rules, "claude.ps1", Some(&path)),
            ProgramLookup::Found(dir.path().join("claude.ps1"))
        );
        // The extensionless file alone is no program Windows can start.
        files(dir.path(), &["gemini", "gemini.ps1"]);
        assert_eq!(
            find_program_by(&rules, "gemini", Some(&path)),
            ProgramLookup::Missing
        );
        // By Unix's rules the bare name is the program (given an execute bit).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let bare = dir.path().join("claude");
            fs::set_permissions(&bare, fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(
                find_program_by(&ProgramRules::Unix, "claude", Some(&path)),
                ProgramLookup::Found(bare)
            );
        }
    }

    #[test]
    fn windows_tries_pathext_in_its_order_in_each_directory_in_turn() {
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        let path = std::env::join_paths([first.path(), second.path()]).unwrap();
        files(first.path(), &["codex.cmd", "codex.bat"]);
        files(second.path(), &["codex.exe"]);
        // The first directory that has one wins, whatever the extension.
        assert_eq!(
            find_program_by(&windows_rules(), "codex", Some(&path)),
            ProgramLookup::Found(first.path().join("codex.bat"))
        );
        let cmd_first = ProgramRules::windows(Some(OsStr::new(".CMD;.BAT")));
        assert_eq!(
            find_program_by(&cmd_first, "codex", Some(&path)),
            ProgramLookup::Found(first.path().join("codex.cmd"))
        );
        // A path is completed the same way; a relative one waits for the workspace.
        let absolute = first.path().join("codex");
        assert_eq!(
            find_program_by(&windows_rules(), absolute.to_str().unwrap(), None),
            ProgramLookup::Found(first.path().join("codex.bat"))
        );
        assert_eq!(
            find_program_by(&windows_rules(), r"bin\codex", Some(&path)),
            ProgramLookup::Relative
        );
        assert_eq!(
            find_program_by(&ProgramRules::Unix, r"bin\codex", Some(&path)),
            ProgramLookup::Missing
        );
    }

    #[test]
    fn pathext_gives_the_runnable_extensions_in_its_order() {
        let extensions =
            |pathext: Option<&str>| match ProgramRules::windows(pathext.map(OsStr::new)) {
                ProgramRules::Windows { extensions } => extensions,
                ProgramRules::Unix => unreachable!("windows() makes Windows rules"),
            };
        let default = [".com", ".exe", ".bat", ".cmd"];
        assert_eq!(extensions(None), default);
        assert_eq!(
            extensions(Some(".COM;.EXE;.BAT;.CMD;.VBS;.JS;.WSF;.MSC;.PY")),
            default
        );
        assert_eq!(extensions(Some(" .Cmd ;;.EXE;.cmd")), [".cmd", ".exe"]);
        // One that names none of them is no list to go by.
        assert_eq!(extensions(Some(".PY;.PS1")), default);
        assert_eq!(extensions(Some("")), default);
    }

    #[test]
    fn a_refused_line_break_for_a_cmd_program_is_explained() {
        let refused = io::Error::new(
            io::ErrorKind::InvalidInput,
            "batch file arguments are invalid",
        );
        let program = Path::new("claude.CMD");
        let why = why_not_started(program, &["-p", "two\nlines"], &refused);
        assert!(
            why.starts_with("batch file arguments are invalid: "),
            "{why}"
        );
        assert!(why.contains("line break"), "{why}");
        // Anything else is the system's word alone.
        let plain = why_not_started(program, &["-p", "one line"], &refused);
        assert_eq!(plain, "batch file arguments are invalid");
        let exe = why_not_started(Path::new("claude.exe"), &["two\nlines"], &refused);
        assert_eq!(exe, "batch file arguments are invalid");
        let missing = io::Error::new(io::ErrorKind::NotFound, "program not found");
        assert_eq!(
            why_not_started(program, &["two\nlines"], &missing),
            "program not found"
        );
    }

    /// What std does with a line break in an argument of a `.cmd` program: an error from
    /// spawn, before any process starts.
    #[cfg(windows)]
    #[test]
    fn std_refuses_a_line_break_in_an_argument_of_a_cmd_program() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("agent.cmd");
        fs::write(&script, "@exit /b 0\r\n").unwrap();
        let error = Command::new(&script)
            .arg("two\nlines")
            .status()
            .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{error}");
        assert!(
            why_not_started(&script, &["two\nlines"], &error).contains("line break"),
            "{error}"
        );
        assert!(
            started_for_test(Command::new(&script).arg("one line"))
                .wait()
                .unwrap()
                .success()
        );
    }

    #[test]
    fn a_wake_runs_the_file_found_or_else_the_word_as_given() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        assert_eq!(
            program_to_run("no-such-agent", Some(&path)),
            PathBuf::from("no-such-agent")
        );
        assert_eq!(
            program_to_run("bin/agent", Some(&path)),
            PathBuf::from("bin/agent")
        );
        let name = if cfg!(windows) { "agent.cmd" } else { "agent" };
        let program = dir.path().join(name);
        fs::write(&program, "").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
        }
        assert_eq!(program_to_run("agent", Some(&path)), program);
        // A relative PATH entry would be read from the run's directory: left to the run.
        assert_eq!(
            program_to_run("agent", Some(OsStr::new("."))),
            PathBuf::from("agent")
        );
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
        let mut child = started_for_test(Command::new("cmd").args(["/c", "exit 0"]));
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
        // The hub's store is the children's too.
        let store = detached_environment(
            [("BATON_STORE".into(), "postgres://db/baton".into())],
            Path::new("hub"),
            None,
        );
        assert_eq!(
            store[0],
            ("BATON_STORE".into(), "postgres://db/baton".into())
        );
        assert!(Path::new(&home[0].1).is_absolute(), "{home:?}");
    }
}
