//! The built-in tools: `now@core` (on by default) and `http_get@core`
//! (opt-in, behind the `http-get` feature; see [`crate::http_get`]).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use toolbox_core::{tool_fn, FnToolBox};

pub(crate) fn now_tool() -> FnToolBox {
    FnToolBox::new([tool_fn(
        "now",
        "Returns the current date and time in ISO 8601, in UTC (e.g. 2026-11-30T16:40:12Z).",
        |_: ()| async { iso8601_utc(SystemTime::now()) },
    )
    .read_only()])
    .unwrap_or_else(|e| unreachable!("the core tools are valid: {e}"))
}

/// `2026-11-30T16:40:12Z` for a moment (whole seconds, UTC).
pub fn iso8601_utc(at: SystemTime) -> String {
    let seconds = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// What `http_get@core` may do.
#[derive(Clone, Debug)]
pub struct HttpGetOptions {
    /// The most body bytes returned; the rest is cut off, and said so.
    pub max_bytes: usize,
    /// The limit for the whole request, connection to last byte.
    pub timeout: Duration,
    /// How many redirects are followed (each hop checked like the first).
    pub max_redirects: usize,
    /// Allow loopback addresses (127.0.0.0/8, ::1) and the unspecified
    /// address (0.0.0.0, ::), which reaches this host.
    pub allow_loopback: bool,
    /// Allow private, link-local, unique-local, site-local, shared and
    /// cloud-metadata addresses.
    pub allow_private: bool,
    /// Allow the other IANA special-purpose blocks (documentation,
    /// benchmarking, protocol assignments, multicast, reserved, 6to4,
    /// Teredo).
    pub allow_special: bool,
}

impl Default for HttpGetOptions {
    fn default() -> Self {
        HttpGetOptions {
            max_bytes: 256 * 1024,
            timeout: Duration::from_secs(10),
            max_redirects: 5,
            allow_loopback: false,
            allow_private: false,
            allow_special: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_is_utc_with_seconds() {
        assert_eq!(iso8601_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let at = UNIX_EPOCH + Duration::from_secs(1_796_056_812);
        assert_eq!(iso8601_utc(at), "2026-11-30T16:40:12Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(iso8601_utc(leap), "2000-02-29T00:00:00Z");
    }
}
