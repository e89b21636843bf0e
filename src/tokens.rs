//! The tokens of `baton serve` (SPEC section 12): each is the identity of the agent a request
//! acts as. `tokens.json` keeps only the SHA-256 of each token, so the token string is in no
//! file: [`add`] hands it out once and nothing can show it again.
//!
//! Every change is a locked read-change-write of the whole file under `tokens.lock`; fields a
//! newer baton wrote are kept as they are. [`authenticate`] looks at the file on every call
//! (what it parsed is kept in [`KeptTokens`] only until the file changes), so a token
//! removed by `baton token rm` stops working at the next request.
//!
//! A login token (the one `baton serve` puts in the URL it prints) records the server that
//! made it, and lives no longer than that server runs: once it stops, however it stops (a
//! crash, SIGKILL), the token is refused, the next server removes it, and `baton doctor`
//! points at it until then.

use std::sync::Arc;

use chrono::Duration;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::names::{self, NameKind};
use crate::store::StoreError;
use crate::store::cache::FileCache;
use crate::store::lock::{FileLock, LockPolicy};
use crate::store::paths::Home;
use crate::store::presence::{self, ServerPresence};
use crate::store::versioned::{self, Versioned};
use crate::time::Timestamp;

pub const TOKENS_SCHEMA: u32 = 1;

/// What every token starts with, so one found in a log or a paste is recognised as baton's.
pub const TOKEN_PREFIX: &str = "baton_";

/// How many random bytes a token carries: 256 bits from the operating system.
const TOKEN_BYTES: usize = 32;

/// A token's `last_used_at` is written at most this often, so a busy server does not
/// rewrite `tokens.json` on every request.
pub const LAST_USE_EVERY: Duration = Duration::minutes(1);

/// One token as `baton token list --json` shows it: whom it acts as and when it was made
/// and last used. Never the hash, never the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenRow {
    pub name: String,
    pub created_at: Timestamp,
    pub last_used_at: Option<Timestamp>,
    /// The token `baton serve` made for a browser's login, rather than one `baton token add`
    /// made.
    pub login: bool,
}

/// One token, told apart from every other (two tokens of one agent included) by the hash
/// `tokens.json` keeps of it: what a server remembers of a token instead of the token.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TokenId(String);

/// Who presented a token: the agent it acts as, and which token it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bearer {
    pub agent: String,
    pub token: TokenId,
}

/// What a presented token turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authentication {
    /// A token of this hub, acting as its agent.
    Accepted(Bearer),
    /// No token of this hub: never made, or removed.
    Unknown,
    /// The login token of a `baton serve` that no longer runs.
    ServerGone,
}

/// A login token whose server no longer runs, as `baton doctor` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleLogin {
    pub name: String,
    pub created_at: Timestamp,
    /// The process of the server that made it; none when a baton from before servers were
    /// recorded made it.
    pub server_pid: Option<u32>,
}

/// The contents of `tokens.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct TokensFile {
    schema: u32,
    #[serde(default)]
    tokens: Vec<StoredToken>,
    /// Fields written by a newer baton: kept, never dropped.
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

/// One entry of `tokens.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StoredToken {
    /// The agent the token acts as.
    name: String,
    /// The SHA-256 of the token, in lowercase hex.
    hash: String,
    created_at: Timestamp,
    #[serde(default)]
    last_used_at: Option<Timestamp>,
    #[serde(default)]
    login: bool,
    /// For a login token, the process of the `baton serve` that made it: the token is good
    /// only while that server holds its lock (`serve/<pid>.lock`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_pid: Option<u32>,
    /// Fields written by a newer baton: kept, never dropped.
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

impl Versioned for TokensFile {
    const SCHEMA: u32 = TOKENS_SCHEMA;

    fn schema(&self) -> u32 {
        self.schema
    }
}

impl Default for TokensFile {
    fn default() -> Self {
        TokensFile {
            schema: TOKENS_SCHEMA,
            tokens: Vec::new(),
            other: serde_json::Map::new(),
        }
    }
}

