//! Progress of long work on stderr: an `indicatif` bar on a terminal, and plain lines with
//! an estimate of the time left when stderr is a file or a pipe (a bar draws nothing there,
//! and a user who sent the output to a log still wants to know how far it got).

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A plain line at least every this often while work goes on…
const LINE_EVERY: Duration = Duration::from_secs(60);
/// …and at every tenth of the work…
const STEPS: u64 = 10;
/// …once the work has taken this long (short work prints only its result).
const QUIET_FOR: Duration = Duration::from_secs(10);

/// One named piece of long work, counted in units (runs, jobs).
pub struct Progress {
    name: String,
    bar: ProgressBar,
    lines: Option<Mutex<Lines>>,
}

struct Lines {
    started: Instant,
    done: u64,
    total: u64,
    last_line: Instant,
    last_step: u64,
}

impl Progress {
    /// Progress of `name`'s work, shown on stderr (nothing when `quiet`).
    pub fn new(name: &str, quiet: bool) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let bar = if quiet || !terminal {
            ProgressBar::hidden()
        } else {
            let pb = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{prefix:>10} [{bar:36}] {pos}/{len} runs  {elapsed_precise}, about {eta} left",
            )
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            pb.set_style(style);
            pb.set_prefix(name.to_string());
            pb
        };
        let now = Instant::now();
        Progress {
            name: name.to_string(),
            bar,
            lines: (!quiet && !terminal).then(|| {
                Mutex::new(Lines {
                    started: now,
                    done: 0,
                    total: 0,
                    last_line: now,
                    last_step: 0,
                })
            }),
        }
    }

    /// More units are coming.
    pub fn add_total(&self, n: u64) {
        self.bar.inc_length(n);
        if let Some(l) = &self.lines {
            if let Ok(mut l) = l.lock() {
                l.total += n;
            }
        }
    }

    /// Units finished.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
        let Some(l) = &self.lines else {
            return;
        };
        let Ok(mut l) = l.lock() else {
            return;
        };
        if let Some(text) = l.advance(&self.name, n, Instant::now()) {
            eprintln!("{text}");
        }
    }

    /// The work is over: clear the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The bars of several pieces of work that go on at once, drawn together on stderr, and the
/// means to print a line without tearing them.
pub struct Board {
    multi: MultiProgress,
}

impl Board {
    pub fn new() -> Self {
        Board {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
        }
    }

    /// Progress of `name`'s work, its bar (on a terminal) drawn on this board.
    pub fn progress(&self, name: &str, quiet: bool) -> Progress {
        let p = Progress::new(name, quiet);
        // A hidden bar stays hidden: adding it would give it the board's draw target.
        if !p.bar.is_hidden() {
            self.multi.add(p.bar.clone());
        }
        p
    }

    /// Run `f` (which prints) with the bars cleared, then draw them again.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.multi.suspend(f)
    }
}

impl Lines {
    /// Count `n` more units done at `now`; the line to print, if one is due.
    fn advance(&mut self, name: &str, n: u64, now: Instant) -> Option<String> {
        self.done += n;
        let step = self.done.saturating_mul(STEPS) / self.total.max(1);
        if now.duration_since(self.started) < QUIET_FOR {
            self.last_step = step;
            return None;
        }
        if step <= self.last_step && now.duration_since(self.last_line) < LINE_EVERY {
            return None;
        }
        self.last_step = step;
        self.last_line = now;
        Some(line(name, self.done, self.total, now - self.started))
    }
}

/// `name: done/total runs (P %), elapsed, about T left`; the estimate assumes the remaining
/// units take as long on average as the finished ones.
fn line(name: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let total = total.max(done);
    let pct = (done * 100).checked_div(total).unwrap_or(100);
    let left = if done == 0 {
        String::new()
    } else {
        let rest = elapsed.as_secs_f64() * (total - done) as f64 / done as f64;
        format!(", about {} left", clock(rest))
    };
    format!(
        "{name}: {done}/{total} runs ({pct} %), {} elapsed{left}",
        clock(elapsed.as_secs_f64())
    )
}

/// Seconds as `1h02m03s`, `2m03s` or `3s`.
fn clock(secs: f64) -> String {
    let s = secs.round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, s) => format!("{h}h{m:02}m{s:02}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_states_the_count_the_share_and_the_time_left_at_the_rate_so_far() {
        assert_eq!(
            line("paul", 30, 120, Duration::from_secs(90)),
            "paul: 30/120 runs (25 %), 1m30s elapsed, about 4m30s left"
        );
        assert_eq!(
            line("lms", 0, 10, Duration::from_secs(2)),
            "lms: 0/10 runs (0 %), 2s elapsed"
        );
        assert_eq!(
            line("xtp", 5, 5, Duration::from_secs(4000)),
            "xtp: 5/5 runs (100 %), 1h06m40s elapsed, about 0s left"
        );
    }

    #[test]
    fn plain_lines_come_at_each_tenth_and_at_least_once_a_minute() {
        let t0 = Instant::now();
        let mut l = Lines {
            started: t0,
            done: 0,
            total: 1000,
            last_line: t0,
            last_step: 0,
        };
        // The first 10 seconds print nothing: a tenth done in them is not repeated later.
        let early = (1..=100)
            .filter_map(|i| l.advance("t", 1, t0 + Duration::from_millis(i)))
            .count();
        assert_eq!(early, 0, "short work prints only its result");
        let after = t0 + QUIET_FOR;
        let printed = (1..=900)
            .filter_map(|i| l.advance("t", 1, after + Duration::from_millis(i)))
            .count();
        assert_eq!(printed, 9, "one line per tenth, not per unit");
        // A slow stretch: no tenth reached, but a minute passed.
        l.total = 1_000_000;
        let late = after + Duration::from_secs(30);
        assert_eq!(l.advance("t", 1, late), None);
        let text = l.advance("t", 1, late + LINE_EVERY).unwrap();
        assert!(text.starts_with("t: 1002/1000000 runs (0 %)"), "{text}");
    }
}
