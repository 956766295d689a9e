//! Timer event definitions: `<timeDuration>`, `<timeDate>` and `<timeCycle>` as written,
//! and the ISO 8601 forms the engine runs: durations (`PT30S`, `P1DT2H`, `P2W`; a year
//! counts 365 days and a month 30, as most BPM engines count them) and UTC or offset date
//! times (`2026-12-01T09:00:00Z`, `2026-12-01T10:00:00+01:00`, `2026-12-01`). An
//! expression `${name}` takes the text from a process variable when the timer starts.
//! Cycles (`R3/PT1H`) are recognised so that `validate` can refuse them clearly.

use std::time::Duration;

use crate::source::Span;

/// What a timer event waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerKind {
    /// `<timeDuration>`: a delay from when the timer starts.
    Duration,
    /// `<timeDate>`: a point in time.
    Date,
    /// `<timeCycle>`: a repetition (not run).
    Cycle,
}

impl TimerKind {
    pub fn tag(self) -> &'static str {
        match self {
            TimerKind::Duration => "timeDuration",
            TimerKind::Date => "timeDate",
            TimerKind::Cycle => "timeCycle",
        }
    }
}

/// A `<timerEventDefinition>` as written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Timer {
    /// `None` when the definition names no time at all.
    pub kind: Option<TimerKind>,
    /// The element's text, trimmed.
    pub expression: String,
    /// The `<timeDuration>`/`<timeDate>`/`<timeCycle>` element (or the definition).
    #[serde(skip)]
    pub span: Span,
}

impl Timer {
    /// The variable a `${name}` expression reads, if the expression is one.
    pub fn variable(&self) -> Option<&str> {
        let inner = self
            .expression
            .strip_prefix("${")
            .or_else(|| self.expression.strip_prefix("#{"))?
            .strip_suffix('}')?
            .trim();
        let ok = !inner.is_empty()
            && inner
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        ok.then_some(inner)
    }

    /// When the timer is due if it starts at `now_ms`, over a run's `variables`: a
    /// `${variable}` time is read from them (a number of seconds as a duration). What
    /// every engine that fires timers itself computes (the native one, and cuga-flo for
    /// Flowable and Kogito).
    pub fn due_over(
        &self,
        variables: &serde_json::Map<String, serde_json::Value>,
        now_ms: u64,
    ) -> Result<u64, DueError> {
        use serde_json::Value;
        let kind = self.kind.ok_or(DueError::NoKind)?;
        let text = match self.variable() {
            Some(name) => match variables.get(name) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) if kind == TimerKind::Duration => format!("PT{n}S"),
                Some(other) => {
                    return Err(DueError::NotATime {
                        name: name.to_string(),
                        value: other.to_string(),
                        what: if kind == TimerKind::Date {
                            "date-time"
                        } else {
                            "duration"
                        },
                    });
                }
                None => return Err(DueError::Unset(name.to_string())),
            },
            None => self.expression.clone(),
        };
        Timer::due_ms(kind, &text, now_ms)
    }

    /// When the timer is due if it starts at `now_ms`, given the text of its expression
    /// (the expression itself, or the value of its variable).
    pub fn due_ms(kind: TimerKind, text: &str, now_ms: u64) -> Result<u64, DueError> {
        match kind {
            TimerKind::Duration => {
                let d = parse_duration(text)?;
                Ok(now_ms.saturating_add(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)))
            }
            TimerKind::Date => Ok(parse_date_time(text)?),
            TimerKind::Cycle => Err(DueError::Cycle(text.to_string())),
        }
    }
}

/// Why a timer's expression is not an ISO 8601 duration or date-time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    #[error("`{text}` is not an ISO 8601 duration ({why}; e.g. PT30S, P1DT2H)")]
    Duration { text: String, why: String },
    #[error(
        "`{0}` is not an ISO 8601 date-time (e.g. 2026-12-01T09:00:00Z or 2026-12-01T10:00:00+01:00)"
    )]
    DateTime(String),
}

/// Why a timer cannot be set: when it is due is unknown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DueError {
    #[error("the timer event has no timerEventDefinition")]
    NoDefinition,
    #[error("the timer names no timeDuration, timeDate or timeCycle")]
    NoKind,
    #[error("variable `{name}` is {value}, not an ISO 8601 {what}")]
    NotATime {
        name: String,
        value: String,
        what: &'static str,
    },
    #[error("variable `{0}` is not set")]
    Unset(String),
    #[error("`{0}` is a timeCycle: repeating timers are not run (use a timeDuration in a loop)")]
    Cycle(String),
    #[error(transparent)]
    Time(#[from] TimeError),
}

