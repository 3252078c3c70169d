//! How requests to an S3 store are retried and timed out: one policy for lakewriter's own object
//! store (raw data, the log's partition state) and delta-rs's (every table read and commit).
//!
//! object_store retries a request that failed with a 5xx answer, a 429, or a connection that
//! could not be made or was closed before the answer; a request that timed out only where it is
//! safe to repeat (a GET, a plain PUT) — never the conditional PUT of a commit, whose outcome is
//! then unknown and is found in the log by lakewriter (see `lakewriter-delta`'s `write::commit`).
//! A conditional PUT retried after it landed answers "already exists": it cannot commit twice.

use std::collections::HashMap;
use std::time::Duration;

use object_store::{BackoffConfig, RetryConfig};

use crate::Error;

/// The retry and timeout settings of every request to an S3 store. Each can be set in the
/// project's `[storage]` table under its key (any case): `max_retries`, `retry_timeout`,
/// `init_backoff`, `max_backoff`, `timeout`, `connect_timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestPolicy {
    /// Retries of one request after its first try.
    pub max_retries: usize,
    /// No retry starts later than this after the first try: the retry budget of one request.
    pub retry_timeout: Duration,
    /// The first pause before a retry; each next one is drawn between this and twice the last.
    pub init_backoff: Duration,
    /// The longest pause before a retry.
    pub max_backoff: Duration,
    /// One try of a request, from connecting to the last byte of the answer.
    pub timeout: Duration,
    /// Making the connection of one try.
    pub connect_timeout: Duration,
}

impl Default for RequestPolicy {
    /// Five tries at most, with pauses of 0.25 s growing to at most 4 s (1 to 3.75 s in all), no
    /// retry after 15 s, 30 s for one try and 5 s to connect: a request fails within
    /// `retry_timeout + max_backoff + timeout` (49 s), a refused one within seconds.
    fn default() -> Self {
        Self {
            max_retries: 4,
            retry_timeout: Duration::from_secs(15),
            init_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(4),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
        }
    }
}

/// The keys of the policy, as delta-rs and object_store name them.
pub(crate) const KEYS: [&str; 6] =
    ["max_retries", "retry_timeout", "init_backoff", "max_backoff", "timeout", "connect_timeout"];

impl RequestPolicy {
    /// The default policy with the settings of `options` (keys in any case), which are taken
    /// out of it. A value that is not a count or a duration is a configuration error naming its
    /// key (never the value).
    pub(crate) fn take_from(options: &mut HashMap<String, String>) -> Result<Self, Error> {
        let mut policy = Self::default();
        let keys: Vec<String> =
            options.keys().filter(|k| KEYS.contains(&k.to_ascii_lowercase().as_str())).cloned().collect();
        for key in keys {
            let value = options.remove(&key).unwrap_or_default();
            let name = key.to_ascii_lowercase();
            let duration = || {
                parse_duration(&value)
                    .ok_or_else(|| Error::Policy { key: name.clone(), expected: "a duration such as `15s` or `250ms`" })
            };
            match name.as_str() {
                "max_retries" => {
                    policy.max_retries = value.trim().parse().map_err(|_| Error::Policy {
                        key: name.clone(),
                        expected: "a whole number of retries such as `4`",
                    })?;
                }
                "retry_timeout" => policy.retry_timeout = duration()?,
                "init_backoff" => policy.init_backoff = duration()?,
                "max_backoff" => policy.max_backoff = duration()?,
                "timeout" => policy.timeout = duration()?,
                _ => policy.connect_timeout = duration()?,
            }
        }
        Ok(policy)
    }

    /// object_store's retry configuration.
    #[must_use]
    pub fn retry_config(&self) -> RetryConfig {
        RetryConfig {
            backoff: BackoffConfig { init_backoff: self.init_backoff, max_backoff: self.max_backoff, base: 2.0 },
            max_retries: self.max_retries,
            retry_timeout: self.retry_timeout,
        }
    }

    /// The policy as storage options, under the keys delta-rs reads its retry configuration from
    /// and object_store its client's timeouts.
    pub(crate) fn options(&self) -> [(String, String); 6] {
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        [
            ("max_retries".to_owned(), self.max_retries.to_string()),
            ("retry_timeout".to_owned(), ms(self.retry_timeout)),
            ("init_backoff".to_owned(), ms(self.init_backoff)),
            ("max_backoff".to_owned(), ms(self.max_backoff)),
            ("timeout".to_owned(), ms(self.timeout)),
            ("connect_timeout".to_owned(), ms(self.connect_timeout)),
        ]
    }
}

/// A duration written as a whole number and a unit: `250ms`, `15s`, `2m`.
fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let at = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(at);
    let number: u64 = number.parse().ok()?;
    match unit.trim() {
        "ms" => Some(Duration::from_millis(number)),
        "s" => Some(Duration::from_secs(number)),
        "m" => number.checked_mul(60).map(Duration::from_secs),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_taken_from_the_options_in_any_case() {
        let mut options = HashMap::from([
            ("MAX_RETRIES".to_owned(), "2".to_owned()),
            ("retry_timeout".to_owned(), "3s".to_owned()),
            ("Timeout".to_owned(), " 1500ms ".to_owned()),
            ("CONNECT_TIMEOUT".to_owned(), "1m".to_owned()),
            ("AWS_REGION".to_owned(), "eu-west-1".to_owned()),
        ]);
        let policy = RequestPolicy::take_from(&mut options).expect("a policy");
        let expected = RequestPolicy {
            max_retries: 2,
            retry_timeout: Duration::from_secs(3),
            timeout: Duration::from_millis(1500),
            connect_timeout: Duration::from_mins(1),
            ..RequestPolicy::default()
        };
        assert_eq!(policy, expected);
        assert_eq!(options.keys().collect::<Vec<_>>(), ["AWS_REGION"], "the policy's keys are taken out");
        let as_options = HashMap::from(policy.options());
        assert_eq!(as_options["retry_timeout"], "3000ms");
        assert_eq!(as_options["init_backoff"], "250ms");
        let retry = policy.retry_config();
        assert_eq!((retry.max_retries, retry.retry_timeout), (2, Duration::from_secs(3)));
    }

    #[test]
    fn a_value_that_is_no_count_or_duration_is_refused_naming_its_key_only() {
        for (key, value) in [("max_retries", "-1"), ("TIMEOUT", "30"), ("init_backoff", "1h"), ("max_backoff", "s")] {
            let mut options = HashMap::from([(key.to_owned(), value.to_owned())]);
            let error = RequestPolicy::take_from(&mut options).expect_err("refused").to_string();
            assert!(error.starts_with(&format!("storage option `{}` must be", key.to_ascii_lowercase())), "{error}");
            assert!(!error.contains(&format!("`{value}`")), "{error}");
        }
    }
}
