//! Child processes with a deadline: start one, wait for it at most until a given instant,
//! stop it (SIGKILL) if it is still running then, and never leave it running — not when a
//! run fails half-way and not when a test panics. The one helper the testbed, the benchmark
//! harnesses (`rmcast-bench`), `rmcast bench scale` and the command line's tests share.

use std::ffi::OsStr;
use std::process::{Child, Command, ExitStatus, Output};
use std::time::{Duration, Instant};

/// How often a wait looks whether the child has ended.
const POLL: Duration = Duration::from_millis(20);

/// A child process, stopped (SIGKILL) and reaped when dropped while it still runs.
#[derive(Debug)]
pub struct Proc {
    /// The child until [`Proc::finish`] took its output.
    child: Option<Child>,
    /// Its exit status once it ended (by itself, or stopped).
    status: Option<ExitStatus>,
}

impl Proc {
    /// Start `cmd` (its standard streams as `cmd` sets them).
    pub fn spawn(cmd: &mut Command) -> std::io::Result<Proc> {
        Ok(Proc::from(cmd.spawn()?))
    }

    /// Its process id, until it was stopped or its output taken.
    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Its exit status if it has ended (or was stopped), without waiting.
    pub fn status(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            if let Some(c) = self.child.as_mut() {
                self.status = c.try_wait().ok().flatten();
            }
        }
        self.status
    }

    /// Wait until it ends or `deadline` passes: its exit status, or `None` if it was still
    /// running at the deadline (it has been stopped).
    pub fn wait_until(&mut self, deadline: Instant) -> Option<ExitStatus> {
        loop {
            if let Some(s) = self.status() {
                return Some(s);
            }
            if Instant::now() >= deadline {
                self.kill();
                return None;
            }
            std::thread::sleep(POLL);
        }
    }

    /// [`Proc::wait_until`], then what it wrote to its piped standard output and error:
    /// `None` if it was stopped (at the deadline, or before) or its output was taken already.
    pub fn finish(&mut self, deadline: Instant) -> Option<Output> {
        self.wait_until(deadline)?;
        self.child.take()?.wait_with_output().ok()
    }

    /// Stop it now (SIGKILL) and reap it (its output is dropped); nothing if it has ended.
    pub fn kill(&mut self) {
        if self.status().is_some() {
            return;
        }
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            self.status = c.wait().ok();
        }
    }
}

impl From<Child> for Proc {
    fn from(child: Child) -> Proc {
        Proc {
            child: Some(child),
            status: None,
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `ip netns exec NS PROGRAM`: a command that runs `program` on network namespace `ns` (a
/// host of a [`crate::netns::Segment`], or a [`crate::netns::Router`]).
pub fn in_netns(ns: &str, program: impl AsRef<OsStr>) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns]).arg(program);
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    #[test]
    fn a_process_that_ends_in_time_gives_its_status_and_output() {
        let mut p = Proc::spawn(&mut sh("echo out; echo err >&2; exit 3")).unwrap();
        let o = p.finish(Instant::now() + Duration::from_secs(20)).unwrap();
        assert_eq!(o.status.code(), Some(3));
        assert_eq!(
            (&o.stdout[..], &o.stderr[..]),
            (&b"out\n"[..], &b"err\n"[..])
        );
        assert_eq!(p.status().and_then(|s| s.code()), Some(3));
    }

    #[test]
    fn a_process_still_running_at_the_deadline_is_stopped() {
        let mut p = Proc::spawn(&mut sh("sleep 30")).unwrap();
        let t = Instant::now();
        assert_eq!(p.wait_until(t + Duration::from_millis(100)), None);
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        // Stopped by a signal: ended, without an exit code.
        assert_eq!(p.status().map(|s| s.code()), Some(None));
        assert!(p.finish(Instant::now()).is_none());
    }

    #[test]
    fn dropping_a_running_process_stops_it() {
        let p = Proc::spawn(&mut sh("sleep 30")).unwrap();
        let pid = p.id().unwrap();
        drop(p);
        // Reaped: no process with its id is left (not even a zombie).
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    }

    #[test]
    fn in_netns_runs_the_program_through_ip() {
        let c = in_netns("rmcast-x-h0", "/bin/true");
        let args: Vec<&OsStr> = c.get_args().collect();
        assert_eq!(c.get_program(), "ip");
        assert_eq!(args, ["netns", "exec", "rmcast-x-h0", "/bin/true"]);
    }
}
