//! `hook pre-edit`: a tool call that is about to edit files, read in each client's shape,
//! the paths it would change made relative to the project's workspace, and the answer in
//! the client's own format (SPEC 18.3). What each client sends is data in the client table
//! ([`crate::client::EditGuard`]); whether a path is held is the desk's
//! ([`crate::session::Desk::reserved`]).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use crate::board::scope::{literal, relative_to};
use crate::client::{Client, DenyShape, EditGuard, PathsAt};
use crate::session::reservations::Holding;
use crate::text::inline;

use super::answer_line;

/// What the client said about the tool call, as far as the guard needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditCall {
    /// The directory the agent works in: relative paths are against it, and it decides the
    /// project.
    pub cwd: Option<PathBuf>,
    /// The client's session, to say a hub out of reach once a session.
    pub session: Option<String>,
    /// The paths the tool would change, as the tool's input names them.
    pub paths: Vec<String>,
}

/// What the hook made of its stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadCall {
    /// A call of a tool that edits files.
    Edit(EditCall),
    /// Some other tool, or an edit that names no path: nothing to guard.
    NotAnEdit,
    /// Input the hook cannot read (not JSON, cut short): why, for one line on stderr.
    Unreadable(&'static str),
}

/// The most paths one tool call is asked about: a patch naming more is judged by the first
/// ones (the git pre-commit guard sees the rest), so that no input makes the question to the
/// hub unbounded.
pub const MOST_PATHS: usize = 1_000;

/// Reads the client's JSON for `guard`: the tool, its input, `cwd` and the session.
pub fn read_call(guard: &EditGuard, text: &str) -> ReadCall {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return ReadCall::Unreadable("the tool call did not read as JSON");
    };
    let Some(tool) = value["tool_name"]
        .as_str()
        .and_then(|name| guard.tool(name))
    else {
        return ReadCall::NotAnEdit;
    };
    let input = &value["tool_input"];
    let paths: Vec<String> = match tool.paths {
        PathsAt::Field(fields) => fields
            .iter()
            .find_map(|field| input[*field].as_str())
            .filter(|path| !path.trim().is_empty())
            .map(|path| vec![path.to_string()])
            .unwrap_or_default(),
        PathsAt::Patch(field) => input[field].as_str().map(patch_paths).unwrap_or_default(),
    };
    if paths.is_empty() {
        return ReadCall::NotAnEdit;
    }
    let text_field = |key: &str| {
        value[key]
            .as_str()
            .filter(|text| !text.trim().is_empty())
            .map(str::to_string)
    };
    ReadCall::Edit(EditCall {
        cwd: text_field("cwd").map(PathBuf::from),
        session: text_field("session_id"),
        paths,
    })
}

/// The paths a patch in the `apply_patch` format names: each file it adds, updates or
/// deletes, and where it moves one to (a rename changes both names).
pub fn patch_paths(patch: &str) -> Vec<String> {
    const HEADERS: [&str; 4] = [
        "*** Add File:",
        "*** Update File:",
        "*** Delete File:",
        "*** Move to:",
    ];
    let mut paths = Vec::new();
    for line in patch.lines() {
        let line = line.trim();
        if let Some(path) = HEADERS
            .iter()
            .find_map(|header| line.strip_prefix(header))
            .map(str::trim)
            .filter(|path| !path.is_empty())
            && !paths.iter().any(|known| known == path)
        {
            paths.push(path.to_string());
        }
    }
    paths
}

/// One path the guard asks about: as the workspace names it, and as a pattern that
/// matches exactly that path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Asked {
    pub path: String,
    pub pattern: String,
}

