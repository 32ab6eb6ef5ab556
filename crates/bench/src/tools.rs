//! The other tools, moving the same file to the same receivers: uftp/uftpd (`-R -1`: no rate
//! limit; its default block size, 1,300 bytes, which fits a 1,500-byte MTU),
//! udp-sender/udp-receiver (`--nopointopoint`, no bitrate cap) and NORM (RFC 5740, NRL's
//! libnorm, through `bench/norm/normfile.cc`, built here with g++: at rmcast's default rate
//! of 1 Gbit/s (`norm`), under NORM-CC with that rate as its ceiling (`norm-cc`), or at
//! 1 Gbit/s with its round-trip estimate started at 1 ms instead of 0.5 s (`norm-lan`, what
//! a user who knows NORM sets on a LAN); NORM's defaults otherwise), and OpenPGM
//! ([`crate::openpgm`]). Missing tools are installed with apt-get (Debian packages uftp,
//! udpcast, libnorm-dev and g++, libpgm-dev, pkg-config and gcc) when allowed.

use crate::proc::{self, mbit, CpuMarks, Outcome};
use crate::spec::{Setup, GROUP_IP};
use crate::Result;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// udpcast rendezvous group (its default, 224.0.0.1, does not cross our bridge setups).
const RDV: &str = "239.255.90.250";

fn have(b: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {b}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The tools `--tools` accepts.
pub const TOOLS: [&str; 6] = [
    "uftp",
    "udpcast",
    "norm",
    "norm-cc",
    "norm-lan",
    crate::openpgm::TOOL,
];

/// The Debian packages a tool needs.
fn packages(tool: &str) -> &'static [&'static str] {
    match tool {
        "uftp" => &["uftp"],
        "udpcast" => &["udpcast"],
        crate::openpgm::TOOL => &crate::openpgm::PACKAGES,
        _ => &["libnorm-dev", "g++"],
    }
}

fn present(tool: &str) -> bool {
    match tool {
        "uftp" => have("uftp") && have("uftpd"),
        "udpcast" => have("udp-sender") && have("udp-receiver"),
        crate::openpgm::TOOL => crate::openpgm::present(),
        _ => have("g++") && Path::new("/usr/include/normApi.h").exists(),
    }
}

/// Of the tools `wanted` (of [`TOOLS`]), those missing (after installing them with apt-get
/// if `install`).
pub(crate) fn ensure_tools(
    wanted: &[&str],
    install: bool,
    progress: &mut dyn FnMut(String),
) -> Vec<&'static str> {
    let mut missing: Vec<&'static str> = TOOLS
        .into_iter()
        .filter(|p| wanted.contains(p) && !present(p))
        .collect();
    if !missing.is_empty() && install {
        let mut pkgs: Vec<&str> = missing.iter().flat_map(|t| packages(t)).copied().collect();
        pkgs.sort_unstable();
        pkgs.dedup();
        progress(format!("installing {} with apt-get", pkgs.join(", ")));
        let _ = Command::new("apt-get")
            .args(["update", "-qq"])
            .stdout(Stdio::null())
            .status();
        let _ = Command::new("apt-get")
            .args(["install", "-y", "-qq"])
            .args(&pkgs)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status();
        missing.retain(|p| !present(p));
    }
    missing
}

