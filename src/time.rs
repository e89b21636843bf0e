//! Timestamps as baton stores them: UTC, RFC 3339, milliseconds, `Z`.
//!
//! The clock is read in one place, [`now`], so tests can pin it with `BATON_NOW`.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A moment in UTC, stored to the millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    /// 1970-01-01T00:00:00Z, a placeholder before a real time is read.
    pub const EPOCH: Timestamp = Timestamp(DateTime::UNIX_EPOCH);

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

impl Timestamp {
    /// The stored form, `2026-11-29T19:15:13.123Z`, written by hand: a board holds four
    /// timestamps a task, and the general formatter was a tenth of the cost of a write.
    fn to_stored(self) -> [u8; 24] {
        let at = self.0;
        let (date, time) = (at.date_naive(), at.time());
        let year = date.year().clamp(0, 9999) as u32;
        let millis = at.timestamp_subsec_millis().min(999);
        let mut out = *b"0000-00-00T00:00:00.000Z";
        let mut put = |position: usize, width: usize, mut value: u32| {
            for index in (position..position + width).rev() {
                out[index] = b'0' + (value % 10) as u8;
                value /= 10;
            }
        };
        put(0, 4, year);
        put(5, 2, date.month());
        put(8, 2, date.day());
        put(11, 2, time.hour());
        put(14, 2, time.minute());
        put(17, 2, time.second().min(59));
        put(20, 3, millis);
        out
    }

    /// Reads a stored time: the form baton writes quickly, any other RFC 3339 time the
    /// general way.
    pub fn parse_stored(text: &str) -> Result<Self, String> {
        match Timestamp::from_stored(text) {
            Some(at) => Ok(at),
            None => text.parse(),
        }
    }

    /// Reads exactly the stored form without the general RFC 3339 parser; `None` for
    /// anything else, which then goes the general way.
    fn from_stored(text: &str) -> Option<Self> {
        Timestamp::from_stored_bytes(text.as_bytes())
    }

    /// As [`Timestamp::parse_stored`], for the stored form only, from bytes.
    pub fn from_stored_bytes(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != 24
            || bytes[4] != b'-'
            || bytes[7] != b'-'
            || bytes[10] != b'T'
            || bytes[13] != b':'
            || bytes[16] != b':'
            || bytes[19] != b'.'
            || bytes[23] != b'Z'
        {
            return None;
        }
        let number = |range: std::ops::Range<usize>| -> Option<u32> {
            bytes[range].iter().try_fold(0u32, |value, &byte| {
                byte.is_ascii_digit()
                    .then(|| value * 10 + u32::from(byte - b'0'))
            })
        };
        let date = NaiveDate::from_ymd_opt(number(0..4)? as i32, number(5..7)?, number(8..10)?)?;
        let time = NaiveTime::from_hms_milli_opt(
            number(11..13)?,
            number(14..16)?,
            number(17..19)?,
            number(20..23)?,
        )?;
        Some(Timestamp(date.and_time(time).and_utc()))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let stored = self.to_stored();
        // The buffer holds only ASCII digits and separators.
        serializer.serialize_str(std::str::from_utf8(&stored).unwrap_or_default())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Timestamp;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an RFC 3339 time")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Timestamp, E> {
                Timestamp::parse_stored(text).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
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

/// The time of `at` on the clock of this machine's zone, as a screen with little room
/// shows it: `14:03:11` on the day of `now`, `2026-12-06 14:03` on any other day.
pub fn clock(at: Timestamp, now: Timestamp) -> String {
    clock_in(at, now, &chrono::Local)
}

/// [`clock`] in the zone `zone`.
pub fn clock_in<Zone: chrono::TimeZone>(at: Timestamp, now: Timestamp, zone: &Zone) -> String
where
    Zone::Offset: fmt::Display,
{
    let local = at.0.with_timezone(zone);
    if local.date_naive() == now.0.with_timezone(zone).date_naive() {
        local.format("%H:%M:%S").to_string()
    } else {
        local.format("%Y-%m-%d %H:%M").to_string()
    }
}

/// A length of time as the command line takes one: a whole number and a unit, `90s`, `30m`,
/// `12h` or `7d` (`--login-ttl`, `project set --lease`). Each caller bounds it.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let refused = || {
        format!(
            "`{}` is not a length of time: give a number and a unit, e.g. 90s, 30m, 12h or 7d",
            crate::text::inline(text)
        )
    };
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(refused)?;
    let (number, unit) = text.split_at(split);
    let number: i64 = number.parse().map_err(|_| refused())?;
    let seconds_per = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(refused()),
    };
    number
        .checked_mul(seconds_per)
        .and_then(Duration::try_seconds)
        .ok_or_else(refused)
}

