//! OpenPGM (libpgm 5.3, RFC 3208 over UDP as OpenPGM encapsulates it) as a contender beside
//! rmcast's `pgm`: `bench/pgm/openpgm_peer.c`, built here with cc against libpgm-dev, sends
//! the file as APDUs of 1,400 bytes at rmcast's default rate (1 Gbit/s, OpenPGM's rate
//! limiter), no FEC (as rmcast's `pgm` by default: NAK, NCF and RDATA), answering NAKs from
//! a second thread while it sends; each receiver is an OpenPGM `sink` that writes the APDUs
//! it delivers, in order, and exits when it has all of them.
//!
//! A PGM source cannot know who received what (no positive acknowledgment), so this
//! contender is timed at the receivers: a receiver's goodput is the file over the time from
//! the sender's start to the receiver's exit with every APDU, and the sender is stopped when
//! the last receiver is done (or the run's time limit passes).

use crate::proc::{self, mbit, CpuMarks, Outcome};
use crate::spec::{Setup, GROUP_IP};
use crate::Result;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The tool's name in `--tools` and the results.
pub const TOOL: &str = "openpgm";

/// The peer program's source, built on first use into the run's work directory.
const PEER_C: &str = include_str!("../../../bench/pgm/openpgm_peer.c");

/// The Debian packages the contender needs.
pub(crate) const PACKAGES: [&str; 3] = ["libpgm-dev", "pkg-config", "gcc"];

/// The APDU size (`openpgm_peer sendfile`'s, one TPDU in a 1,500-byte MTU).
const APDU: u64 = 1_400;

/// OpenPGM's PGM data-destination port for the benchmark's sessions.
const DPORT: &str = "7500";

/// Whether cc and libpgm-dev are here.
pub(crate) fn present() -> bool {
    let ok = |c: &mut Command| c.output().is_ok_and(|o| o.status.success());
    ok(Command::new("cc").arg("--version"))
        && ok(Command::new("pkg-config").args(["--exists", "openpgm-5.3"]))
}

/// `openpgm_peer` built with cc against libpgm 5.3 in `work`, once per folder.
pub fn openpgm_peer(work: &Path) -> Result<PathBuf> {
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "openpgm-5.3"])
        .output()
        .map_err(crate::BenchError::io("run pkg-config".to_string()))?;
    let flags = String::from_utf8_lossy(&flags.stdout).into_owned();
    let mut flags: Vec<&str> = flags.split_whitespace().collect();
    flags.push("-pthread");
    let source = ("openpgm_peer.c", PEER_C);
    crate::tools::build_program(work, "openpgm_peer", source, "cc", &flags)
}

