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

use crate::error::{Result, TokenError};
use crate::names::{self, NameKind};
use crate::secret::{hex, random_bytes};
use crate::store::versioned::{self, Durability, Kept, Versioned};
use crate::store::{Document, Store, StoreError, Version, Wait};
use crate::time::Timestamp;

mod login;
#[cfg(test)]
mod tests;

pub use login::{
    ExpiredLogin, LOGIN_TTL, LOGIN_TTL_LEAST, LOGIN_TTL_MOST, LOGINS_KEPT, add_login, describe_ttl,
    expired_logins, parse_login_ttl, remove_expired_logins, remove_login,
};

pub const TOKENS_SCHEMA: u32 = 1;

/// What every token starts with, so one found in a log or a paste is recognised as baton's.
pub const TOKEN_PREFIX: &str = "baton_";

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
    origin: &crate::store::Origin,
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
            return Err(TokenError::HasToken {
                agent: name.to_string(),
            }
            .into());
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

/// Removes every token of `name`, its login tokens included; how many there were. Refused,
/// naming the agents that have tokens, when it has none.
pub fn remove(store: &dyn Store, name: &str) -> Result<usize> {
    names::check(NameKind::Agent, name)?;
    change(store, |file| {
        let before = file.tokens.len();
        file.tokens.retain(|stored| stored.name != name);
        let removed = before - file.tokens.len();
        if removed == 0 {
            let mut holders: Vec<String> = file
                .tokens
                .iter()
                .map(|stored| stored.name.clone())
                .collect();
            holders.sort_unstable();
            holders.dedup();
            return Err(TokenError::NoToken {
                agent: name.to_string(),
                holders,
            }
            .into());
        }
        Ok(removed)
    })
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

    /// [`KeptTokens::load`], given the tokens' version as just read.
    fn load_at(&self, store: &dyn Store, version: Option<Version>) -> Result<Arc<TokensFile>> {
        self.0
            .get_at(version, &Document::Tokens, || load(store).map(Arc::new))
    }

    /// The agent the token `presented` acted as when the tokens were last read, read no
    /// more: a guess at whom a request acts as, for what is read with the tokens' version
    /// ([`authenticate_at`] is the check).
    pub fn last_agent_of(&self, presented: &str) -> Option<String> {
        let file = self.0.last(&Document::Tokens)?;
        let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        find(&file, &presented).map(|stored| stored.name.clone())
    }
}

/// The entry of `file` whose hash is the digest `presented`, every entry compared in
/// constant time (the loop never stops at a match, so how long it takes tells nothing
/// about the tokens).
fn find<'a>(file: &'a TokensFile, presented: &[u8; 32]) -> Option<&'a StoredToken> {
    let mut found: Option<&StoredToken> = None;
    for stored in &file.tokens {
        // `load` checked every hash, so each decodes.
        let is_match =
            decode_digest(&stored.hash).is_some_and(|digest| is_same_digest(&digest, presented));
        if is_match && found.is_none() {
            found = Some(stored);
        }
    }
    found
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
    let version = store.document_version(&Document::Tokens);
    authenticate_at(store, kept, presented, now, version)
}

/// [`authenticate`], given the tokens' version as just read (`version`, with what a
/// request reads besides: [`crate::store::Documents::version_and_texts`]): the tokens are
/// read again only when they are not that version.
pub fn authenticate_at(
    store: &dyn Store,
    kept: &KeptTokens,
    presented: &str,
    now: Timestamp,
    version: Option<Version>,
) -> Result<Authentication> {
    let file = kept.load_at(store, version)?;
    let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
    let Some(stored) = find(&file, &presented) else {
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
fn check(origin: &crate::store::Origin, file: &TokensFile) -> Result<()> {
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
            return Err(StoreError::corrupt(origin)(detail).into());
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
