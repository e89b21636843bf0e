//! Board reads answered from bytes encoded once per version of the board.
//!
//! A board of 1,000 open tasks with 300-byte bodies is some 830 KB of JSON; building its
//! views and encoding them took most of a read's time, again on every read of a board that
//! had not changed (a web board and agents that look often). The server keeps each answer
//! as the bytes it was encoded to, under what it was worked out from:
//! - the board's version ([`Store::board_version`]: the file's stamp on the files, so a
//!   change by a CLI process, another `serve` on the same home, or a hand edit is seen, as
//!   a later store's version will be) and the project's record's (its lease and
//!   coordinator decide what the caller is offered);
//! - the query, and the caller when the answer depends on who asks (`mine`, `offered`);
//! - the time: a working task's lease running out changes what the board shows with no
//!   write at all (it stalls, and the turn passes to its sender), so an answer is good only
//!   until the first such instant ([`crate::board::Board::next_stall_after`]).
//!
//! The versions are taken before the board is read and again after: only an answer whose
//! board was read between two equal versions is kept, so what is kept is never older than
//! the version it is kept under, and a change made at any moment means the next read
//! encodes again. A read still opens the caller's session as before (its token, its right
//! to the project, its heartbeat, the renewal of its leases that are due).
//!
//! An answer carries an `ETag` (a hash of its bytes); a request whose `If-None-Match`
//! names it is answered 304, with no body.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, PoisonError};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::json_api::BoardQuery;
use crate::store::{Document, Store, Version};
use crate::time::Timestamp;

/// The most bytes of answers kept at once, over every project and query: past it, those
/// read longest ago are dropped. Ten boards of 10,000 open tasks with long bodies.
const KEPT_AT_MOST: usize = 96 * 1024 * 1024;

/// What an answer was worked out from, besides the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Versions {
    board: Version,
    project: Option<Version>,
}

impl Versions {
    /// The versions of `project`'s board and record now; `None` when the store cannot tell
    /// the board's, and then nothing is kept.
    pub fn of(store: &dyn Store, project: &str) -> Option<Versions> {
        Some(Versions {
            board: store.board_version(project)?,
            project: store.document_version(&Document::Project(project.to_string())),
        })
    }
}

/// Which answer: the project, the query, and the caller when the answer depends on who
/// asks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    project: String,
    query: BoardQuery,
    caller: Option<String>,
}

impl Key {
    pub fn new(project: &str, query: &BoardQuery, caller: &str) -> Key {
        Key {
            project: project.to_string(),
            query: query.clone(),
            // `mine` picks the caller's tasks and `offered` says what the caller may do;
            // otherwise every caller is shown the same.
            caller: (query.mine || query.offered).then(|| caller.to_string()),
        }
    }
}

/// An answer as encoded, and its entity tag.
#[derive(Debug, Clone)]
pub struct Encoded {
    bytes: Bytes,
    etag: HeaderValue,
}

impl Encoded {
    pub fn new(bytes: Vec<u8>) -> Encoded {
        let mut hasher = std::hash::DefaultHasher::new();
        bytes.hash(&mut hasher);
        let etag = format!("\"{:016x}-{:x}\"", hasher.finish(), bytes.len());
        Encoded {
            etag: HeaderValue::from_str(&etag).expect("hex digits are a header value"),
            bytes: Bytes::from(bytes),
        }
    }

    /// The answer as JSON, or 304 when the request's `If-None-Match` names it already.
    pub fn respond(self, request: &HeaderMap) -> Response {
        let mut response = match is_known(request, &self.etag) {
            true => StatusCode::NOT_MODIFIED.into_response(),
            false => (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                self.bytes,
            )
                .into_response(),
        };
        let headers = response.headers_mut();
        headers.insert(header::ETAG, self.etag);
        // A browser may keep it, and asks each time whether it still holds.
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, no-cache"),
        );
        response
    }
}

/// Whether `If-None-Match` names `etag` (or `*`), compared weakly as RFC 9110 says.
fn is_known(request: &HeaderMap, etag: &HeaderValue) -> bool {
    let Ok(etag) = etag.to_str() else {
        return false;
    };
    request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

struct Kept {
    versions: Versions,
    /// Good until this instant (a lease running out), or for as long as the versions hold.
    until: Option<Timestamp>,
    answer: Encoded,
    /// When it was last used, in reads of this server: the least recent goes first.
    used: u64,
}

/// The answers kept, one per [`Key`].
#[derive(Default)]
pub struct BoardAnswers {
    kept: Mutex<Answers>,
}

#[derive(Default)]
struct Answers {
    by_key: HashMap<Key, Kept>,
    bytes: usize,
    reads: u64,
}

impl std::fmt::Debug for BoardAnswers {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.lock();
        formatter
            .debug_struct("BoardAnswers")
            .field("answers", &kept.by_key.len())
            .field("bytes", &kept.bytes)
            .finish()
    }
}