/// OpenPGM's sender to `n` OpenPGM receivers.
pub(crate) fn run_openpgm(s: &Setup<'_>, n: usize, port: u16) -> Result<Outcome> {
    let (topo, work) = (s.topo, s.work);
    let prog = openpgm_peer(work)?;
    let dir = work.join(format!("openpgm-{port}"));
    let size = s.b.size_mb * 1_000_000;
    let count = size.div_ceil(APDU).to_string();
    let addr = |h: usize| topo.addr(h).map_or("127.0.0.1".into(), |a| a.to_string());
    let limit_ms = s.b.timeout.as_millis().to_string();
    let port_s = port.to_string();
    let mut kids = Vec::new();
    for r in 1..=n {
        let mut k = topo.cmd(r, &prog);
        k.args([
            "sink",
            &addr(r),
            GROUP_IP,
            &port_s,
            DPORT,
            &count,
            &limit_ms,
        ])
        .arg(dir.join(format!("r{r}.bin")));
        kids.push(proc::spawn_logged(&mut k, &dir, &format!("r{r}"))?);
    }
    // Receivers join before the first ODATA: an OpenPGM receiver's window starts at the
    // first sequence number it sees.
    std::thread::sleep(Duration::from_millis(500));
    let mut c = topo.cmd(0, &prog);
    c.args([
        "sendfile",
        &addr(0),
        GROUP_IP,
        &port_s,
        DPORT,
        "4001",
        "1e9",
    ])
    .arg(s.file)
    .arg(&limit_ms);
    let mut cpu = CpuMarks::default();
    cpu.mark(0);
    let t0 = Instant::now();
    let mut sender = proc::spawn_logged(&mut c, &dir, "s")?;
    let mut done: Vec<Option<(f64, bool)>> = vec![None; n];
    while done.iter().any(Option::is_none) && t0.elapsed() < s.b.timeout {
        for (d, k) in done.iter_mut().zip(&mut kids) {
            if d.is_none() {
                *d = k
                    .ended()
                    .map(|code| (t0.elapsed().as_secs_f64(), code == Some(0)));
            }
        }
        if let Some(code) = sender.ended().filter(|c| *c != Some(0)) {
            let mut o = Outcome::new(TOOL.into(), COMMAND.into());
            o.error = Some(format!(
                "openpgm_peer sendfile exit status {code:?}: {}",
                sender.stderr_tail()
            ));
            break_out(&mut o, &mut kids, n);
            return Ok(o);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cpu.mark(1);
    sender.stop();
    let mut o = Outcome::new(TOOL.into(), COMMAND.into());
    o.timed_out = done.iter().any(Option::is_none);
    o.wall_s = done
        .iter()
        .flatten()
        .map(|d| d.0)
        .fold(0.0, f64::max)
        .max(if o.timed_out {
            t0.elapsed().as_secs_f64()
        } else {
            0.0
        });
    for k in &mut kids {
        k.stop();
    }
    cpu.mark(2);
    o.cpu = cpu;
    for (r, d) in (1..=n).zip(&done) {
        let ok = d.is_some_and(|d| d.1) && s.verify(&dir.join(format!("r{r}.bin")));
        o.verified.push(Some(ok));
        o.per_receiver
            .push(d.filter(|_| ok).map(|(t, _)| mbit(size, t)));
    }
    o.extra.insert(
        "per_receiver_basis".into(),
        "file size over the time from the sender's start to the receiver's last APDU (a PGM source cannot know when receivers finish)".into(),
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(o)
}

/// The receivers of a run whose sender failed: stopped, nothing verified.
fn break_out(o: &mut Outcome, kids: &mut [proc::Logged], n: usize) {
    for k in kids {
        k.stop();
    }
    o.verified = vec![Some(false); n];
    o.per_receiver = vec![None; n];
}

const COMMAND: &str = "openpgm_peer sendfile IFACE GROUP PORT 7500 4001 1e9 FILE LIMIT_MS; openpgm_peer sink IFACE GROUP PORT 7500 COUNT LIMIT_MS OUT (bench/pgm/openpgm_peer.c: libpgm 5.3, APDUs of 1,400 bytes, 1 Gbit/s, whole file in the transmit window, no FEC, NAKs answered by a second thread; timed at the receivers)";

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::run::{tempfile_dir, write_pseudo_random};
    use crate::topo::Topo;

    /// OpenPGM's sender and two receivers move a 2 MB file through the benchmark's runner
    /// on the bridge (needs root for the namespaces, cc and libpgm-dev; CI has them):
    /// every receiver's file is the sender's. Skipped without root or libpgm, except that
    /// a missing libpgm under CI fails.
    #[test]
    fn openpgm_moves_a_file_across_the_bridge() {
        if !present() {
            assert!(
                std::env::var_os("CI").is_none(),
                "libpgm-dev missing under CI"
            );
            eprintln!("skipped: cc or libpgm-dev missing");
            return;
        }
        let Ok(topo) = Topo::bridge(3) else {
            eprintln!("skipped: no network namespaces here (not root?)");
            return;
        };
        let work = tempfile_dir("openpgm-test").unwrap();
        let file = work.join("bench.bin");
        write_pseudo_random(&file, 2_000_000).unwrap();
        let mut b = crate::run::tests::bench();
        b.size_mb = 2;
        b.timeout = Duration::from_secs(60);
        let s = Setup {
            b: &b,
            topo: &topo,
            exe: Path::new("rmcast"),
            file: &file,
            digest: proc::digest(&file).unwrap(),
            work: &work,
        };
        let o = run_openpgm(&s, 2, 47_391).unwrap();
        std::fs::remove_dir_all(&work).unwrap();
        assert!(!o.timed_out && o.error.is_none(), "{o:?}");
        assert_eq!(o.verified, [Some(true), Some(true)], "{o:?}");
    }
}
