//! The tokens of `baton serve` (SPEC section 12): each is the identity of the agent a request
//! acts as. `tokens.json` keeps only the SHA-256 of each token, so the token string is in no
//! file: [`add`] hands it out once and nothing can show it again.
//!
//! Every change is a locked read-change-write of the whole file under `tokens.lock`; fields a
//! newer baton wrote are kept as they are. [`authenticate`] looks at the file on every call
//! (what it parsed is kept in [`KeptTokens`] only until the file changes), so a token
//! removed by `baton token rm` stops working at the next request.
//!
//! A login token (the one `baton serve` puts in the URL it prints, SPEC section 13) lasts
//! until it has gone unused for its time to live ([`LOGIN_TTL`] unless `serve --login-ttl`
//! says otherwise), written beside it. It is tied to no process: a `serve` restarted on the
//! same home takes the logins of the one before, so a restart logs no browser out. Each
//! start makes one more, so a start also drops the logins that expired and keeps at most
//! [`LOGINS_KEPT`] per agent; `baton doctor` points at expired ones until then.

use std::sync::Arc;

use chrono::Duration;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::names::{self, NameKind};
use crate::secret::{hex, random_bytes};
use crate::store::versioned::{self, Durability, Kept, Versioned};
use crate::store::{Document, Store, StoreError, Wait};
use crate::time::Timestamp;

pub const TOKENS_SCHEMA: u32 = 1;

/// What every token starts with, so one found in a log or a paste is recognised as baton's.
pub const TOKEN_PREFIX: &str = "baton_";

/// A token's `last_used_at` is written at most this often, so a busy server does not
/// rewrite `tokens.json` on every request.
pub const LAST_USE_EVERY: Duration = Duration::minutes(1);

/// How long a login token lasts unused, unless `baton serve --login-ttl` says otherwise
/// (SPEC section 13): a working day and a night's sleep away from the board.
pub const LOGIN_TTL: Duration = Duration::hours(12);

/// The longest and shortest `--login-ttl` taken: a login that never expires is a token
/// (`baton token add`), and one shorter than a second could not survive its first page.
pub const LOGIN_TTL_MOST: Duration = Duration::days(365);
pub const LOGIN_TTL_LEAST: Duration = Duration::seconds(1);

/// How many live login tokens an agent keeps: every start of `baton serve` makes one, and a
/// server restarted over and over must not grow `tokens.json` without end. Past this the
/// login used longest ago goes.
pub const LOGINS_KEPT: usize = 10;

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

impl TokenId {
    /// The token as a store records it beside what lasts as long as it (an MCP session):
    /// its hash.
    pub fn as_stored(&self) -> &str {
        &self.0
    }

    /// The token a store recorded as [`TokenId::as_stored`] gave it.
    pub fn from_stored(hash: String) -> TokenId {
        TokenId(hash)
    }
}

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
    /// A login token unused for longer than its time to live (`None`: a login written by a
    /// baton whose logins ended with their server, which this one cannot vouch for).
    Expired { ttl: Option<Duration> },
}

/// A login token that expired but is still in the file, as `baton doctor` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredLogin {
    pub name: String,
    pub created_at: Timestamp,
    /// When it stopped being good.
    pub expired_at: Timestamp,
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