/// The paths of `call` inside `workspace` (the project's canonical root), or inside
/// `worktree`, a task's worktree that stands for it (SPEC section 18.2), each relative to
/// the tree it is in: an absolute path as it is, a relative one against the call's `cwd`
/// (else `cwd`), links resolved as far as the path exists. Paths outside both are not
/// baton's and are left out.
pub fn asked_paths(
    call: &EditCall,
    workspace: &Path,
    worktree: Option<&Path>,
    cwd: &Path,
) -> Vec<Asked> {
    let base = call.cwd.as_deref().unwrap_or(cwd);
    let mut asked = BTreeSet::new();
    for path in call.paths.iter().take(MOST_PATHS) {
        let path = Path::new(path);
        let whole = match path.is_absolute() {
            true => path.to_path_buf(),
            false => base.join(path),
        };
        let plain = lexically_normal(&whole);
        let real = resolved(&plain);
        let inside = |tree: &Path| {
            relative_to(tree, &real)
                .or_else(|| relative_to(tree, &plain))
                .or_else(|| relative_to(&resolved(tree), &real))
        };
        let relative = inside(workspace).or_else(|| worktree.and_then(inside));
        // The workspace itself is no file a tool edits.
        if let Some(relative) = relative.filter(|relative| relative != ".") {
            asked.insert(Asked {
                pattern: literal(&relative),
                path: relative,
            });
        }
    }
    asked.into_iter().collect()
}

/// `path` with `.` dropped and each `..` taking away the name before it, reading nothing.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

/// `path` with links resolved in the longest part of it that exists (a file about to be
/// written does not yet).
fn resolved(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(real, |whole, name| whole.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The most holdings a refusal names; the rest are counted.
const MOST_NAMED: usize = 5;

/// Why the edit is refused, for the model to read: each holding's words, who to ask, and
/// how long to wait. `asked` gives the plain path for each pattern asked about.
pub fn refusal(holdings: &[Holding], asked: &[Asked]) -> String {
    let mut seen = BTreeSet::new();
    let mut lines = Vec::new();
    for holding in holdings {
        if !seen.insert((holding.path.clone(), holding.reservation.id)) {
            continue;
        }
        let path = asked
            .iter()
            .find(|asked| asked.pattern == holding.path)
            .map_or(holding.path.clone(), |asked| asked.path.clone());
        let named = Holding {
            path,
            ..holding.clone()
        };
        let held = &holding.reservation;
        let wait = match (held.task, held.expires_at) {
            (Some(task), _) => format!(", or wait: it will be in your inbox when {task} is done"),
            (None, Some(until)) => format!(
                ", or wait: the reservation ends at {}",
                until.datetime().format("%Y-%m-%d %H:%M UTC")
            ),
            (None, None) => String::new(),
        };
        lines.push(format!(
            "{}; message {}{wait}",
            named.words(),
            inline(&held.agent)
        ));
    }
    let more = lines.len().saturating_sub(MOST_NAMED);
    lines.truncate(MOST_NAMED);
    if more > 0 {
        lines.push(format!(
            "…and {more} more reserved; `baton reservations` lists them"
        ));
    }
    lines.join("\n")
}

/// What the pre-edit hook answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditAnswer {
    /// Let the edit through, saying nothing.
    Allow,
    /// Refuse it, for this reason.
    Deny(String),
    /// Let it through, with a line for the user (the hub was out of reach).
    AllowWithNote(String),
}

/// `answer` as `client` takes it on stdout from the hook before a tool runs.
pub fn render(client: Client, answer: &EditAnswer) -> String {
    let shape = client.edit_guard().deny;
    let value = match answer {
        EditAnswer::Allow => {
            return client
                .hooks()
                .map_or(String::new(), |hooks| hooks.nothing_to_add.to_string());
        }
        EditAnswer::Deny(reason) => match shape {
            DenyShape::PermissionDecision => json!({
                "hookSpecificOutput": {
                    "hookEventName": client.edit_guard().event_name,
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            }),
            DenyShape::Decision => json!({"decision": "deny", "reason": reason}),
            DenyShape::Plugin => json!({ "deny": reason }),
        },
        EditAnswer::AllowWithNote(note) => match shape {
            DenyShape::Plugin => json!({ "note": note }),
            DenyShape::PermissionDecision | DenyShape::Decision => {
                json!({ "systemMessage": note })
            }
        },
    };
    answer_line(&value)
}

#[cfg(test)]
mod tests;