impl StoredToken {
    /// A token of `name`; a login token when `server_pid` names the server that made it.
    fn new(name: &str, hash: String, now: Timestamp, server_pid: Option<u32>) -> Self {
        StoredToken {
            name: name.to_string(),
            hash,
            created_at: now,
            last_used_at: None,
            login: server_pid.is_some(),
            server_pid,
            other: serde_json::Map::new(),
        }
    }

    /// Whether this is a login token whose server does not run (or was never recorded, by a
    /// baton from before servers were): nobody vouches for it any more.
    fn is_stale_login(&self, home: &Home) -> bool {
        self.login
            && !self
                .server_pid
                .is_some_and(|pid| presence::is_server_running(home, pid))
    }

    /// Whether `last_used_at` is old enough to be written again at `now`; a clock that went
    /// back never moves it back.
    fn is_use_due(&self, now: Timestamp) -> bool {
        self.last_used_at
            .is_none_or(|last| last.until(now) >= LAST_USE_EVERY)
    }
}

/// A new token for the agent `name`, which may have one besides its login token. Refused
/// while it has one: a second would be a second secret for the same identity that nobody
/// remembers handing out.
pub fn add(home: &Home, name: &str, lock: LockPolicy, now: Timestamp) -> Result<String> {
    names::check(NameKind::Agent, name)?;
    let (token, hash) = mint()?;
    change(home, lock, |file| {
        if file
            .tokens
            .iter()
            .any(|stored| stored.name == name && !stored.login)
        {
            return Err(Error::invalid_with_hint(
                format!("agent {name} already has a token"),
                format!("`baton token rm {name}` first"),
            ));
        }
        file.tokens.push(StoredToken::new(name, hash, now, None));
        Ok(())
    })?;
    Ok(token)
}

/// A new login token for `name` (the one `baton serve` puts in the URL it prints), good for
/// as long as `server` runs. It replaces the login token `server` made before, if any, and
/// every login token whose server no longer runs; `name`'s other tokens are kept, and so are
/// the logins of other servers that run.
pub fn add_login(
    home: &Home,
    name: &str,
    server: &ServerPresence,
    lock: LockPolicy,
    now: Timestamp,
) -> Result<String> {
    names::check(NameKind::Agent, name)?;
    let (token, hash) = mint()?;
    change(home, lock, |file| {
        let is_replaced = |stored: &StoredToken| {
            let is_this_servers = stored.login && stored.server_pid == Some(server.pid());
            is_this_servers || stored.is_stale_login(home)
        };
        file.tokens.retain(|stored| !is_replaced(stored));
        file.tokens
            .push(StoredToken::new(name, hash, now, Some(server.pid())));
        Ok(())
    })?;
    Ok(token)
}

/// Removes every token of `name`, its login token included; how many there were. Refused,
/// naming the agents that have tokens, when it has none.
pub fn remove(home: &Home, name: &str, lock: LockPolicy) -> Result<usize> {
    names::check(NameKind::Agent, name)?;
    change(home, lock, |file| {
        let before = file.tokens.len();
        file.tokens.retain(|stored| stored.name != name);
        let removed = before - file.tokens.len();
        if removed == 0 {
            let mut holders: Vec<&str> = file
                .tokens
                .iter()
                .map(|stored| stored.name.as_str())
                .collect();
            holders.sort_unstable();
            holders.dedup();
            let holders = match holders.is_empty() {
                true => "none yet".to_string(),
                false => holders.join(", "),
            };
            return Err(Error::invalid(format!(
                "agent {name} has no token; agents with tokens: {holders}"
            )));
        }
        Ok(removed)
    })
}

/// Removes the login token `server` made, when it stops; none is fine.
pub fn remove_login(home: &Home, server: &ServerPresence, lock: LockPolicy) -> Result<()> {
    change(home, lock, |file| {
        file.tokens
            .retain(|stored| !(stored.login && stored.server_pid == Some(server.pid())));
        Ok(())
    })
}

