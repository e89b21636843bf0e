//! The schema a database was last seen at, remembered on this machine so that a command
//! need not ask for it again: its first connection would otherwise spend a round trip on
//! the check before its first statement (SPEC section 16's CLI cost).
//!
//! One small file a database under the home's `cache/` directory, named by a hash of the
//! database's address (user, hosts, ports, database: [`Address::shown`]) and of this
//! binary's version and [`SCHEMA`], holding the version seen. A newer binary, or one that
//! knows another schema, has files of its own and checks on its first command.
//!
//! What is remembered is only a guess, never trusted for a write: while a pool's schema is
//! remembered rather than checked, its first transaction asks for the version in the same
//! round trip as its `BEGIN` ([`GUARD`]), and any other answer (a newer binary migrated
//! since, a database restored from an older backup, another database now at the address)
//! forgets the file and makes the full check, as a command without it would
//! ([`super::pool::Pool::rechecked`]). A statement that meets a table or a column not there
//! before that does the same.

#[cfg(all(test, unix))]
use std::path::Path;
use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::address::Address;
use super::schema::SCHEMA;
use crate::home::Home;

/// What a transaction's `BEGIN` is sent with while the schema is only remembered: one
/// simple statement, answered in the same round trip.
pub const GUARD: &str = "SELECT max(version) FROM baton_schema";

/// [`GUARD`] as a statement of a pipeline, whose answer is typed: the version as text, as
/// [`is_current_answer`] reads it.
pub const GUARD_AS_TEXT: &str = "SELECT max(version)::text FROM baton_schema";

/// Where the schema of one database is remembered, for this binary.
#[derive(Debug, Clone)]
pub struct Remembered {
    file: PathBuf,
}

impl Remembered {
    /// The file for `address` under `home`.
    pub fn of(home: &Home, address: &Address) -> Remembered {
        Remembered::keyed(home, address, env!("CARGO_PKG_VERSION"), SCHEMA)
    }

    /// The file for `address` under `home`, for a binary of `version` that knows `schema`.
    fn keyed(home: &Home, address: &Address, version: &str, schema: i64) -> Remembered {
        // The shown address names a socket's directory but not its port: both are in.
        let key = format!(
            "{}\n{:?}\n{}\n{schema}",
            address.shown(),
            address.config.get_ports(),
            version
        );
        let digest = Sha256::digest(key.as_bytes());
        Remembered {
            file: home
                .cache_dir()
                .join(format!("schema-{}", crate::secret::hex(&digest[..16]))),
        }
    }

    /// Whether the database was seen at [`SCHEMA`] by this binary.
    pub fn is_current(&self) -> bool {
        std::fs::read_to_string(&self.file).is_ok_and(|text| text.trim() == SCHEMA.to_string())
    }

    /// Remembers that the database is at [`SCHEMA`] (the home made if need be, as a
    /// machine's own files are, when first needed). A file that cannot be written (a home
    /// not writable) is no harm: the next command checks again.
    pub fn remember(&self) {
        if let Some(dir) = self.file.parent()
            && crate::file::atomic::create_private_dir_all(dir).is_ok()
        {
            let _ =
                crate::file::atomic::replace_unsynced(&self.file, format!("{SCHEMA}\n").as_bytes());
        }
    }

    /// Forgets what was remembered: the database was found otherwise.
    pub fn forget(&self) {
        let _ = std::fs::remove_file(&self.file);
    }

    #[cfg(all(test, unix))]
    pub fn path(&self) -> &Path {
        &self.file
    }
}

/// Whether `answer`, what [`GUARD`] answered (its text), says the schema is still this
/// binary's.
pub fn is_current_answer(answer: Option<&str>) -> bool {
    answer.and_then(|text| text.parse::<i64>().ok()) == Some(SCHEMA)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_binary_version_and_schema_and_database_remembers_apart() {
        let home = Home::new(PathBuf::from("/home/u/.local/share/baton"));
        let at = |url: &str| Address::parse(url).unwrap();
        let here = at("postgres://u@db:5432/baton");
        let first = Remembered::keyed(&home, &here, "1.0.0", 5).file;
        assert!(first.starts_with(home.cache_dir()), "{}", first.display());
        assert_eq!(first, Remembered::keyed(&home, &here, "1.0.0", 5).file);
        // The password is not part of where a database is.
        assert_eq!(
            first,
            Remembered::keyed(&home, &at("postgres://u:secret@db:5432/baton"), "1.0.0", 5).file
        );
        let apart = [
            first.clone(),
            Remembered::keyed(&home, &here, "1.0.1", 5).file,
            Remembered::keyed(&home, &here, "1.0.0", 6).file,
            Remembered::keyed(&home, &at("postgres://u@db:5432/other"), "1.0.0", 5).file,
            Remembered::keyed(&home, &at("postgres://v@db:5432/baton"), "1.0.0", 5).file,
            Remembered::keyed(&home, &at("postgres://u@db:5433/baton"), "1.0.0", 5).file,
            Remembered::keyed(
                &home,
                &at("postgres://u@/baton?host=/run/pg&port=5433"),
                "1.0.0",
                5,
            )
            .file,
            Remembered::keyed(
                &home,
                &at("postgres://u@/baton?host=/run/pg&port=5434"),
                "1.0.0",
                5,
            )
            .file,
        ];
        let distinct: std::collections::BTreeSet<_> = apart.iter().collect();
        assert_eq!(distinct.len(), apart.len(), "{apart:?}");
    }

    #[test]
    fn only_this_schema_s_answer_confirms_it() {
        assert!(is_current_answer(Some(&SCHEMA.to_string())));
        assert!(!is_current_answer(Some(&(SCHEMA + 1).to_string())));
        assert!(!is_current_answer(Some(&(SCHEMA - 1).to_string())));
        assert!(!is_current_answer(None));
    }
}