/// An ISO 8601 duration: `PnYnMnWnDTnHnMnS` (the last unit may have a fraction).
pub fn parse_duration(text: &str) -> Result<Duration, TimeError> {
    let bad = |why: &str| TimeError::Duration {
        text: text.to_string(),
        why: why.to_string(),
    };
    let t = text.trim();
    let rest = t
        .strip_prefix('P')
        .ok_or_else(|| bad("it must start with P"))?;
    if rest.is_empty() || rest == "T" {
        return Err(bad("no amount"));
    }
    let mut seconds = 0f64;
    let mut in_time = false;
    let mut number = String::new();
    let mut units = 0;
    for c in rest.chars() {
        match c {
            'T' if !in_time && number.is_empty() => in_time = true,
            '0'..='9' | '.' | ',' => number.push(if c == ',' { '.' } else { c }),
            _ => {
                let n: f64 = number
                    .parse()
                    .map_err(|_| bad(&format!("no number before `{c}`")))?;
                number.clear();
                let unit = match (in_time, c) {
                    (false, 'Y') => 365.0 * 86_400.0,
                    (false, 'M') => 30.0 * 86_400.0,
                    (false, 'W') => 7.0 * 86_400.0,
                    (false, 'D') => 86_400.0,
                    (true, 'H') => 3_600.0,
                    (true, 'M') => 60.0,
                    (true, 'S') => 1.0,
                    _ => return Err(bad(&format!("`{c}` is not a unit here"))),
                };
                seconds += n * unit;
                units += 1;
            }
        }
    }
    if !number.is_empty() {
        return Err(bad("a number without its unit at the end"));
    }
    if rest.ends_with('T') {
        return Err(bad("a T with no time after it"));
    }
    if units == 0 {
        return Err(bad("no amount"));
    }
    if !seconds.is_finite() || seconds > 1.0e11 {
        return Err(bad("too long"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// An ISO 8601 date and time (`YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)`, or a date alone,
/// midnight UTC) as milliseconds since the Unix epoch. A time without an offset is UTC.
pub fn parse_date_time(text: &str) -> Result<u64, TimeError> {
    let bad = || TimeError::DateTime(text.to_string());
    let t = text.trim();
    let num = |s: &str| -> Result<i64, TimeError> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse().map_err(|_| bad())
    };
    let (date, time) = match t.split_once(['T', 't', ' ']) {
        Some((d, tm)) => (d, Some(tm)),
        None => (t, None),
    };
    let mut parts = date.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    let (y, m, d) = (num(y)?, num(m)?, num(d)?);
    if !(1..=12).contains(&m) || !(1..=days_in_month(y, m)).contains(&d) || y < 1970 {
        return Err(bad());
    }
    let mut secs = days_from_civil(y, m, d) * 86_400;
    let mut millis = 0i64;
    if let Some(time) = time {
        let (clock, offset) = if let Some(c) = time.strip_suffix(['Z', 'z']) {
            (c, 0)
        } else if let Some(i) = time.rfind(['+', '-']) {
            let (c, o) = time.split_at(i);
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let o = &o[1..];
            let (oh, om) = o.split_once(':').unwrap_or((o, "0"));
            let (oh, om) = (num(oh)?, num(om)?);
            if oh > 23 || om > 59 {
                return Err(bad());
            }
            (c, sign * (oh * 3600 + om * 60))
        } else {
            (time, 0)
        };
        let mut hms = clock.split(':');
        let h = num(hms.next().unwrap_or_default())?;
        let mi = num(hms.next().ok_or_else(bad)?)?;
        let s = hms.next().unwrap_or("0");
        if hms.next().is_some() {
            return Err(bad());
        }
        let (whole, frac) = s.split_once(['.', ',']).unwrap_or((s, ""));
        let sec = num(whole)?;
        if !frac.is_empty() {
            let digits: String = frac.chars().take(3).collect();
            millis = num(&digits)? * 10i64.pow(3 - digits.len() as u32);
        }
        if h > 23 || mi > 59 || sec > 60 {
            return Err(bad());
        }
        secs += h * 3600 + mi * 60 + sec - offset;
    }
    u64::try_from(secs * 1000 + millis).map_err(|_| bad())
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let secs = |t: &str| parse_duration(t).map(|d| d.as_secs_f64());
        assert_eq!(secs("PT30S"), Ok(30.0));
        assert_eq!(secs("PT1H30M"), Ok(5400.0));
        assert_eq!(secs("P1DT2H"), Ok(93_600.0));
        assert_eq!(secs("P2W"), Ok(1_209_600.0));
        assert_eq!(secs("PT0.5S"), Ok(0.5));
        assert_eq!(secs("PT1,5S"), Ok(1.5));
        assert_eq!(secs("P1M"), Ok(2_592_000.0));
        for bad in [
            "", "P", "PT", "30S", "PT30", "P1H", "PTS", "P1DT", "PT-1S", "P1.2.3D",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn date_times() {
        assert_eq!(parse_date_time("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(parse_date_time("1970-01-02"), Ok(86_400_000));
        assert_eq!(
            parse_date_time("2024-02-29T12:34:56Z"),
            Ok(1_709_210_096_000)
        );
        assert_eq!(
            parse_date_time("2024-02-29T13:34:56+01:00"),
            Ok(1_709_210_096_000)
        );
        assert_eq!(
            parse_date_time("2024-02-29T12:34:56.250Z"),
            Ok(1_709_210_096_250)
        );
        assert_eq!(parse_date_time("2024-02-29T12:34Z"), Ok(1_709_210_040_000));
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "tomorrow",
            "2024-01-01T25:00Z",
            "1969-12-31",
        ] {
            assert!(parse_date_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn variables_in_expressions() {
        let t = |e: &str| Timer {
            kind: Some(TimerKind::Duration),
            expression: e.into(),
            span: Span::default(),
        };
        assert_eq!(t("${wait}").variable(), Some("wait"));
        assert_eq!(t("#{ due_at }").variable(), Some("due_at"));
        assert_eq!(t("PT1S").variable(), None);
        assert_eq!(t("${a + b}").variable(), None);
    }
}
