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