/// A length of time in the largest unit that says it exactly: `12h`, `90s`, `7d`.
pub fn describe_duration(length: Duration) -> String {
    let seconds = length.num_seconds();
    match seconds {
        _ if seconds != 0 && seconds % 86_400 == 0 => format!("{}d", seconds / 86_400),
        _ if seconds != 0 && seconds % 3_600 == 0 => format!("{}h", seconds / 3_600),
        _ if seconds != 0 && seconds % 60 == 0 => format!("{}m", seconds / 60),
        _ => format!("{seconds}s"),
    }
}

/// A length of time for people to read, in its two largest units: `45s`, `20m 05s`,
/// `1h 05m`, `3d 02h` (a negative length reads as none).
pub fn readable_length(length: Duration) -> String {
    let seconds = length.num_seconds().max(0);
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3_600 => format!("{}m {:02}s", seconds / 60, seconds % 60),
        3_600..86_400 => format!("{}h {:02}m", seconds / 3_600, seconds % 3_600 / 60),
        _ => format!("{}d {:02}h", seconds / 86_400, seconds % 86_400 / 3_600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_shows_the_time_alone_on_the_same_day_in_the_zone() {
        let now: Timestamp = "2026-12-07T06:30:00.000Z".parse().unwrap();
        let utc = chrono::FixedOffset::east_opt(0).unwrap();
        let paris = chrono::FixedOffset::east_opt(3_600).unwrap();
        let new_york = chrono::FixedOffset::west_opt(5 * 3_600).unwrap();
        let earlier: Timestamp = "2026-12-07T05:04:03.999Z".parse().unwrap();
        assert_eq!(clock_in(earlier, now, &utc), "05:04:03");
        assert_eq!(clock_in(earlier, now, &paris), "06:04:03");
        // 00:04 and 01:30 in New York: the same day there.
        assert_eq!(clock_in(earlier, now, &new_york), "00:04:03");
        let yesterday: Timestamp = "2026-12-06T23:59:59.000Z".parse().unwrap();
        assert_eq!(clock_in(yesterday, now, &utc), "2026-12-06 23:59");
        // Already the 7th in Paris.
        assert_eq!(clock_in(yesterday, now, &paris), "00:59:59");
    }

    #[test]
    fn round_trips_with_milliseconds_and_z() {
        let at: Timestamp = "2026-11-29T19:15:13.123Z".parse().unwrap();
        assert_eq!(at.to_string(), "2026-11-29T19:15:13.123Z");
        let json = serde_json::to_string(&at).unwrap();
        assert_eq!(json, "\"2026-11-29T19:15:13.123Z\"");
        assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), at);
    }

    #[test]
    fn the_fast_paths_agree_with_chrono() {
        for text in [
            "2026-11-29T19:15:13.123Z",
            "0001-01-01T00:00:00.000Z",
            "2028-02-29T23:59:59.999Z",
            "2026-01-05T07:08:09.010Z",
        ] {
            let fast = Timestamp::from_stored(text).expect("stored form");
            let general: Timestamp = text.parse().unwrap();
            assert_eq!(fast, general, "{text}");
            assert_eq!(
                std::str::from_utf8(&fast.to_stored()).unwrap(),
                general.to_string()
            );
        }
        for not_stored in [
            "2026-02-30T00:00:00.000Z",
            "2026-11-29T19:15:13Z",
            "2026-11-29T19:15:13.123+00:00",
            "2026-11-29T19:15:1x.123Z",
            "2026-11-29 19:15:13.123Z",
        ] {
            assert_eq!(Timestamp::from_stored(not_stored), None, "{not_stored}");
        }
        let bad: Result<Timestamp, _> = serde_json::from_str("\"2026-02-30T00:00:00.000Z\"");
        assert!(bad.is_err(), "an impossible date is refused, not guessed");
    }

    #[test]
    fn offsets_are_converted_to_utc() {
        let at: Timestamp = "2026-11-29T20:15:13.5+01:00".parse().unwrap();
        assert_eq!(at.to_string(), "2026-11-29T19:15:13.500Z");
    }

    #[test]
    fn lengths_read_in_their_two_largest_units() {
        let cases = [
            (Duration::zero(), "0s"),
            (Duration::seconds(45), "45s"),
            (Duration::seconds(20 * 60 + 5), "20m 05s"),
            (Duration::minutes(65), "1h 05m"),
            (Duration::hours(26) + Duration::minutes(59), "1d 02h"),
            (Duration::seconds(-3), "0s"),
        ];
        for (length, expected) in cases {
            assert_eq!(readable_length(length), expected, "{length}");
        }
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
