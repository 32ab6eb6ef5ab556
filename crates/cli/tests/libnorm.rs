//! NRL's libnorm (Debian's libnorm 1.5.9, through `bench/norm/normfile.cc`) across the lossy
//! bridge of the interop tests (issue 62, item 4): two network namespaces of an
//! `rmcast_lab::netns::Segment`, the bridge dropping P % of the Ethernet frames it forwards
//! both ways (nftables, `bridge` family, `forward` hook), as `openpgm_open.rs` does for
//! OpenPGM.
//!
//! `normfile send` → `normfile recv`, a 1,000,000-byte file, at 0, 1 and 10 % frame loss,
//! with and without NORM-CC: the bed and the libnorm side that the rmcast ↔ libnorm tests
//! share, and libnorm's own behaviour at those losses (the file arrives byte-exact, the
//! sender ends once the receiver acknowledged its watermark; at 10 % frames were dropped).
//!
//! Needs root, iproute2, nftables, g++ and libnorm-dev: skipped with a note otherwise,
//! except under CI (env `CI` set), where a missing part other than root fails.

mod common;

use common::{explain, Bed, Proc};
use rmcast_lab::proc::in_netns as command_in;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());
const DEADLINE: Duration = Duration::from_secs(90);
const GROUP: &str = "239.62.0.5";
const PORT: &str = "7610";
/// The receiver's NORM node id (the sender's is 1).
const RECEIVER_ID: &str = "4097";

/// Why the test cannot run here, if it cannot; under CI only "not root" is a skip.
fn cannot_run() -> Option<String> {
    common::skip_unless_ci(common::cannot_run_netns_nft().or_else(|| {
        let gxx = Command::new("g++")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let lib = Path::new("/usr/include/normApi.h").exists();
        (!gxx || !lib).then(|| "g++ or libnorm-dev (normApi.h) is not installed".to_string())
    }))
}

/// Two hosts on a bridge dropping `loss` of the frames both ways, and `normfile` built;
/// `None` (said on standard error) where the test cannot run.
fn bed(loss: f64) -> Option<(Bed, PathBuf)> {
    if let Some(why) = cannot_run() {
        eprintln!("skipped: libnorm over a lossy bridge: {why}");
        return None;
    }
    let bed = Bed::new(&SERIAL, 2);
    bed.seg.frame_loss(loss, None).expect("frame loss");
    let bin = rmcast_bench::normfile(bed.work.path()).expect("build bench/norm/normfile.cc");
    Some((bed, bin))
}

/// `normfile` with `args` in host `h`'s namespace, output piped.
fn normfile(bed: &Bed, h: usize, bin: &Path, args: &[&str]) -> Proc {
    Proc::spawn(
        command_in(&bed.seg.host(h), bin)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .expect("start normfile")
}

/// libnorm to libnorm: a file of 1,000,000 bytes at `loss`, `cc` NORM-CC on.
fn libnorm_to_libnorm(loss: f64, cc: bool) {
    let Some((bed, bin)) = bed(loss) else {
        return;
    };
    let data: Vec<u8> = (0..1_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    let file = bed.file("data.bin", &data);
    let out = bed.work.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let o = out.to_string_lossy().into_owned();
    let mut recv = normfile(
        &bed,
        1,
        &bin,
        &["recv", GROUP, PORT, "eth0", RECEIVER_ID, &o],
    );
    std::thread::sleep(Duration::from_millis(300));
    let f = file.to_string_lossy().into_owned();
    let mut args = vec!["send", GROUP, PORT, "eth0", "100e6", RECEIVER_ID, &f];
    if cc {
        args.push("cc");
    }
    let start = Instant::now();
    let mut send = normfile(&bed, 0, &bin, &args);
    let s = send
        .finish(Instant::now() + DEADLINE)
        .expect("normfile send ends");
    let took = start.elapsed();
    recv.kill();
    assert!(s.status.success(), "normfile send: {}", explain(&s));
    let got = std::fs::read(out.join("bench.bin")).expect("the receiver wrote bench.bin");
    let dropped = bed.seg.frames_dropped();
    eprintln!(
        "libnorm -> libnorm at {}% frame loss (cc {cc}): {:.2} s, {dropped} frames dropped",
        loss * 100.0,
        took.as_secs_f64()
    );
    assert!(
        got == data,
        "{} bytes received, {} sent",
        got.len(),
        data.len()
    );
    if loss >= 0.05 {
        assert!(dropped > 0, "no frame dropped at {loss}");
    }
}

#[test]
fn libnorm_to_libnorm_without_loss() {
    libnorm_to_libnorm(0.0, false);
}

#[test]
fn libnorm_to_libnorm_at_1_percent_frame_loss() {
    libnorm_to_libnorm(0.01, false);
}

#[test]
fn libnorm_to_libnorm_at_10_percent_frame_loss() {
    libnorm_to_libnorm(0.10, false);
}

#[test]
fn libnorm_to_libnorm_at_10_percent_frame_loss_under_norm_cc() {
    libnorm_to_libnorm(0.10, true);
}
