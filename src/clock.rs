//! The wall clock that timers and due runs read: milliseconds since the Unix epoch, plus
//! `CUGA_FLO_CLOCK_OFFSET` seconds when that variable is set — a documented test hook to
//! make a parked timer due without waiting for it (`CUGA_FLO_CLOCK_OFFSET=3600 cuga-flo
//! runs resume --due`). And the ids made of the time: a run's, an A2A task's
//! (`YYYYMMDDTHHMMSSZ-xxxxxx`, sortable by when they were made). Imports nothing of the
//! crate.

use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static OFFSET_MS: OnceLock<i64> = OnceLock::new();

/// Now, in milliseconds since the Unix epoch (with the test offset, if any).
pub fn now_ms() -> u64 {
    let offset = *OFFSET_MS.get_or_init(|| {
        std::env::var("CUGA_FLO_CLOCK_OFFSET")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .map_or(0, |secs| (secs * 1000.0) as i64)
    });
    let real = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    u64::try_from(real.saturating_add(offset)).unwrap_or(0)
}

/// A fresh run id: `YYYYMMDDTHHMMSSZ-xxxxxx` (UTC, then 6 hex digits of noise): ids sort
/// by the second they were made in. The real time, not the test offset.
pub fn run_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(now.as_nanos());
    hasher.write_u32(std::process::id());
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let noise = hasher.finish() & 0xff_ffff;
    format!("{}-{noise:06x}", utc_stamp(now.as_secs()))
}

/// `YYYYMMDDTHHMMSSZ` for seconds since the Unix epoch.
pub fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (year, month, day) = civil_date(days);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian (year, month, day) of a day count since 1970-01-01.
pub fn civil_date(days: i64) -> (i64, u32, u32) {
    // Shift the epoch to 0000-03-01 so that leap days fall at the end of a year, then
    // split into 400-year eras (146 097 days each).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153; // 0 = March
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
