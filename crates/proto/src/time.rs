use core::fmt;
use core::ops::{Add, AddAssign, Sub};
use core::time::Duration;

/// A point in time: integer nanoseconds since the run (or driver) started.
///
/// Drivers supply it; agents only compare and offset it. Arithmetic saturates instead of
/// overflowing, so a far-away deadline can never wrap around into the past.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(u64);

impl Time {
    /// The start of the run.
    pub const ZERO: Time = Time(0);
    /// The end of time; a deadline that never comes.
    pub const MAX: Time = Time(u64::MAX);

    /// `ns` nanoseconds after the start.
    pub const fn from_nanos(ns: u64) -> Time {
        Time(ns)
    }
    /// `us` microseconds after the start (saturating).
    pub const fn from_micros(us: u64) -> Time {
        Time(us.saturating_mul(1_000))
    }
    /// `ms` milliseconds after the start (saturating).
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms.saturating_mul(1_000_000))
    }
    /// `s` seconds after the start (saturating).
    pub const fn from_secs(s: u64) -> Time {
        Time(s.saturating_mul(1_000_000_000))
    }
    /// Nanoseconds since the start.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for reports only (never for scheduling).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
    /// The earlier of two optional deadlines (`None`: no deadline), e.g. an agent's
    /// `poll_timeout` over two parts.
    pub fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

fn dur_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(dur_nanos(d)))
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Duration> for Time {
    type Output = Time;
    fn sub(self, d: Duration) -> Time {
        Time(self.0.saturating_sub(dur_nanos(d)))
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    fn sub(self, earlier: Time) -> Duration {
        self.saturating_since(earlier)
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}s",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_of_two_deadlines_ignores_a_missing_one() {
        let (a, b) = (Some(Time::from_millis(3)), Some(Time::from_millis(2)));
        assert_eq!(Time::earliest(a, b), b);
        assert_eq!(Time::earliest(b, a), b);
        assert_eq!(Time::earliest(a, None), a);
        assert_eq!(Time::earliest(None, b), b);
        assert_eq!(Time::earliest(None, None), None);
    }

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(Time::ZERO - Duration::from_secs(1), Time::ZERO);
        assert_eq!(Time::from_millis(5) - Time::from_millis(7), Duration::ZERO);
        assert_eq!(
            Time::from_millis(7) - Time::from_millis(5),
            Duration::from_millis(2)
        );
        assert_eq!(
            Time::from_secs(1) + Duration::from_micros(3),
            Time::from_nanos(1_000_003_000)
        );
        assert_eq!(
            format!("{:?}", Time::from_nanos(1_500_000_000)),
            "1.500000000s"
        );
    }
}