impl BoardAnswers {
    fn lock(&self) -> std::sync::MutexGuard<'_, Answers> {
        // Every change of the map is one call: it stays whole whatever panicked.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The answer kept for `key` if it was worked out from `versions` and still holds at
    /// `now`.
    pub fn get(&self, key: &Key, versions: Versions, now: Timestamp) -> Option<Encoded> {
        let mut kept = self.lock();
        kept.reads += 1;
        let reads = kept.reads;
        let answer = kept.by_key.get_mut(key)?;
        if answer.versions != versions || answer.until.is_some_and(|until| now >= until) {
            return None;
        }
        answer.used = reads;
        Some(answer.answer.clone())
    }

    /// Keeps `answer` for `key`, worked out from `versions`, good until `until`; it
    /// replaces the one kept before. The least recently used go while the bytes kept are
    /// over [`KEPT_AT_MOST`].
    pub fn keep(&self, key: Key, versions: Versions, until: Option<Timestamp>, answer: Encoded) {
        let size = answer.bytes.len();
        if size > KEPT_AT_MOST {
            return;
        }
        let mut kept = self.lock();
        kept.reads += 1;
        let used = kept.reads;
        if let Some(old) = kept.by_key.insert(
            key,
            Kept {
                versions,
                until,
                answer,
                used,
            },
        ) {
            kept.bytes -= old.answer.bytes.len();
        }
        kept.bytes += size;
        while kept.bytes > KEPT_AT_MOST {
            let Some(oldest) = kept
                .by_key
                .iter()
                .min_by_key(|(_, answer)| answer.used)
                .map(|(key, _)| key.clone())
            else {
                break;
            };
            if let Some(dropped) = kept.by_key.remove(&oldest) {
                kept.bytes -= dropped.answer.bytes.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::cache::Stamp;

    fn versions(dir: &std::path::Path, name: &str) -> Versions {
        let path = dir.join(name);
        std::fs::write(&path, name).unwrap();
        Versions {
            board: Version::File(Stamp::of(&path).unwrap()),
            project: None,
        }
    }

    #[test]
    fn an_answer_is_given_again_only_for_its_versions_and_until_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (versions(dir.path(), "one"), versions(dir.path(), "two"));
        let answers = BoardAnswers::default();
        let key = Key::new("api", &BoardQuery::default(), "codex");
        let now = Timestamp::parse_stored("2026-05-01T10:00:00.000Z").unwrap();
        let later = Timestamp::parse_stored("2026-05-01T10:05:00.000Z").unwrap();
        answers.keep(key.clone(), one, Some(later), Encoded::new(b"[1]".to_vec()));
        let kept = answers.get(&key, one, now).expect("kept");
        assert_eq!(&kept.bytes[..], b"[1]");
        assert!(answers.get(&key, two, now).is_none(), "another version");
        assert!(answers.get(&key, one, later).is_none(), "a lease ran out");
        let other = Key::new("web", &BoardQuery::default(), "codex");
        assert!(answers.get(&other, one, now).is_none(), "another project");
        // Who asks matters only where the answer depends on it.
        assert!(
            answers
                .get(&Key::new("api", &BoardQuery::default(), "alice"), one, now)
                .is_some()
        );
        let mine = BoardQuery {
            mine: true,
            ..BoardQuery::default()
        };
        assert_ne!(
            Key::new("api", &mine, "alice"),
            Key::new("api", &mine, "codex")
        );
    }

    #[test]
    fn the_bytes_kept_stay_under_their_bound_the_least_used_going_first() {
        let dir = tempfile::tempdir().unwrap();
        let one = versions(dir.path(), "one");
        let answers = BoardAnswers::default();
        let now = Timestamp::parse_stored("2026-05-01T10:00:00.000Z").unwrap();
        let big = KEPT_AT_MOST / 3 + 1;
        let key = |project: &str| Key::new(project, &BoardQuery::default(), "codex");
        for project in ["a", "b"] {
            answers.keep(key(project), one, None, Encoded::new(vec![b' '; big]));
        }
        assert!(answers.get(&key("a"), one, now).is_some());
        answers.keep(key("c"), one, None, Encoded::new(vec![b' '; big]));
        assert!(
            answers.get(&key("b"), one, now).is_none(),
            "the least used went"
        );
        assert!(answers.get(&key("a"), one, now).is_some());
        assert!(answers.get(&key("c"), one, now).is_some());
        assert!(answers.lock().bytes <= KEPT_AT_MOST);
    }

    #[test]
    fn if_none_match_of_the_answers_tag_is_304_without_a_body() {
        let answer = Encoded::new(b"[]".to_vec());
        let etag = answer.etag.to_str().unwrap().to_string();
        let mut request = HeaderMap::new();
        assert_eq!(answer.clone().respond(&request).status(), StatusCode::OK);
        for named in [
            etag.clone(),
            format!("W/{etag}"),
            format!("\"other\", {etag}"),
            "*".to_string(),
        ] {
            request.insert(header::IF_NONE_MATCH, named.parse().unwrap());
            let response = answer.clone().respond(&request);
            assert_eq!(response.status(), StatusCode::NOT_MODIFIED, "{named}");
            assert_eq!(response.headers()[header::ETAG], etag.as_str());
        }
        request.insert(header::IF_NONE_MATCH, "\"other\"".parse().unwrap());
        assert_eq!(answer.respond(&request).status(), StatusCode::OK);
    }
}