/// uftp to `n` uftpd daemons.
pub(crate) fn run_uftp(s: &Setup<'_>, n: usize, port: u16) -> Result<Outcome> {
    let (topo, work) = (s.topo, s.work);
    let dir = work.join(format!("uftp-{port}"));
    let mut daemons = Vec::new();
    let mut uids = Vec::new();
    for r in 1..=n {
        let out = dir.join(format!("r{r}"));
        std::fs::create_dir_all(&out)
            .map_err(crate::BenchError::io(format!("create {}", out.display())))?;
        let uid = format!("0x{:08x}", 0x1000 + r);
        uids.push(uid.clone());
        let mut d = topo.cmd(r, Path::new("uftpd"));
        d.args(["-d", "-I", &topo.iface, "-p", &port.to_string(), "-U", &uid])
            .arg("-D")
            .arg(&out)
            .arg("-L")
            .arg(dir.join(format!("uftpd-{r}.log")));
        daemons.push(proc::spawn_logged(&mut d, &dir, &format!("d{r}"))?);
    }
    std::thread::sleep(Duration::from_millis(500));
    let mut c = topo.cmd(0, Path::new("uftp"));
    c.args(["-I", &topo.iface, "-p", &port.to_string(), "-R", "-1"])
        .args(["-H", &uids.join(",")])
        .arg(s.file);
    let (mut o, mut cpu) = run_sender(s, &mut c, &dir, &UFTP)?;
    for d in &mut daemons {
        d.stop();
    }
    cpu.mark(2);
    o.cpu = cpu;
    outcome_files(s, &mut o, n, |r| dir.join(format!("r{r}/bench.bin")));
    if !o.per_receiver.iter().all(Option::is_some) && topo.is_loopback() {
        o.extra.insert(
            "note".into(),
            "on one host uftpd never answered uftp's ANNOUNCE in our runs (uftp: \"Announce timed out\"); measure it with --bridge".into(),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(o)
}

/// A tool's sender as the results name it.
struct SenderOf {
    /// The sender's program.
    program: &'static str,
    /// The tool's name in the results.
    tool: &'static str,
    /// How the tool is run, in words for the results.
    command: &'static str,
}

const UFTP: SenderOf = SenderOf {
    program: "uftp",
    tool: "uftp",
    command: "uftp -R -1 -H <receiver ids> FILE; uftpd -d -D DIR",
};

const UDPCAST: SenderOf = SenderOf {
    program: "udp-sender",
    tool: "udpcast",
    command: "udp-sender --nopointopoint --min-receivers N --mcast-rdv-address G --file FILE; udp-receiver --mcast-rdv-address G",
};

/// Run a tool's sender `c` (output under `dir`) until it exits or the run's timeout passes:
/// the tool's outcome with the sender's wall time, whether it timed out and its failure, and
/// the CPU marks 0 (start) and 1 (sender done).
fn run_sender(
    s: &Setup<'_>,
    c: &mut Command,
    dir: &Path,
    of: &SenderOf,
) -> Result<(Outcome, CpuMarks)> {
    let mut cpu = CpuMarks::default();
    cpu.mark(0);
    let t0 = Instant::now();
    let mut sender = proc::spawn_logged(c, dir, "s")?;
    let done = sender.wait_for(s.b.timeout);
    let wall = t0.elapsed().as_secs_f64();
    cpu.mark(1);
    let mut o = Outcome::new(of.tool.into(), of.command.into());
    o.wall_s = wall;
    o.timed_out = done.is_none();
    if done == Some(false) {
        o.error = Some(format!(
            "{} exit status not 0: {}",
            of.program,
            sender.stderr_tail()
        ));
    }
    Ok((o, cpu))
}

/// Verify each receiver's file; a tool's per-receiver goodput is the file over the sender's
/// wall time (the tools report no per-receiver timing).
fn outcome_files(
    s: &Setup<'_>,
    o: &mut Outcome,
    n: usize,
    path: impl Fn(usize) -> std::path::PathBuf,
) {
    let size = s.b.size_mb * 1_000_000;
    for r in 1..=n {
        let ok = !o.timed_out && s.verify(&path(r));
        o.verified.push(Some(ok));
        o.per_receiver.push(ok.then(|| mbit(size, o.wall_s)));
    }
    o.extra.insert(
        "per_receiver_basis".into(),
        "file size over the sender's wall time".into(),
    );
}

/// udp-sender to `n` udp-receivers.
pub(crate) fn run_udpcast(s: &Setup<'_>, n: usize, port: u16) -> Result<Outcome> {
    let (topo, work) = (s.topo, s.work);
    let dir = work.join(format!("udpcast-{port}"));
    let mut kids = Vec::new();
    for r in 1..=n {
        let mut k = topo.cmd(r, Path::new("udp-receiver"));
        k.args([
            "--interface",
            &topo.iface,
            "--nokbd",
            "--mcast-rdv-address",
            RDV,
        ])
        .args(["--portbase", &port.to_string(), "--file"])
        .arg(dir.join(format!("r{r}.bin")));
        kids.push(proc::spawn_logged(&mut k, &dir, &format!("r{r}"))?);
    }
    std::thread::sleep(Duration::from_millis(500));
    let mut c = topo.cmd(0, Path::new("udp-sender"));
    c.args([
        "--interface",
        &topo.iface,
        "--nokbd",
        "--mcast-rdv-address",
        RDV,
        "--nopointopoint",
    ])
    .args([
        "--min-receivers",
        &n.to_string(),
        "--portbase",
        &port.to_string(),
    ])
    .arg("--file")
    .arg(s.file);
    let (mut o, mut cpu) = run_sender(s, &mut c, &dir, &UDPCAST)?;
    for k in &mut kids {
        k.wait_for(if o.timed_out {
            Duration::ZERO
        } else {
            Duration::from_secs(10)
        });
    }
    cpu.mark(2);
    o.cpu = cpu;
    outcome_files(s, &mut o, n, |r| dir.join(format!("r{r}.bin")));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(o)
}

/// The NORM file program's source, built on first use into the run's work directory.
const NORMFILE_CC: &str = include_str!("../../../bench/norm/normfile.cc");

/// `normfile` (`bench/norm/normfile.cc`) built with g++ against libnorm in `work`, once per
/// folder: the benchmark's NORM contender and the libnorm side of the interop tests
/// (`crates/cli/tests/libnorm.rs`).
pub fn normfile(work: &Path) -> Result<std::path::PathBuf> {
    build_program(
        work,
        "normfile",
        ("normfile.cc", NORMFILE_CC),
        "g++",
        &["-lnorm"],
    )
}

/// The program `name` built into `work` from `(file name, source)` with `compiler -O2` and
/// `flags` after the source, once per folder (the contenders written against a library:
/// normfile, openpgm_peer).
pub(crate) fn build_program(
    work: &Path,
    name: &str,
    (file, source): (&str, &str),
    compiler: &str,
    flags: &[&str],
) -> Result<std::path::PathBuf> {
    let bin = work.join(name);
    if bin.exists() {
        return Ok(bin);
    }
    let src = work.join(file);
    std::fs::write(&src, source)
        .map_err(crate::BenchError::io(format!("write {}", src.display())))?;
    let out = Command::new(compiler)
        .args(["-O2", "-o"])
        .arg(&bin)
        .arg(&src)
        .args(flags)
        .output()
        .map_err(crate::BenchError::io(format!("run {compiler}")))?;
    if !out.status.success() {
        return Err(crate::BenchError::Failed(format!(
            "building {file} with {compiler} {} failed: {}",
            flags.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(bin)
}

const NORM: SenderOf = SenderOf {
    program: "normfile send",
    tool: "norm",
    command: "normfile send GROUP PORT IFACE 1e9 <receiver ids> FILE; normfile recv GROUP PORT IFACE ID DIR (bench/norm/normfile.cc: libnorm, 1,400-byte segments, blocks of 64 + up to 16 parity on demand, watermark acknowledged by every receiver)",
};

const NORM_CC: SenderOf = SenderOf {
    tool: "norm-cc",
    command: "normfile send GROUP PORT IFACE 1e9 <receiver ids> FILE cc (NORM-CC, 1 Gbit/s ceiling); normfile recv GROUP PORT IFACE ID DIR",
    ..NORM
};

const NORM_LAN: SenderOf = SenderOf {
    tool: "norm-lan",
    command: "normfile send GROUP PORT IFACE 1e9 <receiver ids> FILE grtt=0.001 (round-trip estimate started at 1 ms); normfile recv GROUP PORT IFACE ID DIR",
    ..NORM
};

/// NORM's sender to `n` NORM receivers, as `tool` (`norm`, `norm-cc` or `norm-lan`) runs it.
pub(crate) fn run_norm(s: &Setup<'_>, n: usize, port: u16, tool: &str) -> Result<Outcome> {
    let (topo, work) = (s.topo, s.work);
    let prog = normfile(work)?;
    let dir = work.join(format!("norm-{port}"));
    let group = GROUP_IP;
    let mut kids = Vec::new();
    let mut ids = Vec::new();
    for r in 1..=n {
        let out = dir.join(format!("r{r}"));
        std::fs::create_dir_all(&out)
            .map_err(crate::BenchError::io(format!("create {}", out.display())))?;
        // Node ids apart from the sender's (1): NORM ignores packets from its own id.
        let id = (0x1000 + r).to_string();
        let mut k = topo.cmd(r, &prog);
        k.args(["recv", group, &port.to_string(), &topo.iface, &id])
            .arg(&out);
        ids.push(id);
        kids.push(proc::spawn_logged(&mut k, &dir, &format!("r{r}"))?);
    }
    std::thread::sleep(Duration::from_millis(500));
    let mut c = topo.cmd(0, &prog);
    c.args(["send", group, &port.to_string(), &topo.iface, "1e9"])
        .arg(ids.join(","))
        .arg(s.file);
    let of = match tool {
        "norm-cc" => &NORM_CC,
        "norm-lan" => &NORM_LAN,
        _ => &NORM,
    };
    match tool {
        "norm-cc" => c.arg("cc"),
        "norm-lan" => c.arg("grtt=0.001"),
        _ => &mut c,
    };
    let (mut o, mut cpu) = run_sender(s, &mut c, &dir, of)?;
    for k in &mut kids {
        k.stop();
    }
    cpu.mark(2);
    o.cpu = cpu;
    outcome_files(s, &mut o, n, |r| dir.join(format!("r{r}/bench.bin")));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(o)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::run::{tempfile_dir, write_pseudo_random};
    use crate::topo::Topo;

    /// NORM's sender (`norm-lan`) and two receivers on this host (loopback) move a 2 MB file: the
    /// program builds, every receiver's file is the sender's, and the sender ends once both
    /// acknowledged it. Needs g++ and libnorm-dev (CI installs them); skipped otherwise,
    /// except under CI.
    #[test]
    fn norm_moves_a_file_on_loopback() {
        if !present("norm") {
            assert!(
                std::env::var_os("CI").is_none(),
                "g++ and libnorm-dev are missing under CI"
            );
            eprintln!("skipped: g++ or libnorm-dev missing");
            return;
        }
        let work = tempfile_dir("norm-test").unwrap();
        let file = work.join("bench.bin");
        write_pseudo_random(&file, 2_000_000).unwrap();
        let mut b = crate::run::tests::bench();
        b.size_mb = 2;
        b.timeout = Duration::from_secs(60);
        let topo = Topo::loopback();
        let s = Setup {
            b: &b,
            topo: &topo,
            exe: Path::new("rmcast"),
            file: &file,
            digest: proc::digest(&file).unwrap(),
            work: &work,
        };
        let o = run_norm(&s, 2, 47_291, "norm-lan").unwrap();
        std::fs::remove_dir_all(&work).unwrap();
        assert!(!o.timed_out && o.error.is_none(), "{o:?}");
        assert_eq!(o.verified, [Some(true), Some(true)], "{o:?}");
    }
}
