//! `$BATON_HOME/setup.json`: what setup created around its entries (files, directories, and
//! containers such as an `mcpServers` object that was not there), so uninstall removes those
//! too and nothing else. Entries themselves need no record: they are recognised on sight.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::store::paths::Home;
use crate::store::{StoreError, atomic, regular};

use super::json::KeyPath;

pub const MANIFEST_SCHEMA: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema: u32,
    /// By absolute path of the client file.
    #[serde(default)]
    pub files: BTreeMap<PathBuf, FileRecord>,
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
}

impl Manifest {
    pub fn load(home: &Home) -> Result<Manifest> {
        let path = home.setup_manifest();
        let bytes = match regular::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Manifest::default()),
            Err(error) => return Err(StoreError::io(&path)(error).into()),
        };
        let manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|error| StoreError::Corrupt {
                path: path.clone(),
                detail: error.to_string(),
            })?;
        if manifest.schema > MANIFEST_SCHEMA {
            return Err(StoreError::NewerSchema {
                path,
                found: u64::from(manifest.schema),
                known: MANIFEST_SCHEMA,
            }
            .into());
        }
        Ok(manifest)
    }

    pub fn save(&self, home: &Home) -> Result<()> {
        let path = home.setup_manifest();
        let mut text = serde_json::to_vec_pretty(self).map_err(|error| StoreError::Corrupt {
            path: path.clone(),
            detail: error.to_string(),
        })?;
        text.push(b'\n');
        atomic::replace(&path, &text, None)?;
        Ok(())
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

    pub fn forget(&mut self, path: &Path) -> Option<FileRecord> {
        self.files.remove(path)
    }
}
