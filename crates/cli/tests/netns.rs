//! Multi-host tests: runs scripts/netns/run.sh (network namespaces on a bridge, 1 sender and
//! 5 receivers, 20 MB, 10 % loss; a receiver killed halfway; a junk flood) with this build's
//! `rmcast`. Needs root and iproute2; otherwise it says clearly that it did not run.

use std::path::Path;
use std::process::Command;

#[test]
fn netns_multi_host_scenarios() {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if !root {
        eprintln!("skipped: multi-host netns tests need root (CI runs them as root)");
        return;
    }
    if Command::new("ip").arg("-V").output().is_err() {
        eprintln!("skipped: multi-host netns tests need `ip` (apt-get install iproute2)");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/netns/run.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_rmcast"))
        .output()
        .expect("run scripts/netns/run.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "netns scenarios failed");
    assert!(stdout.contains("netns: all scenarios passed"));
}
