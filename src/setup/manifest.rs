//! `$BATON_HOME/setup.json`: what setup created around its entries (files, directories, and
//! containers such as an `mcpServers` object that was not there), so uninstall removes those
//! too and nothing else, and the user's small files as they were before setup changed them,
//! so uninstall gives their bytes back. Entries themselves need no record: they are
//! recognised on sight.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::store::versioned::{self, Versioned};
use crate::store::{Document, Documents};

use super::json::KeyPath;

pub const MANIFEST_SCHEMA: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema: u32,
    /// By absolute path of the client file.
    #[serde(default)]
    pub files: BTreeMap<PathBuf, FileRecord>,
}

impl Versioned for Manifest {
    const SCHEMA: u32 = MANIFEST_SCHEMA;

    fn schema(&self) -> u32 {
        self.schema
    }
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest {
            schema: MANIFEST_SCHEMA,
            files: BTreeMap::new(),
        }
    }
}

/// What setup created for one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileRecord {
    /// The file did not exist before setup wrote it.
    #[serde(default)]
    pub created_file: bool,
    /// Containers (objects, arrays, tables) setup added to hold its entries.
    #[serde(default)]
    pub created_keys: Vec<KeyPath>,
    /// Directories setup made to hold the file.
    #[serde(default)]
    pub created_dirs: Vec<PathBuf>,
    /// The user's file as it was before setup changed it, for uninstall to give back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<Original>,
}

/// A file's bytes before setup changed it, and the fingerprint of what setup then wrote.
///
/// Removing baton's entries gives back the user's data but not always their layout: adding
/// to an object on one line spreads it over several (the JSON editor always does), and a
/// TOML file gains a final newline. So while the file still holds exactly what setup last
/// wrote, everything in it beyond `text` is setup's, and uninstall writes `text` back
/// byte for byte. Once anything else has changed the file, uninstall removes only baton's
/// entries, keeping that change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Original {
    pub text: String,
    /// [`fingerprint`] of the text setup last wrote to the file.
    pub written: String,
}

/// The largest file whose original text is kept. Larger files are written by their own
/// programs, pretty-printed, and come back byte for byte from removing the entries alone;
/// a copy of them (`~/.claude.json` holds a client's whole state) does not belong here.
const MAX_ORIGINAL: usize = 1024 * 1024;

/// A fingerprint of `text` (64-bit FNV-1a, in hex): enough to tell whether a file still
/// holds what setup wrote, and stable across builds, unlike the standard library's hasher.
pub fn fingerprint(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

impl Manifest {
    /// The manifest of this machine (`local`); empty when setup has made nothing yet.
    pub fn load(local: &dyn Documents) -> Result<Manifest> {
        Ok(versioned::read(local, &Document::SetupManifest)?.unwrap_or_default())
    }

    /// A locked read-change-write of the manifest of this machine (`local`), which setup
    /// holds while it edits the clients' files; written when `change` changed it.
    pub fn update<T>(
        local: &dyn Documents,
        change: impl FnOnce(&mut Manifest) -> Result<T>,
    ) -> Result<T> {
        versioned::update(local, &Document::SetupManifest, |stored| {
            let was_there = stored.is_some();
            let manifest = stored.get_or_insert_with(Manifest::default);
            let result = change(manifest)?;
            // No manifest yet and nothing to keep: none is made.
            if !was_there && *manifest == Manifest::default() {
                *stored = None;
            }
            Ok(result)
        })
    }

    pub fn record(&self, path: &Path) -> Option<&FileRecord> {
        self.files.get(path)
    }

    /// Adds what one write created to the record of `path`.
    pub fn remember(
        &mut self,
        path: &Path,
        created_file: bool,
        keys: &[KeyPath],
        dirs: &[PathBuf],
    ) {
        if !created_file && keys.is_empty() && dirs.is_empty() {
            return;
        }
        let record = self.files.entry(path.to_path_buf()).or_default();
        record.created_file |= created_file;
        for key in keys {
            if !record.created_keys.contains(key) {
                record.created_keys.push(key.clone());
            }
        }
        for dir in dirs {
            if !record.created_dirs.contains(dir) {
                record.created_dirs.push(dir.clone());
            }
        }
    }

    /// Notes that setup changed the user's file at `path` from `before` to `after`. The
    /// original kept is the text before the first of setup's changes in a row: if the file
    /// still held what setup last wrote, that earlier original stays.
    pub fn remember_original(&mut self, path: &Path, before: &str, after: &str) {
        let record = self.files.entry(path.to_path_buf()).or_default();
        let written = fingerprint(after);
        match &mut record.original {
            Some(original) if original.written == fingerprint(before) => {
                original.written = written;
            }
            _ if before.len() > MAX_ORIGINAL => record.original = None,
            _ => {
                record.original = Some(Original {
                    text: before.to_string(),
                    written,
                });
            }
        }
    }

    /// The text to give the user back for the file at `path`, which now holds `current`:
    /// its original, when nothing but setup has written it since.
    pub fn original_if_untouched(&self, path: &Path, current: &str) -> Option<&str> {
        let original = self.record(path)?.original.as_ref()?;
        (original.written == fingerprint(current)).then_some(original.text.as_str())
    }

    pub fn forget(&mut self, path: &Path) -> Option<FileRecord> {
        self.files.remove(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_original_is_the_text_before_setups_changes_in_a_row() {
        let path = Path::new("/home/u/.gemini/settings.json");
        let mut manifest = Manifest::default();
        manifest.remember_original(path, "{\"a\":1}", "{\n  \"a\":1, \"b\": 1\n}");
        // Setup changes its own output again (a new baton path): the original stays.
        manifest.remember_original(
            path,
            "{\n  \"a\":1, \"b\": 1\n}",
            "{\n  \"a\":1, \"b\": 2\n}",
        );
        assert_eq!(
            manifest.original_if_untouched(path, "{\n  \"a\":1, \"b\": 2\n}"),
            Some("{\"a\":1}")
        );
        assert_eq!(
            manifest.original_if_untouched(path, "{\n  \"a\":7, \"b\": 2\n}"),
            None,
            "changed by someone else since"
        );
        // The user changed the file, then setup ran again: their text is the original now.
        manifest.remember_original(path, "{\"a\":7,\"b\":2}", "{\n  \"a\":7, \"b\": 3\n}");
        assert_eq!(
            manifest.original_if_untouched(path, "{\n  \"a\":7, \"b\": 3\n}"),
            Some("{\"a\":7,\"b\":2}")
        );
    }

    #[test]
    fn a_large_file_keeps_no_copy() {
        let path = Path::new("/home/u/.claude.json");
        let mut manifest = Manifest::default();
        let large = format!("{{\"a\":\"{}\"}}", "x".repeat(MAX_ORIGINAL));
        manifest.remember_original(path, &large, "{}");
        assert_eq!(manifest.original_if_untouched(path, "{}"), None);
    }

    #[test]
    fn fingerprints_are_fixed_values() {
        // FNV-1a's published test values: a stored fingerprint must mean the same later.
        assert_eq!(fingerprint(""), "cbf29ce484222325");
        assert_eq!(fingerprint("a"), "af63dc4c8601ec8c");
    }
}