/// Removes every login token whose server no longer runs (see [`stale_logins`]); how many
/// there were. What a starting `baton serve` does first.
pub fn remove_stale_logins(home: &Home, lock: LockPolicy) -> Result<usize> {
    change(home, lock, |file| {
        let before = file.tokens.len();
        file.tokens.retain(|stored| !stored.is_stale_login(home));
        Ok(before - file.tokens.len())
    })
}

/// The login tokens whose server no longer runs: a server killed before it could remove its
/// own. They are refused already; this is for `baton doctor` to say so.
pub fn stale_logins(home: &Home) -> Result<Vec<StaleLogin>> {
    Ok(load(home)?
        .tokens
        .into_iter()
        .filter(|stored| stored.is_stale_login(home))
        .map(|stored| StaleLogin {
            name: stored.name,
            created_at: stored.created_at,
            server_pid: stored.server_pid,
        })
        .collect())
}

/// Every token, sorted by name, a name's login token after its other one.
pub fn list(home: &Home) -> Result<Vec<TokenRow>> {
    let mut rows: Vec<TokenRow> = load(home)?
        .tokens
        .into_iter()
        .map(|stored| TokenRow {
            name: stored.name,
            created_at: stored.created_at,
            last_used_at: stored.last_used_at,
            login: stored.login,
        })
        .collect();
    rows.sort_by(|left, right| (&left.name, left.login).cmp(&(&right.name, right.login)));
    Ok(rows)
}

/// `tokens.json` as [`authenticate`] and [`is_current`] read it: parsed again only when the
/// file changed since the last call (a server asks on every request).
#[derive(Debug, Default)]
pub struct KeptTokens(FileCache<Arc<TokensFile>>);

impl KeptTokens {
    fn load(&self, home: &Home) -> Result<Arc<TokensFile>> {
        self.0.get(&home.tokens_file(), || load(home).map(Arc::new))
    }
}

/// Whom the token `presented` acts as, if it is a token of this hub that is good now.
///
/// Looks at `tokens.json` on every call, so a removed token fails at the next request. The
/// SHA-256 of `presented` is compared with every entry's in constant time, and the loop
/// never stops at a match, so how long it takes tells nothing about the tokens. A login
/// token is good only while the server that made it runs. A match records `last_used_at` at
/// most once per [`LAST_USE_EVERY`]; the record never waits for the lock (another process
/// holding it skips the record, and the next request due makes it).
pub fn authenticate(
    home: &Home,
    kept: &KeptTokens,
    presented: &str,
    now: Timestamp,
) -> Result<Authentication> {
    let file = kept.load(home)?;
    let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
    let mut found: Option<&StoredToken> = None;
    for stored in &file.tokens {
        // `load` checked every hash, so each decodes.
        let is_match =
            decode_digest(&stored.hash).is_some_and(|digest| is_same_digest(&digest, &presented));
        if is_match && found.is_none() {
            found = Some(stored);
        }
    }
    let Some(stored) = found else {
        return Ok(Authentication::Unknown);
    };
    if stored.is_stale_login(home) {
        return Ok(Authentication::ServerGone);
    }
    if stored.is_use_due(now) {
        record_use(home, &stored.hash, now)?;
    }
    Ok(Authentication::Accepted(Bearer {
        agent: stored.name.clone(),
        token: TokenId(stored.hash.clone()),
    }))
}

/// Whether the token `token` is still good: not removed (nor replaced), and, for a login
/// token, its server still running. What a long-lived answer (an event stream, an MCP
/// session) asks again while it lasts.
pub fn is_current(home: &Home, kept: &KeptTokens, token: &TokenId) -> Result<bool> {
    let file = kept.load(home)?;
    Ok(file
        .tokens
        .iter()
        .find(|stored| stored.hash == token.0)
        .is_some_and(|stored| !stored.is_stale_login(home)))
}

