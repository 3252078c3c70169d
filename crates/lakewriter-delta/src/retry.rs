//! The one retry policy of lakewriter's commits, for a job's partition runs, `lakewriter sql`'s
//! statements and compaction alike: a write whose commit conflicts with a concurrent one (nothing
//! committed) is planned and run again, [`ON_CONFLICT`], after an exponential backoff with
//! jitter.

use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

use lakewriter_core::stable_hash;

/// How often a write is run in all, and the pause before its first retry (doubled on each next
/// one, up to 32 times the first, plus a jitter of up to as much again).
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    pub attempts: u32,
    pub first_pause: Duration,
}

/// The policy of every write: 8 attempts, the first retry after 100 to 200 ms.
pub const ON_CONFLICT: Retry = Retry { attempts: 8, first_pause: Duration::from_millis(100) };

impl Retry {
    /// Runs `attempt` (given the number of attempts made before it) until it succeeds, fails with
    /// an error that `retryable` does not take, or has run `attempts` times. Returns its last
    /// outcome and the attempts made beyond the first. `what` names the write in logs and seeds
    /// the jitter, so that concurrent losers spread out.
    pub async fn run<T, E, F, Fut>(
        self,
        what: &impl Display,
        retryable: impl Fn(&E) -> bool,
        mut attempt: F,
    ) -> (Result<T, E>, u32)
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let mut retries = 0;
        loop {
            match attempt(retries).await {
                Err(e) if retries + 1 < self.attempts && retryable(&e) => {
                    retries += 1;
                    let pause = self.backoff(retries, what);
                    tracing::info!(%what, attempt = retries, ?pause, "conflict with a concurrent commit; running again");
                    tokio::time::sleep(pause).await;
                }
                outcome => return (outcome, retries),
            }
        }
    }

    /// Exponential backoff with jitter derived from `what`.
    fn backoff(self, retry: u32, what: &impl Display) -> Duration {
        let base = self.first_pause * (1 << (retry - 1).min(5));
        let seed = stable_hash(format!("{what}/{retry}/{:?}", std::time::SystemTime::now()).as_bytes());
        let jitter = u32::from_str_radix(&seed[..4], 16).unwrap_or(0);
        base + base.mul_f64(f64::from(jitter) / f64::from(u16::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUICK: Retry = Retry { attempts: 4, first_pause: Duration::from_millis(1) };

    fn conflict(e: &&str) -> bool {
        *e == "conflict"
    }

    #[tokio::test]
    async fn conflicts_are_run_again_up_to_the_limit_and_other_errors_are_not() {
        let (outcome, retries) = QUICK.run(&"w", conflict, |_| async { Err::<(), _>("conflict") }).await;
        assert_eq!((outcome, retries), (Err("conflict"), 3));
        let (outcome, retries) =
            QUICK.run(&"w", conflict, |n| async move { if n < 2 { Err("conflict") } else { Ok(n) } }).await;
        assert_eq!((outcome, retries), (Ok(2), 2));
        let (outcome, retries) = QUICK.run(&"w", conflict, |_| async { Err::<(), _>("bad") }).await;
        assert_eq!((outcome, retries), (Err("bad"), 0));
    }

    #[test]
    fn each_pause_doubles_up_to_32_times_the_first_with_a_jitter_of_up_to_as_much_again() {
        for retry in 1..=8 {
            let base = ON_CONFLICT.first_pause * (1 << (retry - 1).min(5));
            let pause = ON_CONFLICT.backoff(retry, &"w");
            assert!(pause >= base && pause <= base * 2, "{retry}: {pause:?}");
        }
        assert_eq!(ON_CONFLICT.first_pause * (1 << 5), Duration::from_millis(3200));
    }
}
