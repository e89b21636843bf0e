//! Which project of a remote hub a directory of this machine works on: `baton project map
//! ID DIR` (SPEC section 13). A project's workspace is a path on the hub's machine, which
//! means nothing here; the map says, on the agent's machine, which local directory stands
//! for it, so that a command run there needs no `--project`, and a command that names a
//! mapped project from outside its directory is refused as a bound project's would be.
//!
//! Kept in `$BATON_HOME/project-map.json` of this machine: `{"schema": 1, "projects":
//! {ID: DIR}}`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, RemoteError, Result};
use crate::home::Home;
use crate::names::{self, NameKind};
use crate::project::{DEFAULT_PROJECT, canonical};
use crate::store::files::HomeFiles;
use crate::store::versioned::{self, Versioned};
use crate::store::{Document, Stored};

/// The local directories that stand for projects of the hub.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectMap {
    schema: u32,
    #[serde(default)]
    pub projects: BTreeMap<String, PathBuf>,
}

impl Versioned for ProjectMap {
    const SCHEMA: u32 = 1;

    fn schema(&self) -> u32 {
        self.schema
    }
}

impl ProjectMap {
    /// The map of this machine's home; empty when nothing was mapped.
    pub fn load(home: &Home) -> Result<ProjectMap> {
        let what = Stored::Document(Document::ProjectMap);
        Ok(versioned::load(what, &home.project_map_file())?.unwrap_or_default())
    }

    /// The project a command acts on: the one it names, else the one whose directory is
    /// the longest prefix of `cwd`, else `default`. A named project mapped to a directory
    /// that does not hold `cwd` is refused (exit 2), as a bound project is on the hub.
    pub fn resolve(&self, named: Option<&str>, cwd: &Path) -> Result<String> {
        let cwd = canonical(cwd);
        if let Some(id) = named {
            names::check(NameKind::Project, id)?;
            if let Some(dir) = self.projects.get(id)
                && !cwd.starts_with(canonical(dir))
            {
                return Err(Error::OutsideWorkspace {
                    mapped: true,
                    project: id.to_string(),
                    workspace: dir.clone(),
                    cwd,
                });
            }
            return Ok(id.to_string());
        }
        let mapped = self
            .projects
            .iter()
            .filter(|(_, dir)| cwd.starts_with(canonical(dir)))
            .max_by_key(|(_, dir)| canonical(dir).components().count());
        match mapped {
            // A map edited by hand may hold any key: it becomes part of a URL path.
            Some((id, _)) => {
                names::check(NameKind::Project, id)?;
                Ok(id.clone())
            }
            None => Ok(DEFAULT_PROJECT.to_string()),
        }
    }

    /// The local directory mapped to `project`, if any: where a wake run for it works.
    pub fn dir_of(&self, project: &str) -> Option<&Path> {
        self.projects.get(project).map(PathBuf::as_path)
    }
}

/// Maps `project` to `dir` (made absolute, symlinks resolved), replacing what it was mapped
/// to. Two projects may not share a directory: which one a command there meant would be a
/// guess.
pub fn set(local: &HomeFiles, project: &str, dir: &Path) -> Result<ProjectMap> {
    names::check(NameKind::Project, project)?;
    if !dir.is_dir() {
        return Err(RemoteError::NotLocalDirectory {
            dir: dir.to_path_buf(),
        }
        .into());
    }
    let dir = canonical(&std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()));
    update(local, |map| {
        if let Some((other, _)) = map
            .projects
            .iter()
            .find(|(other, mapped)| *other != project && **mapped == dir)
        {
            return Err(RemoteError::MappedAlready {
                dir: dir.clone(),
                project: other.clone(),
            }
            .into());
        }
        map.projects.insert(project.to_string(), dir.clone());
        Ok(())
    })
}

/// Forgets the directory of `project`; refuses a project that is not mapped.
pub fn remove(local: &HomeFiles, project: &str) -> Result<ProjectMap> {
    names::check(NameKind::Project, project)?;
    update(local, |map| match map.projects.remove(project) {
        Some(_) => Ok(()),
        None => Err(RemoteError::NotMapped {
            project: project.to_string(),
        }
        .into()),
    })
}

/// The locked read-change-write of the map (this machine's: `local`).
fn update(
    local: &HomeFiles,
    change: impl FnOnce(&mut ProjectMap) -> Result<()>,
) -> Result<ProjectMap> {
    versioned::update(
        local,
        &Document::ProjectMap,
        |map: &mut Option<ProjectMap>| {
            let map = map.get_or_insert_with(ProjectMap::default);
            change(map)?;
            map.schema = ProjectMap::SCHEMA;
            Ok(map.clone())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::lock::LockPolicy;

    const QUIET: LockPolicy = LockPolicy {
        timeout: std::time::Duration::from_secs(5),
        on_wait: |_| {},
    };

    #[test]
    fn a_directory_maps_to_its_project_and_a_named_one_must_hold_the_directory() {
        let root = tempfile::tempdir().unwrap();
        let api = root.path().join("api");
        let web = root.path().join("web");
        std::fs::create_dir_all(api.join("src")).unwrap();
        std::fs::create_dir_all(&web).unwrap();
        let home = Home::new(root.path().join("home"));
        let local = HomeFiles::new(home.clone(), QUIET);
        set(&local, "api", &api).unwrap();
        let map = ProjectMap::load(&home).unwrap();
        assert_eq!(map.resolve(None, &api.join("src")).unwrap(), "api");
        assert_eq!(map.resolve(None, &web).unwrap(), "default");
        assert_eq!(map.resolve(Some("web"), &web).unwrap(), "web");
        let refused = map.resolve(Some("api"), &web).unwrap_err();
        assert_eq!(refused.exit_code(), 2, "{refused}");
        let shared = set(&local, "other", &api).unwrap_err();
        assert!(
            shared.to_string().contains("mapped to project api"),
            "{shared}"
        );
        remove(&local, "api").unwrap();
        assert_eq!(
            ProjectMap::load(&home)
                .unwrap()
                .resolve(None, &api)
                .unwrap(),
            "default"
        );
        assert!(remove(&local, "api").is_err());
    }
}
