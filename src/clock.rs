//! The wall clock that timers and due runs read: milliseconds since the Unix epoch, plus
//! `CUGA_FLO_CLOCK_OFFSET` seconds when that variable is set — a documented test hook to
//! make a parked timer due without waiting for it (`CUGA_FLO_CLOCK_OFFSET=3600 cuga-flo
//! runs resume --due`). Imports nothing of the crate.

use std::sync::OnceLock;
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
