//! `rmcast sim` and `rmcast bench sim` end to end.

#[path = "../../../tools/wireshark/tshark.rs"]
mod tshark;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/examples")
        .join(name)
}

fn sim(scenario: &Path, out: &Path, threads: &str, extra: &[&str]) -> std::process::Output {
    Command::cargo_bin("rmcast")
        .unwrap()
        .env("RAYON_NUM_THREADS", threads)
        .arg("sim")
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn every_example_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = 0;
    for entry in std::fs::read_dir(example("")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let out = dir.path().join(path.file_stem().unwrap());
        let o = sim(&path, &out, "2", &[]);
        assert!(
            o.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let csv = std::fs::read_to_string(out.join("runs.csv")).unwrap();
        let jsonl = std::fs::read_to_string(out.join("runs.jsonl")).unwrap();
        assert!(csv.lines().count() >= 2);
        assert_eq!(csv.lines().count() - 1, jsonl.lines().count());
        for line in jsonl.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(v["seed"].is_u64() && v["events"].as_u64().unwrap() > 0);
        }
        seen += 1;
    }
    assert!(seen >= 10, "one example per generator, and bap and rra");
}

#[test]
fn sweeps_are_byte_identical_across_runs_and_thread_counts() {
    let dir = tempfile::tempdir().unwrap();
    let sc = example("bus-saw.toml");
    let mut outputs = Vec::new();
    for (i, threads) in ["1", "2", "2"].iter().enumerate() {
        let out = dir.path().join(format!("r{i}"));
        let o = sim(&sc, &out, threads, &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        outputs.push(std::fs::read(out.join("runs.csv")).unwrap());
    }
    assert_eq!(outputs[0], outputs[1], "1 thread vs 2 threads");
    assert_eq!(outputs[1], outputs[2], "the same sweep twice");
    assert_eq!(
        String::from_utf8(outputs[0].clone())
            .unwrap()
            .lines()
            .count(),
        7
    );
}

#[test]
fn a_bad_scenario_names_file_and_key_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[topology]\nkind = \"bus\"\nreceivers = \"many\"\n[protocol]\nname = \"saw\"\n",
    )
    .unwrap();
    let o = sim(&bad, &dir.path().join("o"), "1", &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.toml"), "{err}");
    assert!(err.contains("`topology.receivers`"), "{err}");
    assert!(err.contains("expected"), "{err}");
}

#[test]
fn an_unreachable_receiver_is_named_and_exits_2_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    // Node 4 sits on an island (3-4) that the source's (0-1-2) does not reach.
    std::fs::write(dir.path().join("islands.txt"), "0 1\n1 2\n3 4\n").unwrap();
    let broken = dir.path().join("broken.toml");
    std::fs::write(
        &broken,
        "name = \"cut\"\nseed = [1, 2]\n[topology]\nkind = \"edge_list\"\nfile = \"islands.txt\"\n\
         receiver_ids = [2, 4]\n[protocol]\nname = \"srm\"\n[traffic]\nmessages = 5\n",
    )
    .unwrap();
    let out = dir.path().join("o");
    let o = sim(&broken, &out, "1", &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("broken.toml: run 0 (seed = 1): receiver node 4"),
        "{err}"
    );
    assert!(
        err.contains("unreachable from the source (node 0)"),
        "{err}"
    );
    assert!(
        !out.join("runs.csv").exists(),
        "no results for a broken scenario"
    );
}

#[test]
fn records_and_pcap() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("t.pcap");
    let out = dir.path().join("o");
    let o = sim(
        &example("edge-list.toml"),
        &out,
        "2",
        &["--records", "--pcap", pcap.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let packets = std::fs::read_to_string(out.join("packets.csv")).unwrap();
    // 3 runs of 1000 data packets each.
    assert_eq!(packets.lines().count(), 1 + 3000);
    let losses = std::fs::read_to_string(out.join("losses.csv")).unwrap();
    assert!(losses.lines().count() > 1);
    let bytes = std::fs::read(&pcap).unwrap();
    assert_eq!(&bytes[..4], &0xa1b2_3c4du32.to_le_bytes());

    if !tshark::available() {
        return;
    }
    let o = std::process::Command::new("tshark")
        .arg("-r")
        .arg(&pcap)
        .args([
            "-T",
            "fields",
            "-e",
            "ip.src",
            "-e",
            "ip.dst",
            "-e",
            "udp.dstport",
        ])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1000, "run 0's datagrams");
    // Node 0 (the source) is 10.0.0.1; group 1 is 239.1.0.1.
    assert!(
        lines.iter().all(|l| *l == "10.0.0.1\t239.1.0.1\t7001"),
        "{}",
        lines[0]
    );
}

#[test]
fn bench_sim_quick_prints_the_three_figures() {
    let o = Command::cargo_bin("rmcast")
        .unwrap()
        .args(["bench", "sim", "--quick"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["a_hold_model"]["events_per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(v["a_hold_model"]["pending_events"], 100_000);
    assert!(
        v["b_binary_tree_multicast"]["packet_hops_per_second"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(v["b_binary_tree_multicast"]["lost"].as_u64().unwrap() > 0);
    assert!(v["c_transit_stub_large"]["wall_seconds"].as_f64().unwrap() > 0.0);
    assert_eq!(v["c_transit_stub_large"]["receivers"], 10_000);
}
