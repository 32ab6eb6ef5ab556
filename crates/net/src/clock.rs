//! The monotonic clock mapped onto [`rmcast_proto::Time`]: nanoseconds since the endpoint
//! started.

use rmcast_proto::Time;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
/// The endpoint's clock: the instant it started, and [`Time`] since.
pub struct Clock {
    start: Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock {
    /// A clock starting now.
    pub fn new() -> Self {
        Clock {
            start: Instant::now(),
        }
    }
    /// Time since start.
    pub fn now(&self) -> Time {
        let ns = self.start.elapsed().as_nanos();
        Time::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }
    /// How long from now until `t` (zero if `t` has passed).
    pub fn until(&self, t: Time) -> Duration {
        t.saturating_since(self.now())
    }
}

/// The wall-clock time (microseconds since the Unix epoch) of `t`, an instant `now` and
/// earlier on a clock whose current reading is `now`: how reports from processes on one
/// machine, each on its own [`Clock`], are put on one time line (`rmcast testbed`).
pub fn unix_micros_of(t: Time, now: Time) -> u64 {
    let ago = u64::try_from(now.saturating_since(t).as_micros()).unwrap_or(u64::MAX);
    crate::secure::unix_micros().saturating_sub(ago)
}
