//! A machine's own key: 256 random bits kept in a private file of the machine's hub home,
//! never in the store. It signs what only this machine may vouch for, such as a wake
//! command registered here: on a store several machines share, anyone holding the store's
//! credentials can write an agent's record, but only this machine can sign it, so a hub
//! runs only the wake commands it signed itself (SPEC section 16).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use super::hmac::hmac_sha256;
use super::{NoRandomness, SECRET_BYTES, hex, random_bytes};

/// A machine's key, read from (or made in) its file.
pub struct MachineKey {
    bytes: [u8; SECRET_BYTES],
    /// Where the last signature made for each subject is kept ([`MachineKey::sign_latest`]).
    ledger: PathBuf,
}

impl std::fmt::Debug for MachineKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("MachineKey(…)")
    }
}

/// The key's file could not be read or made.
#[derive(Debug, thiserror::Error)]
pub enum MachineKeyError {
    #[error("cannot read this machine's key {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error(
        "this machine's key {} is not 64 hex digits in a private regular file: remove it, and \
         register the wake commands of this machine again (`baton agent add NAME --wake -- …`)",
        path.display()
    )]
    Damaged { path: PathBuf },
    #[error("cannot make this machine's key {}: {source}", path.display())]
    Make { path: PathBuf, source: io::Error },
    #[error("cannot keep this machine's signature in {}: {source}", path.display())]
    Ledger { path: PathBuf, source: io::Error },
    #[error(transparent)]
    NoRandomness(#[from] NoRandomness),
}

/// The longest key file read: the key, and a line end or two.
const MOST_BYTES: u64 = 2 * SECRET_BYTES as u64 + 2;

impl MachineKey {
    /// The key at `path`; `None` when there is none yet (this machine has signed nothing).
    pub fn load(path: &Path) -> Result<Option<MachineKey>, MachineKeyError> {
        let read = |source| MachineKeyError::Read {
            path: path.to_path_buf(),
            source,
        };
        // Not followed through a link: the key is a file of this home, not a pointer to
        // whatever a link names.
        match std::fs::symlink_metadata(path) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(read(error)),
            Ok(metadata) if !metadata.is_file() || !is_private(&metadata) => {
                return Err(MachineKeyError::Damaged {
                    path: path.to_path_buf(),
                });
            }
            Ok(_) => {}
        }
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|file| file.take(MOST_BYTES + 1).read_to_string(&mut text))
            .map_err(read)?;
        let damaged = || MachineKeyError::Damaged {
            path: path.to_path_buf(),
        };
        let digits = text.trim_end();
        if digits.len() != 2 * SECRET_BYTES || text.len() as u64 > MOST_BYTES {
            return Err(damaged());
        }
        let mut bytes = [0u8; SECRET_BYTES];
        for (byte, pair) in bytes.iter_mut().zip(digits.as_bytes().chunks(2)) {
            *byte = std::str::from_utf8(pair)
                .ok()
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(damaged)?;
        }
        Ok(Some(MachineKey {
            bytes,
            ledger: ledger_of(path),
        }))
    }

    /// The key at `path`, made first when there is none: written whole to a private file
    /// beside it, then linked into place, which fails if another process made it first (its
    /// key is then the one read), so two processes never sign with different keys.
    pub fn load_or_make(path: &Path) -> Result<MachineKey, MachineKeyError> {
        if let Some(key) = MachineKey::load(path)? {
            return Ok(key);
        }
        let made = random_bytes("this machine's key")?;
        let make = |source| MachineKeyError::Make {
            path: path.to_path_buf(),
            source,
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        make_private_dirs(dir).map_err(make)?;
        // A random name: no other maker, in this process or another, stages under it.
        let staged = dir.join(format!(
            ".machine-key.{}.tmp",
            hex(&random_bytes("a temporary file's name")?[..8])
        ));
        let written = private_new_file(&staged).and_then(|mut file| {
            file.write_all(format!("{}\n", hex(&made)).as_bytes())?;
            file.sync_all()
        });
        let linked = written.and_then(|()| std::fs::hard_link(&staged, path));
        let _ = std::fs::remove_file(&staged);
        match linked {
            Ok(()) => Ok(MachineKey {
                bytes: made,
                ledger: ledger_of(path),
            }),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                MachineKey::load(path)?.ok_or_else(|| make(error))
            }
            Err(error) => Err(make(error)),
        }
    }

    /// Signs `message` as the one that now stands for `subject` (a name safe in a file name:
    /// `wake-codex`), and keeps the signature in this machine's ledger, so that an older
    /// message this machine signed for the same subject, written back into the store, no
    /// longer counts ([`MachineKey::is_latest`]).
    pub fn sign_latest(&self, subject: &str, message: &[u8]) -> Result<String, MachineKeyError> {
        let signature = self.sign(message);
        let path = self.ledger.join(subject);
        let kept = |source| MachineKeyError::Ledger {
            path: path.clone(),
            source,
        };
        make_private_dirs(&self.ledger).map_err(kept)?;
        let staged = self.ledger.join(format!(
            ".{subject}.{}.tmp",
            hex(&random_bytes("a temporary file's name")?[..8])
        ));
        let written = private_new_file(&staged).and_then(|mut file| {
            file.write_all(signature.as_bytes())?;
            file.sync_all()
        });
        let placed = written.and_then(|()| std::fs::rename(&staged, &path));
        if placed.is_err() {
            let _ = std::fs::remove_file(&staged);
        }
        placed.map_err(kept)?;
        Ok(signature)
    }

    /// Whether `signature` is this key's of `message` and the last one it made for
    /// `subject`.
    pub fn is_latest(&self, subject: &str, message: &[u8], signature: &str) -> bool {
        let kept = std::fs::read_to_string(self.ledger.join(subject)).unwrap_or_default();
        self.verifies(message, signature) && kept == signature
    }

    /// Forgets the signature that stood for `subject`: nothing signed for it counts any more.
    pub fn forget(&self, subject: &str) -> Result<(), MachineKeyError> {
        let path = self.ledger.join(subject);
        match std::fs::remove_file(&path) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => Err(MachineKeyError::Ledger {
                path,
                source: error,
            }),
            _ => Ok(()),
        }
    }

    /// The signature of `message` under this key, in hex.
    pub fn sign(&self, message: &[u8]) -> String {
        hex(&hmac_sha256(&self.bytes, message))
    }

    /// Whether `signature` is this key's of `message`, compared in time that does not
    /// depend on where they differ.
    pub fn verifies(&self, message: &[u8], signature: &str) -> bool {
        let expected = self.sign(message);
        expected.len() == signature.len()
            && expected
                .bytes()
                .zip(signature.bytes())
                .fold(0u8, |differ, (a, b)| differ | (a ^ b))
                == 0
    }
}

