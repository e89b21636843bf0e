//! Login tokens (SPEC section 13): the ones `baton serve` puts in the URL it prints, each good
//! until it has gone unused for its time to live, and at most [`LOGINS_KEPT`] an agent.

use chrono::Duration;

use super::{StoredToken, TokenId, change, load, mint};
use crate::error::Result;
use crate::names::{self, NameKind};
use crate::store::Store;
use crate::time::Timestamp;

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

/// A login token that expired but is still in the file, as `baton doctor` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredLogin {
    pub name: String,
    pub created_at: Timestamp,
    /// When it stopped being good.
    pub expired_at: Timestamp,
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