/// Writes `now` as the last use of the token whose hash is `hash`, if the lock is free and
/// the record is still due under it.
fn record_use(home: &Home, hash: &str, now: Timestamp) -> Result<()> {
    let Some(_guard) = FileLock::try_acquire(&home.tokens_lock())? else {
        return Ok(());
    };
    let mut file = load(home)?;
    // Gone when `baton token rm` removed it since it was read: nothing to record.
    let Some(stored) = file.tokens.iter_mut().find(|stored| stored.hash == hash) else {
        return Ok(());
    };
    if !stored.is_use_due(now) {
        return Ok(());
    }
    stored.last_used_at = Some(now);
    Ok(versioned::save(&home.tokens_file(), &file)?)
}

/// Reads `tokens.json` (none yet is an empty file), refusing one whose entries would make
/// a request act as a name that is not an agent's, or whose hashes are not SHA-256 digests.
fn load(home: &Home) -> Result<TokensFile> {
    let path = home.tokens_file();
    let file: TokensFile = versioned::load(&path)?.unwrap_or_default();
    for (index, stored) in file.tokens.iter().enumerate() {
        let problem = if names::check(NameKind::Agent, &stored.name).is_err() {
            Some(format!(
                "token {} names `{}`, not an agent",
                index + 1,
                stored.name
            ))
        } else if decode_digest(&stored.hash).is_none() {
            Some(format!(
                "token {} of {} has a hash that is not 64 hex digits",
                index + 1,
                stored.name
            ))
        } else {
            None
        };
        if let Some(detail) = problem {
            return Err(StoreError::Corrupt { path, detail }.into());
        }
    }
    Ok(file)
}

/// A locked read-change-write of `tokens.json`; written only when `change` changed it.
fn change<T>(
    home: &Home,
    lock: LockPolicy,
    change: impl FnOnce(&mut TokensFile) -> Result<T>,
) -> Result<T> {
    let _guard = FileLock::acquire(&home.tokens_lock(), "the tokens lock", lock)?;
    let before = load(home)?;
    let mut file = before.clone();
    let result = change(&mut file)?;
    if file != before {
        versioned::save(&home.tokens_file(), &file)?;
    }
    Ok(result)
}

/// A new token and the hash to store for it.
fn mint() -> Result<(String, String)> {
    let bytes = random_bytes("a token")?;
    let token = format!("{TOKEN_PREFIX}{}", hex(&bytes));
    let hash = hex(&Sha256::digest(token.as_bytes()));
    Ok((token, hash))
}

/// 32 bytes from the operating system's randomness, for a secret (`what` names it in the
/// error): a token here, an alert's signing secret.
pub fn random_bytes(what: &str) -> Result<[u8; TOKEN_BYTES]> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|error| {
        Error::invalid(format!(
            "cannot get random bytes from the operating system for {what}: {error}"
        ))
    })?;
    Ok(bytes)
}

/// Lowercase hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    text
}

/// The 32 bytes of a stored hash; `None` unless it is 64 lowercase hex digits.
fn decode_digest(text: &str) -> Option<[u8; 32]> {
    let digits = text.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let value = |digit: u8| match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    };
    let mut digest = [0u8; 32];
    for (byte, pair) in digest.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = value(pair[0])? << 4 | value(pair[1])?;
    }
    Some(digest)
}

