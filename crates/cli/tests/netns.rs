//! Multi-host tests: runs scripts/netns/run.sh (network namespaces on a bridge, 1 sender and
//! 5 receivers, 20 MB, 10 % loss; a receiver killed halfway; a junk flood) with this build's
//! `rmcast`: with the default protocol (all four scenarios, IPv6 included), then with
//! `--protocol prmp` and with `--protocol dsp` on two regions (scenarios 1–3). The runs go one
//! after the other (one test), so they do not compete for the two cores. Needs root and
//! iproute2; otherwise it says clearly that it did not run.

use std::path::Path;
use std::process::Command;

#[test]
fn netns_multi_host_scenarios() {
    // The same conditions `rmcast_lab::netns::Segment` needs: Linux, root, `ip`.
    if let Err(why) = rmcast_lab::netns::available() {
        eprintln!("skipped: multi-host netns tests: {why} (CI runs them as root with iproute2)");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/netns/run.sh");
    // (what, extra `rmcast send` options, scenarios, regions)
    let runs: [(&str, &[&str], &str, &str); 3] = [
        ("default protocol", &[], "1 2 3 4", "0"),
        ("prmp", &["--protocol", "prmp"], "1 2 3", "0"),
        ("dsp, 2 regions", &["--protocol", "dsp"], "1 2 3", "2"),
    ];
    for (what, extra, scenarios, regions) in runs {
        let out = Command::new("bash")
            .arg(&script)
            .arg(env!("CARGO_BIN_EXE_rmcast"))
            .args(extra)
            .env("NETNS_SCENARIOS", scenarios)
            .env("NETNS_REGIONS", regions)
            .output()
            .expect("run scripts/netns/run.sh");
        let stdout = String::from_utf8_lossy(&out.stdout);
        eprintln!("---- {what}\n{stdout}");
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "netns scenarios failed ({what})");
        assert!(stdout.contains("netns: all scenarios passed"), "{what}");
    }
}
