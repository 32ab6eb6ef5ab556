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