/// Whether two digests are equal, in a time that does not depend on where they differ: every
/// byte is compared, the differences folded together, and only the end result tested.
fn is_same_digest(left: &[u8; 32], right: &[u8; 32]) -> bool {
    let difference = left
        .iter()
        .zip(right)
        // `black_box` keeps the compiler from turning the fold into an early exit.
        .fold(0u8, |folded, (a, b)| folded | std::hint::black_box(a ^ b));
    difference == 0
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn quiet() -> LockPolicy {
        LockPolicy::silent(std::time::Duration::from_secs(5))
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn new_home() -> (tempfile::TempDir, Home) {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path().to_path_buf());
        (root, home)
    }

    /// The agent `presented` acts as at `now`, if it is accepted.
    fn who(home: &Home, presented: &str, now: Timestamp) -> Option<String> {
        match authenticate(home, &KeptTokens::default(), presented, now).unwrap() {
            Authentication::Accepted(bearer) => Some(bearer.agent),
            Authentication::Unknown | Authentication::ServerGone => None,
        }
    }

    #[test]
    fn kept_tokens_follow_every_change_of_the_file() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path().to_path_buf());
        let now = at("2026-12-02T01:00:00Z");
        let kept = KeptTokens::default();
        let first = add(&home, "codex", quiet(), now).unwrap();
        let Authentication::Accepted(bearer) = authenticate(&home, &kept, &first, now).unwrap()
        else {
            panic!("a token just made is accepted");
        };
        assert!(is_current(&home, &kept, &bearer.token).unwrap());
        remove(&home, "codex", quiet()).unwrap();
        assert!(matches!(
            authenticate(&home, &kept, &first, now).unwrap(),
            Authentication::Unknown
        ));
        assert!(!is_current(&home, &kept, &bearer.token).unwrap());
        let second = add(&home, "codex", quiet(), now).unwrap();
        assert!(matches!(
            authenticate(&home, &kept, &second, now).unwrap(),
            Authentication::Accepted(_)
        ));
    }

    #[test]
    fn hashes_are_sha256_in_lowercase_hex_and_decode_back() {
        // FIPS 180-2's first example.
        let abc = hex(&Sha256::digest(b"abc"));
        assert_eq!(
            abc,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let decoded = decode_digest(&abc).unwrap();
        assert_eq!(hex(&decoded), abc);
        for bad in [
            "",
            &abc[..62],
            &abc.to_uppercase(),
            &format!("{}zz", &abc[..62]),
        ] {
            assert_eq!(decode_digest(bad), None, "{bad}");
        }
    }

    #[test]
    fn digests_are_equal_only_when_every_byte_is() {
        let digest: [u8; 32] = Sha256::digest(b"abc").into();
        assert!(is_same_digest(&digest, &digest.clone()));
        for position in [0, 15, 31] {
            let mut other = digest;
            other[position] ^= 1;
            assert!(!is_same_digest(&digest, &other), "differs at {position}");
        }
    }

    #[test]
    fn tokens_carry_256_random_bits_after_the_prefix() {
        let (first, first_hash) = mint().unwrap();
        let (second, _) = mint().unwrap();
        assert_ne!(first, second);
        let random = first.strip_prefix(TOKEN_PREFIX).unwrap();
        assert_eq!(random.len(), 2 * TOKEN_BYTES);
        assert!(decode_digest(random).is_some(), "{random} is hex");
        assert_eq!(first_hash, hex(&Sha256::digest(first.as_bytes())));
    }

    #[test]
    fn a_match_records_its_last_use_at_most_once_a_minute_and_never_back() {
        let (_root, home) = new_home();
        let start = at("2026-12-02T01:00:00Z");
        let token = add(&home, "alice", quiet(), start).unwrap();
        let last_used = |home: &Home| list(home).unwrap()[0].last_used_at;
        assert_eq!(last_used(&home), None);
        let check = |now: &str| who(&home, &token, at(now));
        assert_eq!(check("2026-12-02T01:00:10Z").as_deref(), Some("alice"));
        assert_eq!(last_used(&home), Some(at("2026-12-02T01:00:10Z")));
        check("2026-12-02T01:01:09Z");
        assert_eq!(
            last_used(&home),
            Some(at("2026-12-02T01:00:10Z")),
            "not due"
        );
        check("2026-12-02T01:01:10Z");
        assert_eq!(last_used(&home), Some(at("2026-12-02T01:01:10Z")));
        check("2026-12-02T00:00:00Z");
        assert_eq!(last_used(&home), Some(at("2026-12-02T01:01:10Z")), "older");
    }

    #[test]
    fn a_busy_lock_skips_the_record_but_not_the_answer() {
        let (_root, home) = new_home();
        let now = at("2026-12-02T01:00:00Z");
        let token = add(&home, "alice", quiet(), now).unwrap();
        let before = fs::read(home.tokens_file()).unwrap();
        let held = FileLock::acquire(&home.tokens_lock(), "the tokens lock", quiet()).unwrap();
        let later = at("2026-12-02T02:00:00Z");
        assert_eq!(who(&home, &token, later).as_deref(), Some("alice"));
        assert_eq!(fs::read(home.tokens_file()).unwrap(), before);
        drop(held);
        who(&home, &token, later);
        assert_eq!(list(&home).unwrap()[0].last_used_at, Some(later));
    }

    #[test]
    fn a_login_token_is_replaced_by_the_next_and_removed_alone() {
        let (_root, home) = new_home();
        let now = at("2026-12-02T01:00:00Z");
        let plain = add(&home, "lead", quiet(), now).unwrap();
        let server = presence::announce_server(&home).unwrap();
        let first = add_login(&home, "lead", &server, quiet(), now).unwrap();
        let second = add_login(&home, "lead", &server, quiet(), now).unwrap();
        let who = |token: &str| who(&home, token, now);
        assert_eq!(who(&first), None, "replaced");
        assert_eq!(who(&second).as_deref(), Some("lead"));
        assert_eq!(who(&plain).as_deref(), Some("lead"));
        let logins: Vec<bool> = list(&home).unwrap().iter().map(|row| row.login).collect();
        assert_eq!(logins, [false, true], "the login token after the other");
        remove_login(&home, &server, quiet()).unwrap();
        remove_login(&home, &server, quiet()).unwrap();
        assert_eq!(who(&second), None);
        assert_eq!(who(&plain).as_deref(), Some("lead"));
        assert_eq!(remove(&home, "lead", quiet()).unwrap(), 1);
    }

    #[test]
    fn a_login_token_lives_no_longer_than_its_server() {
        let (_root, home) = new_home();
        let now = at("2026-12-02T01:00:00Z");
        let plain = add(&home, "lead", quiet(), now).unwrap();
        let server = presence::announce_server(&home).unwrap();
        let login = add_login(&home, "lead", &server, quiet(), now).unwrap();
        let Authentication::Accepted(bearer) =
            authenticate(&home, &KeptTokens::default(), &login, now).unwrap()
        else {
            panic!("the login of a running server is accepted");
        };
        assert!(is_current(&home, &KeptTokens::default(), &bearer.token).unwrap());
        assert_eq!(stale_logins(&home).unwrap(), []);

        // The server ends without removing its login (as SIGKILL leaves it).
        let pid = server.pid();
        drop(server);
        assert_eq!(
            authenticate(&home, &KeptTokens::default(), &login, now).unwrap(),
            Authentication::ServerGone
        );
        assert!(!is_current(&home, &KeptTokens::default(), &bearer.token).unwrap());
        assert_eq!(who(&home, &plain, now).as_deref(), Some("lead"));
        let stale = stale_logins(&home).unwrap();
        assert_eq!(stale.len(), 1);
        assert_eq!(
            (stale[0].name.as_str(), stale[0].server_pid),
            ("lead", Some(pid))
        );

        // A login written by a baton that recorded no server is stale too.
        let mut file = load(&home).unwrap();
        let mut unrecorded = StoredToken::new("ann", hex(&[1; 32]), now, Some(1));
        unrecorded.server_pid = None;
        file.tokens.push(unrecorded);
        versioned::save(&home.tokens_file(), &file).unwrap();
        assert_eq!(stale_logins(&home).unwrap().len(), 2);

        assert_eq!(remove_stale_logins(&home, quiet()).unwrap(), 2);
        assert_eq!(stale_logins(&home).unwrap(), []);
        let rows = list(&home).unwrap();
        assert_eq!(rows.len(), 1);
        assert!(!rows[0].login, "the plain token stays");
    }

    #[test]
    fn a_token_replaced_under_the_same_name_is_another_token() {
        let (_root, home) = new_home();
        let now = at("2026-12-02T01:00:00Z");
        let first = add(&home, "dev", quiet(), now).unwrap();
        let Authentication::Accepted(old) =
            authenticate(&home, &KeptTokens::default(), &first, now).unwrap()
        else {
            panic!("accepted");
        };
        remove(&home, "dev", quiet()).unwrap();
        let second = add(&home, "dev", quiet(), now).unwrap();
        let Authentication::Accepted(new) =
            authenticate(&home, &KeptTokens::default(), &second, now).unwrap()
        else {
            panic!("accepted");
        };
        assert_eq!(old.agent, new.agent);
        assert_ne!(old.token, new.token);
        assert!(!is_current(&home, &KeptTokens::default(), &old.token).unwrap());
        assert!(is_current(&home, &KeptTokens::default(), &new.token).unwrap());
    }

    #[test]
    fn list_sorts_by_name_then_login_last() {
        let (_root, home) = new_home();
        let now = at("2026-12-02T01:00:00Z");
        let bob_server = presence::announce_server(&home).unwrap();
        add_login(&home, "bob", &bob_server, quiet(), now).unwrap();
        add(&home, "carol", quiet(), now).unwrap();
        add(&home, "bob", quiet(), now).unwrap();
        // Another server of the same hub, as far as the file can tell.
        let mut file = load(&home).unwrap();
        let alice = StoredToken::new("alice", hex(&[7; 32]), now, Some(bob_server.pid()));
        file.tokens.push(alice);
        versioned::save(&home.tokens_file(), &file).unwrap();
        let order: Vec<(String, bool)> = list(&home)
            .unwrap()
            .into_iter()
            .map(|row| (row.name, row.login))
            .collect();
        let expected = [
            ("alice", true),
            ("bob", false),
            ("bob", true),
            ("carol", false),
        ];
        let expected: Vec<(String, bool)> = expected
            .iter()
            .map(|(name, login)| (name.to_string(), *login))
            .collect();
        assert_eq!(order, expected);
    }

    #[test]
    fn fields_a_newer_baton_wrote_are_kept() {
        let (_root, home) = new_home();
        let token = "baton_written-by-a-newer-baton";
        let hash = hex(&Sha256::digest(token.as_bytes()));
        let text = serde_json::json!({
            "schema": 1,
            "issuer": "hub-7",
            "tokens": [{
                "name": "alice", "hash": hash, "created_at": "2026-12-02T01:00:00.000Z",
                "last_used_at": null, "login": false, "scopes": ["read"]
            }]
        });
        fs::write(home.tokens_file(), text.to_string()).unwrap();
        add(&home, "bob", quiet(), at("2026-12-02T01:00:00Z")).unwrap();
        let now = at("2026-12-02T02:00:00Z");
        assert_eq!(who(&home, token, now).as_deref(), Some("alice"));
        let stored: serde_json::Value =
            serde_json::from_slice(&fs::read(home.tokens_file()).unwrap()).unwrap();
        assert_eq!(stored["issuer"], "hub-7");
        assert_eq!(stored["tokens"][0]["scopes"], serde_json::json!(["read"]));
        assert_eq!(
            stored["tokens"][0]["last_used_at"],
            "2026-12-02T02:00:00.000Z"
        );
        assert_eq!(stored["tokens"][1]["name"], "bob");
    }

    #[test]
    fn an_entry_that_is_no_agent_or_no_digest_is_refused_by_file() {
        let (_root, home) = new_home();
        let token = "baton_x";
        let hash = hex(&Sha256::digest(token.as_bytes()));
        for (name, hash) in [("../etc", hash.as_str()), ("alice", "abc")] {
            let text = serde_json::json!({
                "schema": 1,
                "tokens": [{"name": name, "hash": hash, "created_at": "2026-12-02T01:00:00.000Z"}]
            });
            fs::write(home.tokens_file(), text.to_string()).unwrap();
            let error = authenticate(
                &home,
                &KeptTokens::default(),
                token,
                at("2026-12-02T01:00:00Z"),
            )
            .unwrap_err();
            assert!(
                matches!(&error, Error::Store(StoreError::Corrupt { path, .. }) if *path == home.tokens_file()),
                "{error}"
            );
            assert!(add(&home, "bob", quiet(), at("2026-12-02T01:00:00Z")).is_err());
        }
    }
}
