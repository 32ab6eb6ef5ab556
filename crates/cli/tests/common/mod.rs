//! What the tests of the `rmcast` binary share: running it (its output, its JSON, a refusal
//! with exit status 2), and for `rmcast send`/`rmcast recv` over loopback a file moved from
//! one sender to several receivers, every copy compared byte for byte, the JSON summaries kept.

// Each test file uses a part of this module.
#![allow(dead_code)]

use serde_json::Value;
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test, as a command to add arguments to.
pub fn cmd() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("rmcast"))
}

/// `rmcast ARGS`, run to its end.
pub fn rmcast<S: AsRef<OsStr>>(args: &[S]) -> Output {
    cmd().args(args).output().unwrap()
}

/// The standard output of `rmcast ARGS`, which must succeed.
pub fn stdout_of<S: AsRef<OsStr>>(args: &[S]) -> String {
    let out = rmcast(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `rmcast ARGS`: its exit status, its standard output as JSON (`Null` where it is not JSON)
/// and its standard error.
pub fn json_run(args: &[&str]) -> (i32, Value, String) {
    let out = rmcast(args);
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts that a run was refused as a usage error (exit status 2) saying `says`; `case`
/// names it in a failure. Returns its standard error.
pub fn assert_refused(out: &Output, says: &str, case: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{case}: {err}");
    assert!(err.contains(says), "{case}: expected {says:?} in: {err}");
    err
}

/// Waits for `child` (spawned with its standard output piped) to end with exit status
/// `code`; returns the JSON summary it printed.
pub fn json_exit(child: Child, code: i32) -> Value {
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

pub fn pseudo_random(len: usize, seed: u64) -> Vec<u8> {
    rmcast_net::sender::pseudo_random(len as u64, seed)
}

/// `rmcast recv` from `group` on loopback into `out` (created), waiting at most `wait_s`
/// seconds for a sender, with `extra` flags and its JSON summary on its standard output.
pub fn spawn_recv(group: &str, out: &Path, wait_s: &str, extra: &[&str]) -> Child {
    std::fs::create_dir_all(out).unwrap();
    cmd()
        .args(["recv", "-g", group, "-i", "lo", "--quiet", "--json"])
        .args(["--wait", wait_s, "--dir"])
        .arg(out)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `rmcast send -` to `group` on loopback for `receivers` receivers, with `extra` flags: a
/// stream from a pipe, its output and error piped too; returns the sender and the pipe to
/// write the stream to.
pub fn spawn_stream_send(group: &str, receivers: &str, extra: &[&str]) -> (Child, ChildStdin) {
    let mut send = cmd()
        .args([
            "send",
            "-",
            "-g",
            group,
            "-i",
            "lo",
            "--receivers",
            receivers,
        ])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = send.stdin.take().unwrap();
    (send, stdin)
}

pub struct Run {
    pub sender: Value,
    pub receivers: Vec<Value>,
}

/// A file `name` holding `data` in `dir`; returns its path as text.
pub fn file_in(dir: &Path, name: &str, data: &[u8]) -> String {
    let f = dir.join(name);
    std::fs::write(&f, data).unwrap();
    f.to_str().unwrap().to_string()
}

/// Move a file from one sender to `recv_extra.len()` receivers (each with its extra flags)
/// in a scratch folder and check every copy; returns the JSON summaries.
pub fn transfer(group: &str, size: usize, send_extra: &[&str], recv_extra: &[Vec<&str>]) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let data = pseudo_random(size, size as u64 + 3);
    let src = file_in(dir, "payload.bin", &data);
    let recvs: Vec<Child> = recv_extra
        .iter()
        .enumerate()
        .map(|(r, extra)| spawn_recv(group, &dir.join(format!("out{r}")), "60", extra))
        .collect();
    let n = recv_extra.len().to_string();
    let mut args = vec![
        "send",
        &src,
        "-g",
        group,
        "-i",
        "lo",
        "--receivers",
        &n,
        "--evict-after",
        "30",
        "--json",
        "--quiet",
    ];
    args.extend_from_slice(send_extra);
    let send = rmcast(&args);
    assert!(
        send.status.success(),
        "sender: {}\n{}",
        String::from_utf8_lossy(&send.stdout),
        String::from_utf8_lossy(&send.stderr)
    );
    let mut receivers = Vec::new();
    for (r, c) in recvs.into_iter().enumerate() {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "receiver {r}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = std::fs::read(dir.join(format!("out{r}")).join("payload.bin")).unwrap();
        assert_eq!(got.len(), data.len(), "receiver {r}");
        assert!(got == data, "receiver {r}: contents differ");
        receivers.push(serde_json::from_slice(&out.stdout).unwrap());
    }
    Run {
        sender: serde_json::from_slice(&send.stdout).unwrap(),
        receivers,
    }
}

/// Why the multi-host tests with nftables on the bridge cannot run here (Linux, root,
/// iproute2 and `nft` needed), if they cannot.
pub fn cannot_run_netns_nft() -> Option<String> {
    if let Err(why) = rmcast_lab::netns::available() {
        return Some(why);
    }
    let nft = Command::new("nft")
        .arg("--version")
        .stdout(Stdio::null())
        .status();
    (!nft.is_ok_and(|s| s.success())).then(|| "`nft` (nftables) is not installed".into())
}

/// `why` a multi-host test cannot run (`None`: it can), kept to skip it with a note, except
/// under CI (env `CI` set) as root, where a missing part fails the test: there only "not
/// root" is a skip.
pub fn skip_unless_ci(why: Option<String>) -> Option<String> {
    let why = why?;
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if root && std::env::var_os("CI").is_some() {
        panic!("under CI: {why}");
    }
    Some(why)
}

/// A child process stopped (SIGKILL) and reaped when dropped, so a failing test leaves
/// nothing running (in the namespaces of the multi-host tests): the lab's.
pub use rmcast_lab::proc::Proc;

/// `rmcast ARGS` (this build's binary) in network namespace `ns`, output piped.
pub fn in_netns(ns: &str, args: &[String]) -> Proc {
    Proc::spawn(
        rmcast_lab::proc::in_netns(ns, env!("CARGO_BIN_EXE_rmcast"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .expect("start rmcast in a namespace")
}

/// A process's exit status and standard error, for a failure message.
pub fn explain(o: &Output) -> String {
    format!(
        "exit {:?}; stderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).trim()
    )
}

/// A process's standard output as JSON (`Null` if it is not).
pub fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or(Value::Null)
}

/// Owned strings of `v`, for command lines.
pub fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The UDP ports sockets are bound to in network namespace `ns` (`ss`).
pub fn udp_ports_in(ns: &str) -> Vec<u16> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "ss", "-Huan"])
        .output()
        .expect("run ss");
    let mut ports: Vec<u16> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(3))
        .filter_map(|a| a.rsplit(':').next()?.parse().ok())
        .collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// SIGKILL process `pid` once a `.part` file in `dir` (a receiver's unfinished file) holds
/// `bytes`; how much it held then, or `None` if it never did within `deadline`.
pub fn kill_when_holding(dir: &Path, pid: u32, bytes: u64, deadline: Duration) -> Option<u64> {
    let start = Instant::now();
    while start.elapsed() < deadline {
        let held = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .max();
        if let Some(h) = held.filter(|h| *h >= bytes) {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            return Some(h);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// A multi-host test's namespaces and work folder, held with the lock (each test file's
/// own) that runs its tests one after the other.
pub struct Bed {
    pub seg: rmcast_lab::netns::Segment,
    pub work: tempfile::TempDir,
    _one: std::sync::MutexGuard<'static, ()>,
}

impl Bed {
    /// `hosts` namespaces on a bridge and an empty work folder, once `lock` is ours.
    pub fn new(lock: &'static std::sync::Mutex<()>, hosts: usize) -> Bed {
        let one = lock.lock().unwrap_or_else(|e| e.into_inner());
        Bed {
            seg: rmcast_lab::netns::Segment::create(hosts)
                .expect("create the namespaces and the bridge"),
            work: tempfile::tempdir().unwrap(),
            _one: one,
        }
    }

    /// `data` written as `name` in the work folder: its path.
    pub fn file(&self, name: &str, data: &[u8]) -> std::path::PathBuf {
        let file = self.work.path().join(name);
        std::fs::write(&file, data).unwrap();
        file
    }
}
