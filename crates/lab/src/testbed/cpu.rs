//! Whether a testbed run was CPU-bound (issue 61 item 4): a run whose processes and emulator
//! threads used nearly all of the machine's cores measured the machine, not the network. Each
//! run's `runs.csv` row says how much CPU its `rmcast` processes (the testbed's children,
//! `RUSAGE_CHILDREN` over the run) and its emulators used, as a share of the run's wall time
//! on the cores this process may use, and the machine's load average when it started (other
//! work on the machine, which the share does not see).

use rmcast_sim::scenario::Metric;
use std::time::Duration;

/// At this share of every core the run counts as CPU-bound.
pub(super) const BOUND: f64 = 0.9;

/// CPU time (user + system) of the children this process has waited for, so far.
#[allow(unsafe_code)]
pub(super) fn children_cpu() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The one-minute load average (`/proc/loadavg`), if readable.
pub(super) fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The cores this process may run on.
pub(super) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `processes_cpu_s`, `cpu_share` (processes and emulators over wall × cores), `cpu_bound`
/// and `load_average` of a run.
pub(super) fn columns(
    processes: Duration,
    emulators: Duration,
    wall: Duration,
    cores: usize,
    load: Option<f64>,
) -> Vec<(String, Metric)> {
    let share = share(processes + emulators, wall, cores);
    vec![
        ("processes_cpu_s".into(), Metric::F(processes.as_secs_f64())),
        ("cpu_share".into(), Metric::F(share)),
        ("cpu_bound".into(), Metric::B(share >= BOUND)),
        ("load_average".into(), Metric::F(load.unwrap_or(f64::NAN))),
    ]
}

fn share(cpu: Duration, wall: Duration, cores: usize) -> f64 {
    let cap = wall.as_secs_f64() * cores.max(1) as f64;
    if cap > 0.0 {
        cpu.as_secs_f64() / cap
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(cols: &'a [(String, Metric)], k: &str) -> &'a Metric {
        &cols.iter().find(|(n, _)| n == k).expect(k).1
    }

    #[test]
    fn a_run_using_nearly_every_core_is_cpu_bound() {
        let s = Duration::from_secs_f64;
        // 3.7 s of processes and 0.3 s of emulators over 2 s on 2 cores: all of them.
        let busy = columns(s(3.7), s(0.3), s(2.0), 2, Some(5.5));
        assert!(matches!(get(&busy, "cpu_share"), Metric::F(v) if (v - 1.0).abs() < 1e-9));
        assert!(matches!(get(&busy, "cpu_bound"), Metric::B(true)));
        assert!(matches!(get(&busy, "load_average"), Metric::F(v) if *v == 5.5));
        // The same CPU over 10 s: a fifth.
        let idle = columns(s(3.7), s(0.3), s(10.0), 2, None);
        assert!(matches!(get(&idle, "cpu_bound"), Metric::B(false)));
        assert!(matches!(get(&idle, "load_average"), Metric::F(v) if v.is_nan()));
    }

    #[test]
    fn the_machine_is_read() {
        assert!(cores() >= 1);
        // This process has waited for no child yet, or for some: never negative, finite.
        assert!(children_cpu().as_secs_f64().is_finite());
        if std::path::Path::new("/proc/loadavg").exists() {
            assert!(load_average().is_some_and(|l| l >= 0.0));
        }
    }
}
