//! Whether tshark runs on this machine, for the tests that read captures with it
//! (`crates/cli/tests/dissector.rs`, `crates/cli/tests/sim_cli.rs` and
//! `crates/sim/tests/pgm_rfc3208_tshark.rs` include this file with `#[path]`, as the OpenPGM
//! tests include `bench/pgm/peer.rs`: a test file of two crates, with no crate between them).

use std::process::Command;

/// Whether `tshark -v` runs and exits 0. When it does not, says on standard error that the
/// calling test skips its tshark check (`.ci/run` installs tshark as root).
pub fn available() -> bool {
    let ok = Command::new("tshark")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: tshark is not installed (apt-get install tshark; .ci/run installs it)");
    }
    ok
}

/// `tshark -r FILE ARGS -T fields -e F…`: one row per frame, the values of a field repeated
/// in a frame `,`-separated. Panics (these are tests) when tshark fails.
#[allow(dead_code)] // the crates/cli tests that include this file do not use it
pub fn fields(file: &std::path::Path, args: &[String], fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(file).args(args).args(["-T", "fields"]);
    cmd.args([
        "-E",
        "separator=|",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark runs");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('|').map(str::to_owned).collect())
        .collect()
}