/// Where the signatures of the key at `path` are kept: `signed/` beside it.
fn ledger_of(path: &Path) -> PathBuf {
    path.parent().unwrap_or(Path::new(".")).join("signed")
}

#[cfg(unix)]
fn is_private(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    metadata.permissions().mode() & 0o077 == 0
}

#[cfg(not(unix))]
fn is_private(_: &std::fs::Metadata) -> bool {
    true
}

fn make_private_dirs(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn private_new_file(path: &Path) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_once_and_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("home/machine.key");
        assert!(MachineKey::load(&path).unwrap().is_none());
        let made = MachineKey::load_or_make(&path).unwrap();
        let again = MachineKey::load_or_make(&path).unwrap();
        assert_eq!(made.sign(b"x"), again.sign(b"x"));
        assert!(again.verifies(b"x", &made.sign(b"x")));
        assert!(!again.verifies(b"y", &made.sign(b"x")));
        assert!(!again.verifies(b"x", ""));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let other = tempfile::tempdir().unwrap();
        let elsewhere = MachineKey::load_or_make(&other.path().join("machine.key")).unwrap();
        assert!(
            !elsewhere.verifies(b"x", &made.sign(b"x")),
            "another machine's key"
        );
    }

    #[test]
    fn only_the_last_signature_made_for_a_subject_counts() {
        let dir = tempfile::tempdir().unwrap();
        let key = MachineKey::load_or_make(&dir.path().join("machine.key")).unwrap();
        let old = key.sign_latest("wake-codex", b"old command").unwrap();
        assert!(key.is_latest("wake-codex", b"old command", &old));
        let new = key.sign_latest("wake-codex", b"new command").unwrap();
        assert!(key.is_latest("wake-codex", b"new command", &new));
        assert!(
            !key.is_latest("wake-codex", b"old command", &old),
            "a signature this machine made once, replayed"
        );
        assert!(
            !key.is_latest("wake-claude", b"new command", &new),
            "another subject"
        );
        key.forget("wake-codex").unwrap();
        assert!(
            !key.is_latest("wake-codex", b"new command", &new),
            "forgotten"
        );
        key.forget("wake-codex").unwrap();
    }

    #[test]
    fn processes_making_the_key_at_once_end_with_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("machine.key");
        let signatures: Vec<String> = std::thread::scope(|scope| {
            let makers: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| MachineKey::load_or_make(&path).unwrap().sign(b"m")))
                .collect();
            makers
                .into_iter()
                .map(|maker| maker.join().unwrap())
                .collect()
        });
        assert!(signatures.windows(2).all(|pair| pair[0] == pair[1]));
    }

    #[test]
    fn a_damaged_or_linked_key_is_refused_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("machine.key");
        std::fs::write(&path, "not hex\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        assert!(matches!(
            MachineKey::load(&path),
            Err(MachineKeyError::Damaged { .. })
        ));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let good = dir.path().join("good.key");
            MachineKey::load_or_make(&good).unwrap();
            let link = dir.path().join("link.key");
            std::os::unix::fs::symlink(&good, &link).unwrap();
            assert!(matches!(
                MachineKey::load(&link),
                Err(MachineKeyError::Damaged { .. })
            ));
            std::fs::set_permissions(&good, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert!(matches!(
                MachineKey::load(&good),
                Err(MachineKeyError::Damaged { .. })
            ));
        }
    }
}
