//! Timestamps as baton stores them: UTC, RFC 3339, milliseconds, `Z`.
//!
//! The clock is read in one place, [`now`], so tests can pin it with `BATON_NOW`.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A moment in UTC, stored to the millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    pub fn from_datetime(at: DateTime<Utc>) -> Self {
        // Stored values have millisecond precision; keep in-memory values identical so a
        // round trip through the file compares equal.
        let millis = at.timestamp_millis();
        Timestamp(DateTime::from_timestamp_millis(millis).unwrap_or(at))
    }

    pub fn datetime(self) -> DateTime<Utc> {
        self.0
    }

    pub fn plus(self, duration: Duration) -> Self {
        Timestamp(self.0 + duration)
    }

    pub fn minus(self, duration: Duration) -> Self {
        Timestamp(self.0 - duration)
    }

    /// Time elapsed from `self` to `later` (negative when `later` is earlier).
    pub fn until(self, later: Timestamp) -> Duration {
        later.0 - self.0
    }

    /// `YYYY-MM`, the name of the archive file a task finished at this time goes to.
    pub fn month(self) -> String {
        self.0.format("%Y-%m").to_string()
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
    }
}

impl FromStr for Timestamp {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        DateTime::parse_from_rfc3339(text.trim())
            .map(|at| Timestamp::from_datetime(at.with_timezone(&Utc)))
            .map_err(|error| format!("`{text}` is not an RFC 3339 time ({error})"))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The current time, or the time pinned by `BATON_NOW` (for tests and demos).
pub fn now() -> Timestamp {
    if let Ok(pinned) = std::env::var("BATON_NOW")
        && let Ok(at) = pinned.parse()
    {
        return at;
    }
    Timestamp::from_datetime(Utc::now())
}

/// "3m", "2h", "5d": how long ago, for humans.
pub fn age(since: Timestamp, now: Timestamp) -> String {
    let seconds = since.until(now).num_seconds().max(0);
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3_600 => format!("{}m", seconds / 60),
        3_600..86_400 => format!("{}h", seconds / 3_600),
        _ => format!("{}d", seconds / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_milliseconds_and_z() {
        let at: Timestamp = "2026-11-29T19:15:13.123Z".parse().unwrap();
        assert_eq!(at.to_string(), "2026-11-29T19:15:13.123Z");
        let json = serde_json::to_string(&at).unwrap();
        assert_eq!(json, "\"2026-11-29T19:15:13.123Z\"");
        assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), at);
    }

    #[test]
    fn offsets_are_converted_to_utc() {
        let at: Timestamp = "2026-11-29T20:15:13.5+01:00".parse().unwrap();
        assert_eq!(at.to_string(), "2026-11-29T19:15:13.500Z");
    }

    #[test]
    fn ages_read_naturally() {
        let start: Timestamp = "2026-11-29T00:00:00Z".parse().unwrap();
        assert_eq!(age(start, start.plus(Duration::seconds(42))), "42s");
        assert_eq!(age(start, start.plus(Duration::minutes(5))), "5m");
        assert_eq!(age(start, start.plus(Duration::hours(3))), "3h");
        assert_eq!(age(start, start.plus(Duration::days(9))), "9d");
    }
}