/// `text`, the tokens kept at `origin`, as a copy to another store compares two stores'
/// tokens (SPEC section 16): the tokens a user made, without what a hub writes of its own
/// as it serves (its login tokens, made at each start and dropped as they expire, and when
/// each token was last used), in the order of their hashes. Refused as the read of the
/// tokens refuses it when it does not read.
pub fn as_compared(
    origin: &std::path::Path,
    text: &[u8],
) -> std::result::Result<Vec<u8>, StoreError> {
    let mut file: TokensFile = versioned::decode(origin, text)?;
    file.tokens.retain(|token| !token.login);
    for token in &mut file.tokens {
        token.last_used_at = None;
    }
    file.tokens.sort_by(|one, other| one.hash.cmp(&other.hash));
    versioned::text_of(origin, &file)
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
    /// For a login token, how many seconds it lasts unused. A login without one was
    /// written by a baton whose logins lived only as long as their server (its `server_pid`
    /// stays among `other`): it counts as expired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ttl_seconds: Option<u64>,
    /// Fields written by a newer (or an older) baton: kept, never dropped.
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
    /// A token of `name`; a login token when it has a time to live.
    fn new(name: &str, hash: String, now: Timestamp, ttl: Option<Duration>) -> Self {
        StoredToken {
            name: name.to_string(),
            hash,
            created_at: now,
            last_used_at: None,
            login: ttl.is_some(),
            ttl_seconds: ttl.map(|ttl| ttl.num_seconds().max(0).unsigned_abs()),
            other: serde_json::Map::new(),
        }
    }

    /// A login token's time to live; `None` for another token, and for a login that has
    /// none recorded.
    fn ttl(&self) -> Option<Duration> {
        let seconds = i64::try_from(self.ttl_seconds?).ok()?;
        self.login.then(|| Duration::seconds(seconds))
    }

    /// When it was last used, as far as the file knows.
    fn last_touched(&self) -> Timestamp {
        self.last_used_at.unwrap_or(self.created_at)
    }

    /// When a login token stops being good; `None` for a token that never expires.
    fn expires_at(&self) -> Option<Timestamp> {
        if !self.login {
            return None;
        }
        Some(match self.ttl() {
            Some(ttl) => self.last_touched().plus(ttl),
            None => self.created_at,
        })
    }

    /// Whether it is a login token past its time at `now`.
    fn is_expired(&self, now: Timestamp) -> bool {
        self.expires_at().is_some_and(|expiry| expiry <= now)
    }

    /// Whether `last_used_at` is old enough to be written again at `now`; a clock that went
    /// back never moves it back. A login is recorded at least ten times within its time to
    /// live, so that what the file says of its last use is never far behind.
    fn is_use_due(&self, now: Timestamp) -> bool {
        let every = match self.ttl() {
            Some(ttl) => LAST_USE_EVERY.min(ttl / 10),
            None => LAST_USE_EVERY,
        };
        self.last_used_at
            .is_none_or(|last| last.until(now) >= every)
    }
}

