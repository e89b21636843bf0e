//! Names of agents and projects: checked before any path is built from them.

use std::fmt;

/// What a name names, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    Agent,
    Project,
}

impl fmt::Display for NameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameKind::Agent => "agent",
            NameKind::Project => "project",
        })
    }
}

/// A name refused by [`check`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} name `{name}`: use 1-64 of a-z 0-9 . _ -, starting with a letter or digit")]
pub struct InvalidName {
    pub kind: NameKind,
    pub name: String,
}

/// Checks `name` against `^[a-z0-9][a-z0-9._-]{0,63}$` (and refuses `.` and `..`, which that
/// pattern already excludes, so no path component can climb out of the hub home).
pub fn check(kind: NameKind, name: &str) -> Result<(), InvalidName> {
    let bytes = name.as_bytes();
    let is_valid = !bytes.is_empty()
        && bytes.len() <= 64
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes.iter().all(|&byte| {
            byte.is_ascii_lowercase() || byte.is_ascii_digit() || matches!(byte, b'.' | b'_' | b'-')
        })
        && name != "."
        && name != "..";
    if is_valid {
        Ok(())
    } else {
        Err(InvalidName {
            kind,
            name: name.to_string(),
        })
    }
}

/// A host name as `baton serve --allow-host` takes it: letters, digits, `-` and `.`, at most
/// 253 characters.
pub fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_names() {
        for name in ["claude", "codex-2", "a", "gemini_cli", "v1.2", "0day"] {
            assert!(check(NameKind::Agent, name).is_ok(), "{name}");
        }
        assert!(check(NameKind::Agent, &"a".repeat(64)).is_ok());
    }

    #[test]
    fn refuses_anything_that_could_become_a_path_trick() {
        for name in [
            "", ".", "..", "../x", "a/b", "/abs", "Claude", "-x", ".hidden", "a b", "a\\b", "é",
            "a\0b",
        ] {
            let error = check(NameKind::Project, name).unwrap_err();
            assert!(error.to_string().contains("invalid project name"), "{name}");
        }
        assert!(check(NameKind::Agent, &"a".repeat(65)).is_err());
    }
}