/// A new token for the agent `name`, which may have one besides its login tokens. Refused
/// while it has one: a second would be a second secret for the same identity that nobody
/// remembers handing out.
pub fn add(store: &dyn Store, name: &str, now: Timestamp) -> Result<String> {
    names::check(NameKind::Agent, name)?;
    let (token, hash) = mint()?;
    change(store, |file| {
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
    // A token is an agent's identity, so the agent is on the hub from now on: sends to it
    // are taken and its listener is answered even before it has acted (its first contact
    // may well be `baton listen`, which looks on its behalf and so registers nobody).
    crate::registry::add(
        store,
        name,
        now,
        &crate::registry::Profile::default(),
        crate::registry::WakeCommandChange::Keep,
    )?;
    Ok(token)
}

/// A new login token for `name` (the one `baton serve` puts in the URL it prints), good
/// until it has gone unused for `ttl`. The logins made before it stay good (a restarted
/// server logs no browser out) unless they expired, which go on the way, or `name` has more
/// than [`LOGINS_KEPT`], of which the ones used longest ago go. Other tokens are kept.
pub fn add_login(store: &dyn Store, name: &str, ttl: Duration, now: Timestamp) -> Result<String> {
    names::check(NameKind::Agent, name)?;
    let (token, hash) = mint()?;
    change(store, |file| {
        file.tokens.retain(|stored| !stored.is_expired(now));
        file.tokens
            .push(StoredToken::new(name, hash, now, Some(ttl)));
        let mut logins: Vec<(Timestamp, String)> = file
            .tokens
            .iter()
            .filter(|stored| stored.login && stored.name == name)
            .map(|stored| (stored.last_touched(), stored.hash.clone()))
            .collect();
        if logins.len() > LOGINS_KEPT {
            // The most recently used first; the new one is among them, used at `now`.
            logins.sort_by_key(|(touched, _)| std::cmp::Reverse(*touched));
            let dropped: Vec<String> = logins
                .split_off(LOGINS_KEPT)
                .into_iter()
                .map(|(_, hash)| hash)
                .collect();
            file.tokens.retain(|stored| !dropped.contains(&stored.hash));
        }
        Ok(())
    })?;
    Ok(token)
}

/// Removes every token of `name`, its login tokens included; how many there were. Refused,
/// naming the agents that have tokens, when it has none.
pub fn remove(store: &dyn Store, name: &str) -> Result<usize> {
    names::check(NameKind::Agent, name)?;
    change(store, |file| {
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

/// Removes the login token `token`, as a browser logging out asks; whether it was there. A
/// token that is not a login is kept: it is an agent's, which the page only borrowed.
pub fn remove_login(store: &dyn Store, token: &TokenId) -> Result<bool> {
    change(store, |file| {
        let before = file.tokens.len();
        file.tokens
            .retain(|stored| !(stored.login && stored.hash == token.0));
        Ok(file.tokens.len() < before)
    })
}

/// Removes every login token that expired by `now` (see [`expired_logins`]); how many
/// there were. What a starting `baton serve` does first.
pub fn remove_expired_logins(store: &dyn Store, now: Timestamp) -> Result<usize> {
    change(store, |file| {
        let before = file.tokens.len();
        file.tokens.retain(|stored| !stored.is_expired(now));
        Ok(before - file.tokens.len())
    })
}

/// The login tokens that expired by `now` and are still in the file. They are refused
/// already; this is for `baton doctor` to say so.
pub fn expired_logins(store: &dyn Store, now: Timestamp) -> Result<Vec<ExpiredLogin>> {
    Ok(load(store)?
        .tokens
        .into_iter()
        .filter(|stored| stored.is_expired(now))
        .filter_map(|stored| {
            Some(ExpiredLogin {
                expired_at: stored.expires_at()?,
                name: stored.name,
                created_at: stored.created_at,
            })
        })
        .collect())
}

/// Every token, sorted by name, a name's login tokens after its other one (the one used
/// last first).
pub fn list(store: &dyn Store) -> Result<Vec<TokenRow>> {
    let mut rows: Vec<TokenRow> = load(store)?
        .tokens
        .into_iter()
        .map(|stored| TokenRow {
            name: stored.name,
            created_at: stored.created_at,
            last_used_at: stored.last_used_at,
            login: stored.login,
        })
        .collect();
    rows.sort_by(|left, right| {
        let last = |row: &TokenRow| std::cmp::Reverse(row.last_used_at.unwrap_or(row.created_at));
        (&left.name, left.login, last(left)).cmp(&(&right.name, right.login, last(right)))
    });
    Ok(rows)
}

/// The tokens as [`authenticate`] and [`is_current`] read them: parsed again only when they
/// changed since the last call (a server asks on every request).
#[derive(Debug, Default)]
pub struct KeptTokens(Kept<Arc<TokensFile>>);

impl KeptTokens {
    fn load(&self, store: &dyn Store) -> Result<Arc<TokensFile>> {
        self.0
            .get(store, &Document::Tokens, || load(store).map(Arc::new))
    }
}

/// Whom the token `presented` acts as, if it is a token of this hub that is good now.
///
/// Looks at `tokens.json` on every call, so a removed token fails at the next request. The
/// SHA-256 of `presented` is compared with every entry's in constant time, and the loop
/// never stops at a match, so how long it takes tells nothing about the tokens. A login
/// token is good until it has gone unused for its time to live. A match records
/// `last_used_at` when it is due ([`LAST_USE_EVERY`], more often for a short-lived login);
/// the record never waits for the lock (another process holding it skips the record, and
/// the next request due makes it).
pub fn authenticate(
    store: &dyn Store,
    kept: &KeptTokens,
    presented: &str,
    now: Timestamp,
) -> Result<Authentication> {
    let file = kept.load(store)?;
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
    if stored.is_expired(now) {
        return Ok(Authentication::Expired { ttl: stored.ttl() });
    }
    if stored.is_use_due(now) {
        record_use(store, &stored.hash, now)?;
    }
    Ok(Authentication::Accepted(Bearer {
        agent: stored.name.clone(),
        token: TokenId(stored.hash.clone()),
    }))
}

/// Whether the token `token` is still good now: not removed (nor replaced), and, for a
/// login token, not expired. What a long-lived answer (an event stream, an MCP session)
/// asks again while it lasts.
pub fn is_current(store: &dyn Store, kept: &KeptTokens, token: &TokenId) -> Result<bool> {
    is_current_at(store, kept, token, crate::time::now())
}

/// [`is_current`] at `now`.
pub fn is_current_at(
    store: &dyn Store,
    kept: &KeptTokens,
    token: &TokenId,
    now: Timestamp,
) -> Result<bool> {
    let file = kept.load(store)?;
    Ok(file
        .tokens
        .iter()
        .find(|stored| stored.hash == token.0)
        .is_some_and(|stored| !stored.is_expired(now)))
}

/// A time to live as `--login-ttl` takes it ([`crate::time::parse_duration`]: `90s`, `30m`,
/// `12h`, `7d`), from [`LOGIN_TTL_LEAST`] to [`LOGIN_TTL_MOST`].
pub fn parse_login_ttl(text: &str) -> std::result::Result<Duration, String> {
    let ttl = crate::time::parse_duration(text)?;
    if ttl < LOGIN_TTL_LEAST || ttl > LOGIN_TTL_MOST {
        return Err(format!(
            "a login's time to live is from {} to {}, not {}",
            describe_ttl(LOGIN_TTL_LEAST),
            describe_ttl(LOGIN_TTL_MOST),
            crate::text::inline(text.trim())
        ));
    }
    Ok(ttl)
}

/// A time to live in the largest unit that says it exactly: `12h`, `90s`, `7d`.
pub fn describe_ttl(ttl: Duration) -> String {
    crate::time::describe_duration(ttl)
}

/// Writes `now` as the last use of the token whose hash is `hash`, if the lock is free and
/// the record is still due under it.
fn record_use(store: &dyn Store, hash: &str, now: Timestamp) -> Result<()> {
    versioned::update_with(
        store,
        &Document::Tokens,
        Wait::Never,
        |stored| -> Result<_> {
            let Some(file) = stored else {
                return Ok(((), Durability::Durable));
            };
            check(&store.document_origin(&Document::Tokens), file)?;
            // Gone when `baton token rm` removed it since it was read: nothing to record.
            if let Some(stored) = file.tokens.iter_mut().find(|stored| stored.hash == hash)
                && stored.is_use_due(now)
            {
                stored.last_used_at = Some(now);
            }
            Ok(((), Durability::Durable))
        },
    )?;
    Ok(())
}

/// Reads the tokens (none yet is an empty file), refusing a file whose entries would make
/// a request act as a name that is not an agent's, or whose hashes are not SHA-256 digests.
fn load(store: &dyn Store) -> Result<TokensFile> {
    let file: TokensFile = versioned::read(store, &Document::Tokens)?.unwrap_or_default();
    check(&store.document_origin(&Document::Tokens), &file)?;
    Ok(file)
}

/// Refuses `file` (read from `origin`) when an entry would make a request act as a name
/// that is not an agent's, or its hash is not a SHA-256 digest.
fn check(origin: &std::path::Path, file: &TokensFile) -> Result<()> {
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
            return Err(StoreError::Corrupt {
                path: origin.to_path_buf(),
                detail,
            }
            .into());
        }
    }
    Ok(())
}

/// A locked read-change-write of the tokens; written only when `change` changed them.
fn change<T>(store: &dyn Store, change: impl FnOnce(&mut TokensFile) -> Result<T>) -> Result<T> {
    let origin = store.document_origin(&Document::Tokens);
    versioned::update(
        store,
        &Document::Tokens,
        |stored: &mut Option<TokensFile>| {
            let was_there = stored.is_some();
            let file = stored.get_or_insert_with(TokensFile::default);
            check(&origin, file)?;
            let result = change(file)?;
            // No file yet and nothing to keep: none is made.
            if !was_there && *file == TokensFile::default() {
                *stored = None;
            }
            Ok(result)
        },
    )
}

/// A new token and the hash to store for it.
fn mint() -> Result<(String, String)> {
    let bytes = random_bytes("a token")?;
    let token = format!("{TOKEN_PREFIX}{}", hex(&bytes));
    let hash = hex(&Sha256::digest(token.as_bytes()));
    Ok((token, hash))
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
    use crate::secret::SECRET_BYTES;

    use crate::file::lock::{FileLock, LockPolicy};
    use crate::home::Home;
    use crate::store::files::FileStore;

    fn quiet() -> LockPolicy {
        LockPolicy::silent(std::time::Duration::from_secs(5))
    }

    fn store_at(root: &std::path::Path) -> FileStore {
        FileStore::new(Home::new(root.to_path_buf()), quiet())
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn new_home() -> (tempfile::TempDir, FileStore) {
        let root = tempfile::tempdir().unwrap();
        let home = store_at(root.path());
        (root, home)
    }

    /// The agent `presented` acts as at `now`, if it is accepted.
    fn who(home: &dyn Store, presented: &str, now: Timestamp) -> Option<String> {
        match authenticate(home, &KeptTokens::default(), presented, now).unwrap() {
            Authentication::Accepted(bearer) => Some(bearer.agent),
            Authentication::Unknown | Authentication::Expired { .. } => None,
        }
    }

    #[test]
    fn kept_tokens_follow_every_change_of_the_file() {
        let root = tempfile::tempdir().unwrap();
        let home = store_at(root.path());
        let now = at("2026-12-02T01:00:00Z");
        let kept = KeptTokens::default();
        let first = add(&home, "codex", now).unwrap();
        let Authentication::Accepted(bearer) = authenticate(&home, &kept, &first, now).unwrap()
        else {
            panic!("a token just made is accepted");
        };
        assert!(is_current(&home, &kept, &bearer.token).unwrap());
        remove(&home, "codex").unwrap();
        assert!(matches!(
            authenticate(&home, &kept, &first, now).unwrap(),
            Authentication::Unknown
        ));
        assert!(!is_current(&home, &kept, &bearer.token).unwrap());
        let second = add(&home, "codex", now).unwrap();
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
        assert_eq!(random.len(), 2 * SECRET_BYTES);
        assert!(decode_digest(random).is_some(), "{random} is hex");
        assert_eq!(first_hash, hex(&Sha256::digest(first.as_bytes())));
    }

    #[test]
    fn a_match_records_its_last_use_at_most_once_a_minute_and_never_back() {
        let (_root, home) = new_home();
        let start = at("2026-12-02T01:00:00Z");
        let token = add(&home, "alice", start).unwrap();
        let last_used = |home: &dyn Store| list(home).unwrap()[0].last_used_at;
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
        let token = add(&home, "alice", now).unwrap();
        let before = fs::read(home.home().tokens_file()).unwrap();
        let held =
            FileLock::acquire(&home.home().tokens_lock(), "the tokens lock", quiet()).unwrap();
        let later = at("2026-12-02T02:00:00Z");
        assert_eq!(who(&home, &token, later).as_deref(), Some("alice"));
        assert_eq!(fs::read(home.home().tokens_file()).unwrap(), before);
        drop(held);
        who(&home, &token, later);
        assert_eq!(list(&home).unwrap()[0].last_used_at, Some(later));
    }

    #[test]
    fn a_login_token_lasts_its_time_unused_and_each_use_moves_the_end() {
        let (_root, home) = new_home();
        let start = at("2026-12-02T01:00:00Z");
        let login = add_login(&home, "lead", Duration::hours(12), start).unwrap();
        let check =
            |now: &str| authenticate(&home, &KeptTokens::default(), &login, at(now)).unwrap();
        let accepted = |now: &str| matches!(check(now), Authentication::Accepted(_));
        assert!(accepted("2026-12-02T12:59:59Z"), "just within 12 hours");
        // That use moved the end to 12 hours after it.
        assert!(accepted("2026-12-03T00:59:00Z"));
        assert_eq!(
            check("2026-12-03T12:59:00Z"),
            Authentication::Expired {
                ttl: Some(Duration::hours(12))
            }
        );
        let Authentication::Accepted(bearer) = check("2026-12-03T00:59:30Z") else {
            panic!("still good");
        };
        let kept = KeptTokens::default();
        assert!(is_current_at(&home, &kept, &bearer.token, at("2026-12-03T12:00:00Z")).unwrap());
        assert!(!is_current_at(&home, &kept, &bearer.token, at("2026-12-03T13:00:00Z")).unwrap());
        assert_eq!(
            expired_logins(&home, at("2026-12-03T13:00:00Z")).unwrap(),
            [ExpiredLogin {
                name: "lead".into(),
                created_at: start,
                // The use at 00:59:30 came within a minute of the one recorded: not written.
                expired_at: at("2026-12-03T12:59:00Z"),
            }]
        );
        assert_eq!(
            remove_expired_logins(&home, at("2026-12-03T13:00:00Z")).unwrap(),
            1
        );
        assert_eq!(list(&home).unwrap(), []);
    }

    #[test]
    fn a_short_lived_login_records_its_use_often_enough_to_stay_alive() {
        let (_root, home) = new_home();
        let start = at("2026-12-02T01:00:00Z");
        let login = add_login(&home, "lead", Duration::seconds(10), start).unwrap();
        // Used every 4 seconds for a minute: never 10 seconds unused, so never refused,
        // though a minute passes (the plain tokens' record interval).
        for second in (4..=60).step_by(4) {
            let now = start.plus(Duration::seconds(second));
            assert!(
                matches!(
                    authenticate(&home, &KeptTokens::default(), &login, now).unwrap(),
                    Authentication::Accepted(_)
                ),
                "refused {second}s in"
            );
        }
        let unused = start.plus(Duration::seconds(60 + 11));
        assert!(matches!(
            authenticate(&home, &KeptTokens::default(), &login, unused).unwrap(),
            Authentication::Expired { .. }
        ));
    }

    #[test]
    fn logins_outlive_the_next_one_but_not_their_time_and_only_ten_are_kept() {
        let (_root, home) = new_home();
        let start = at("2026-12-02T01:00:00Z");
        let ttl = Duration::hours(12);
        let plain = add(&home, "lead", start).unwrap();
        let first = add_login(&home, "lead", ttl, start).unwrap();
        let other = add_login(&home, "ann", ttl, start).unwrap();
        // Another start of the server an hour later: the first login stays good.
        let hour = start.plus(Duration::hours(1));
        let second = add_login(&home, "lead", ttl, hour).unwrap();
        for token in [&first, &second, &plain] {
            assert_eq!(who(&home, token, hour).as_deref(), Some("lead"));
        }
        // The second is used again later; the first is not.
        let six = start.plus(Duration::hours(6));
        assert_eq!(who(&home, &second, six).as_deref(), Some("lead"));
        // A start after the first expired drops it from the file.
        let later = start.plus(Duration::minutes(13 * 60 + 30));
        add_login(&home, "lead", ttl, later).unwrap();
        assert_eq!(
            list(&home).unwrap().iter().filter(|row| row.login).count(),
            2,
            "the first login and ann's are gone, the second and the new one stay"
        );
        assert_eq!(who(&home, &other, later), None);
        assert_eq!(who(&home, &second, later).as_deref(), Some("lead"));

        // Restarts without end keep ten logins of lead, the ones used last.
        let mut made = Vec::new();
        for minute in 0..15 {
            let now = later.plus(Duration::minutes(minute));
            made.push(add_login(&home, "lead", ttl, now).unwrap());
        }
        let rows = list(&home).unwrap();
        assert_eq!(rows.iter().filter(|row| row.login).count(), LOGINS_KEPT);
        let now = later.plus(Duration::minutes(20));
        assert_eq!(who(&home, &made[4], now), None, "used longest ago");
        assert_eq!(who(&home, &made[5], now).as_deref(), Some("lead"));
        assert_eq!(who(&home, &plain, now).as_deref(), Some("lead"));
        // `rm` takes them all, the plain token too.
        assert_eq!(remove(&home, "lead").unwrap(), LOGINS_KEPT + 1);
    }

    #[test]
    fn logging_out_removes_that_login_alone() {
        let (_root, home) = new_home();
        let now = at("2026-12-02T01:00:00Z");
        let plain = add(&home, "lead", now).unwrap();
        let first = add_login(&home, "lead", LOGIN_TTL, now).unwrap();
        let second = add_login(&home, "lead", LOGIN_TTL, now).unwrap();
        let bearer =
            |token: &str| match authenticate(&home, &KeptTokens::default(), token, now).unwrap() {
                Authentication::Accepted(bearer) => bearer,
                other => panic!("{other:?}"),
            };
        let (first_id, plain_id) = (bearer(&first).token, bearer(&plain).token);
        assert!(remove_login(&home, &first_id).unwrap());
        assert!(!remove_login(&home, &first_id).unwrap(), "gone already");
        assert!(!remove_login(&home, &plain_id).unwrap(), "not a login");
        assert_eq!(who(&home, &first, now), None);
        assert_eq!(who(&home, &second, now).as_deref(), Some("lead"));
        assert_eq!(who(&home, &plain, now).as_deref(), Some("lead"));
    }

    #[test]
    fn a_login_from_a_baton_whose_logins_died_with_their_server_is_expired() {
        let (_root, home) = new_home();
        let token = "baton_from-an-older-serve";
        let hash = hex(&Sha256::digest(token.as_bytes()));
        let text = serde_json::json!({
            "schema": 1,
            "tokens": [{
                "name": "alice", "hash": hash, "created_at": "2026-12-02T01:00:00.000Z",
                "last_used_at": null, "login": true, "server_pid": 4242
            }]
        });
        fs::write(home.home().tokens_file(), text.to_string()).unwrap();
        let now = at("2026-12-02T01:00:01Z");
        assert_eq!(
            authenticate(&home, &KeptTokens::default(), token, now).unwrap(),
            Authentication::Expired { ttl: None }
        );
        assert_eq!(expired_logins(&home, now).unwrap().len(), 1);
        assert_eq!(remove_expired_logins(&home, now).unwrap(), 1);
    }

    #[test]
    fn a_time_to_live_is_a_number_and_a_unit_within_bounds() {
        for (text, seconds) in [
            ("90s", 90),
            ("30m", 1_800),
            ("12h", 43_200),
            ("7d", 604_800),
            (" 1s ", 1),
            ("365d", 31_536_000),
        ] {
            assert_eq!(
                parse_login_ttl(text),
                Ok(Duration::seconds(seconds)),
                "{text}"
            );
        }
        for text in [
            "",
            "12",
            "h",
            "12 h",
            "1.5h",
            "-1h",
            "12H",
            "0s",
            "366d",
            "9999999999999999999d",
            "1h30m",
        ] {
            assert!(parse_login_ttl(text).is_err(), "{text}");
        }
        for (seconds, words) in [
            (43_200, "12h"),
            (90, "90s"),
            (1_800, "30m"),
            (604_800, "7d"),
            (0, "0s"),
        ] {
            assert_eq!(describe_ttl(Duration::seconds(seconds)), words);
            if seconds > 0 {
                assert_eq!(parse_login_ttl(words), Ok(Duration::seconds(seconds)));
            }
        }
    }

    #[test]
    fn a_token_replaced_under_the_same_name_is_another_token() {
        let (_root, home) = new_home();
        let now = at("2026-12-02T01:00:00Z");
        let first = add(&home, "dev", now).unwrap();
        let Authentication::Accepted(old) =
            authenticate(&home, &KeptTokens::default(), &first, now).unwrap()
        else {
            panic!("accepted");
        };
        remove(&home, "dev").unwrap();
        let second = add(&home, "dev", now).unwrap();
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
        add_login(&home, "bob", LOGIN_TTL, now).unwrap();
        add(&home, "carol", now).unwrap();
        add(&home, "bob", now).unwrap();
        add_login(&home, "alice", LOGIN_TTL, now).unwrap();
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
        fs::write(home.home().tokens_file(), text.to_string()).unwrap();
        add(&home, "bob", at("2026-12-02T01:00:00Z")).unwrap();
        let now = at("2026-12-02T02:00:00Z");
        assert_eq!(who(&home, token, now).as_deref(), Some("alice"));
        let stored: serde_json::Value =
            serde_json::from_slice(&fs::read(home.home().tokens_file()).unwrap()).unwrap();
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
            fs::write(home.home().tokens_file(), text.to_string()).unwrap();
            let error = authenticate(
                &home,
                &KeptTokens::default(),
                token,
                at("2026-12-02T01:00:00Z"),
            )
            .unwrap_err();
            assert!(
                matches!(&error, Error::Store(StoreError::Corrupt { path, .. }) if *path == home.home().tokens_file()),
                "{error}"
            );
            assert!(add(&home, "bob", at("2026-12-02T01:00:00Z")).is_err());
        }
    }
}
