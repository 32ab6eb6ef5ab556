//! `rmcast testbed`: the scenarios under `scenarios/testbed/` run both ways — `rmcast sim`
//! and the namespace testbed (hosts as namespaces, every link emulated with its delay,
//! bandwidth and loss rules per frame, `rmcast relay` on every router) — and both complete: every
//! receiver holds every message (on the testbed, byte-exact: a receiver exits 0 only on a verified
//! file). Bounds between the two: the testbed delivers at least what the simulator delivers (every
//! message; the testbed's count adds the file's framing messages); where only the source repairs
//! (saw, bap, rra, prmp, ff, csp) its repairs are within 35 % of the simulator's or, for small
//! counts, within the counting noise ([`repairs_agree`]; one run each measured 4–9 % apart; csp,
//! three testbed runs: 0.83–1.19 of the simulator's 463; the loss is random on the testbed, the
//! simulator's seed is fixed); and it says that link delays were emulated. The simulator's xtp does
//! not complete this file (the seed's WTIMER back-off on single-packet writes, issue 19's xtp
//! note): its row is checked on the testbed only. `saw-bus.toml` is seed 000's shared Ethernet: one
//! emulated 10 Mb/s medium on the testbed, loss at every member's receiver. csp and cp run with
//! each lower router's relay as its region's local exchange (`--region`); `prmp-relays` is
//! multi-level prmp, each lower router's relay its region's polling parent, `dsp-relays` dsp with
//! each lower router's relay its region's designated receiver, and there the sender's packets
//! (data, polls, repairs to the relays) are within 35 % of the simulator's and the receivers'
//! duplicates within 0.65-1.6 of it, both as the median of three testbed runs (the duplicates vary
//! run to run on the testbed, with occasional outliers).
//!
//! `--agree N` (both sides N times, a verdict per metric) is checked for its files and exit
//! status on a small tree, not for agreement (docs/results/agreement.md measures that).
//!
//! Needs Linux, root and iproute2; otherwise each test prints why it did not run.

mod common;

use std::path::Path;

/// Protocols whose tree file is known to fail in the simulator, with why: the test checks
/// they still fail there (so that a fix removes the entry) and skips their testbed run.
const KNOWN_FAILING: [(&str, &str); 1] = [(
    "norm",
    "norm-tree (5 % loss on every link) ends incomplete in the simulator: delivered_min 898 \
     of 1,000 after 241 repairs; one receiver's last losses are still unrepaired when the \
     sender's 20 flush rounds (2·GRTT each, a GRTT of ~5 ms by then) run out (at 1 % it \
     completes; found at issue 62's stop 12, the tail not traced)",
)];

fn csv_row(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let row: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    head.into_iter().zip(row).collect()
}

fn field<'a>(row: &'a [(String, String)], k: &str) -> &'a str {
    row.iter()
        .find(|(h, _)| h == k)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no column {k}: {row:?}"))
}

/// Whether the testbed's repair count `tb` agrees with the simulator's `sim`: within 35 %, or,
/// for small counts, within three standard deviations of the difference of two Poisson counts
/// (saw-bus's 37 repairs: 12 testbed runs gave 30-50 and simulator seeds 1-8 gave 26-43, so a
/// 35 % band alone fails about one run in ten).
fn repairs_agree(sim: u64, tb: u64) -> bool {
    let diff = (tb as f64 - sim as f64).abs();
    diff <= (0.35 * sim as f64).max(3.0 * ((sim + tb) as f64).sqrt())
}

#[test]
fn repair_counts_agree_by_the_larger_of_35_percent_and_counting_noise() {
    assert!(repairs_agree(37, 50) && repairs_agree(37, 26) && repairs_agree(37, 60));
    assert!(!repairs_agree(37, 70) && !repairs_agree(37, 10));
    assert!(repairs_agree(3607, 3351) && !repairs_agree(3607, 2200));
}

#[test]
fn testbed_scenarios_complete_in_the_simulator_and_on_the_testbed() {
    if let Err(why) = rmcast_lab::netns::available() {
        eprintln!("skipped: testbed: {why} (CI runs it as root)");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // Every protocol on sockets runs its `<name>-tree` scenario, and these besides (dsp has
    // no tree of its own: its designated receivers are the relays of `dsp-relays`).
    let others = [
        ("saw", "saw-bus".to_string(), "0"),
        ("prmp", "prmp-relays".to_string(), "3"),
        ("dsp", "dsp-relays".to_string(), "3"),
    ];
    // A protocol without a tree file and not among the others fails on the missing file.
    let trees: Vec<&str> = rmcast_proto::protocols::socket_protocols()
        .map(|p| p.name)
        .filter(|p| {
            let tree = root.join(format!("scenarios/testbed/{p}-tree.toml"));
            tree.exists() || others.iter().all(|o| o.0 != *p)
        })
        .collect();
    let files = trees
        .iter()
        .map(|p| (*p, format!("{p}-tree"), "3"))
        .chain(others);
    for (p, name, relays) in files {
        let file = root.join(format!("scenarios/testbed/{name}.toml"));
        let out = tempfile::tempdir().unwrap();
        let sim = out.path().join("sim");
        let o = common::rmcast(&[
            "sim".as_ref(),
            file.as_os_str(),
            "--out".as_ref(),
            sim.as_os_str(),
        ]);
        assert!(o.status.success(), "{p} sim: {}", common::explain(&o));
        let s = csv_row(&sim.join("runs.csv"));
        if let Some((_, why)) = KNOWN_FAILING.iter().find(|k| k.0 == p) {
            // Pinned as failing: it must still fail in the simulator (when it completes, the
            // pin goes and the testbed half runs again).
            assert_eq!(
                field(&s, "completed"),
                "false",
                "{p} now completes {name} in the simulator: remove it from KNOWN_FAILING"
            );
            eprintln!("{name}: known failure, testbed not run: {why}");
            continue;
        }
        let testbed = |k: usize| {
            let tb = out.path().join(format!("tb{k}"));
            let o = common::rmcast(&[
                "testbed".as_ref(),
                file.as_os_str(),
                "--out".as_ref(),
                tb.as_os_str(),
                "--quiet".as_ref(),
            ]);
            assert!(o.status.success(), "{p} testbed: {}", common::explain(&o));
            csv_row(&tb.join("runs.csv"))
        };
        let t = testbed(0);
        eprintln!("{name}: sim {s:?}\n{name}: testbed {t:?}");
        assert_eq!(field(&t, "completed"), "true", "{p}");
        assert_eq!(
            field(&t, "relays"),
            relays,
            "{name}: a relay on every router"
        );
        assert_eq!(field(&t, "link_delay_emulated"), "true", "{p}");
        let n = |r: &[(String, String)], k: &str| field(r, k).parse::<u64>().unwrap();
        // The files' [traffic] messages.
        let messages = if name == "saw-bus" { 500 } else { 1000 };
        assert!(n(&t, "delivered_min") >= messages, "{name}");
        assert!(n(&t, "frames_dropped") > 0, "{p}: loss was emulated");
        if p == "xtp" {
            continue;
        }
        assert_eq!(field(&s, "completed"), "true", "{p}");
        assert_eq!(n(&s, "delivered_min"), messages, "{name}");
        if name == "prmp-relays" || name == "dsp-relays" {
            // Their duplicates vary run to run on the testbed with occasional outliers
            // (prmp-relays, 16 runs: 169-217 but once 301 and once 444 against the
            // simulator's 199), so the counts compared are the medians of three testbed runs.
            let more = [testbed(1), testbed(2)];
            let median = |k: &str| {
                let mut v: Vec<u64> = std::iter::once(&t).chain(&more).map(|r| n(r, k)).collect();
                v.sort_unstable();
                v[1]
            };
            eprintln!("{name}: testbed runs 2 and 3 {more:?}");
            // The relays repair their receivers, the sender only the relays (prmp: its DATA,
            // POLLs and repairs, one run measured 1,233 against 1,174; dsp with designated
            // relays: 1,192 against 1,171).
            let (sim, tb) = (n(&s, "sender_packets_sent"), median("sender_packets_sent"));
            let ratio = tb as f64 / sim.max(1) as f64;
            assert!(
                (0.65..=1.35).contains(&ratio),
                "{name}: testbed sender packets {tb} against the simulator's {sim}"
            );
            // The relays repair their children: prmp's duplicates a third of single-level
            // prmp's, both ways (two testbed runs: 186 and 191 against the simulator's 199).
            // dsp's vary more on the testbed than between the simulator's seeds: 21 testbed
            // runs gave 339-553 (0.88-1.44 of the simulator's 385; one CI run failed the
            // earlier bound of 1.35 at 553), the simulator 344-424 over seeds 1-10. The band
            // is the measured spread with a margin.
            let (sim, tb) = (n(&s, "receiver_duplicates"), median("receiver_duplicates"));
            let ratio = tb as f64 / sim.max(1) as f64;
            assert!(
                (0.65..=1.6).contains(&ratio),
                "{name}: testbed duplicates {tb} against the simulator's {sim}"
            );
        } else if ["saw", "bap", "rra", "prmp", "ff", "csp"].contains(&p) {
            // A deliberate subset: protocols where only the source repairs, whose repair
            // counts were held to the simulator's when their scenarios came (55748df, 266d231).
            let (sim, tb) = (n(&s, "originated_repair"), n(&t, "sender_repairs"));
            assert!(
                repairs_agree(sim, tb),
                "{name}: testbed repairs {tb} against the simulator's {sim}"
            );
        }
    }
}

/// Loss models other than bernoulli, and packet filters, run on the testbed too (the
/// emulator asks `rmcast_sim`'s loss states per frame): every 5th data packet on each link
/// direction and Gilbert–Elliott bursts at the receivers; the transfer completes and frames
/// were dropped.
#[test]
fn every_nth_and_gilbert_elliott_losses_are_emulated() {
    if let Err(why) = rmcast_lab::netns::available() {
        eprintln!("skipped: testbed: {why} (CI runs it as root)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("g.toml");
    std::fs::write(
        &f,
        "seed = 1\n[topology]\nkind = \"binary_tree\"\nheight = 1\nsource_link = true\n\
         delay_ms = 1.0\nbandwidth_bps = 10000000\n\
         [protocol]\nname = \"saw\"\ntimeout_ms = 20\n\
         [traffic]\nmessages = 100\nsize = 1000\ninterval_ms = 2\n\
         [[loss]]\nmodel = \"every_nth\"\nn = 5\nat = \"link\"\nfilter = \"data\"\n\
         [[loss]]\nmodel = \"gilbert_elliott\"\np_gb = 0.02\np_bg = 0.5\nat = \"rx\"\n\
         nodes = \"receivers\"\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = common::rmcast(&[
        "testbed".as_ref(),
        f.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--quiet".as_ref(),
    ]);
    assert!(o.status.success(), "{}", common::explain(&o));
    let t = csv_row(&out.join("runs.csv"));
    assert_eq!(field(&t, "completed"), "true");
    assert_eq!(field(&t, "link_delay_emulated"), "true");
    let n = |k: &str| field(&t, k).parse::<u64>().unwrap();
    // At least a fifth of the data frames on the source's link (100 messages and repairs).
    assert!(n("frames_dropped") >= 20, "{t:?}");
    assert!(n("sender_repairs") >= 20, "{t:?}");
}

/// `rmcast testbed --agree 2` on a small pgm tree: both sides run twice, the table and
/// `agreement.csv` / `agreement.json` hold every metric with a verdict, the exit status is
/// the verdicts' (0 all agree, 1 not), and both sides' runs carry the columns the judging
/// reads. Whether they agree is the measurement's business (docs/results/agreement.md).
/// A swept file and N = 1 are refused with status 2.
#[test]
fn agree_runs_both_sides_and_writes_a_verdict_per_metric() {
    if let Err(why) = rmcast_lab::netns::available() {
        eprintln!("skipped: testbed: {why} (CI runs it as root)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.toml");
    let text = "seed = 3\n[topology]\nkind = \"binary_tree\"\nheight = 1\nsource_link = true\n\
         delay_ms = 1.0\nbandwidth_bps = 10000000\n\
         [protocol]\nname = \"pgm\"\n\
         [traffic]\nmessages = 100\nsize = 1000\ninterval_ms = 2\n\
         [[loss]]\nmodel = \"bernoulli\"\np = 0.05\nat = \"link\"\n";
    std::fs::write(&f, text).unwrap();
    let out = dir.path().join("out");
    let o = common::rmcast(&[
        "testbed".as_ref(),
        "--agree".as_ref(),
        "2".as_ref(),
        f.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--quiet".as_ref(),
    ]);
    let code = o.status.code();
    assert!(matches!(code, Some(0 | 1)), "{}", common::explain(&o));
    let csv = std::fs::read_to_string(out.join("agreement.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in ["metric", "sim_mean", "testbed_ci_hi", "verdict", "agree"] {
        assert!(head.contains(&col), "{col}: {csv}");
    }
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let metrics: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(
        metrics,
        [
            "completed",
            "completion_time_s",
            "repairs_per_loss",
            "all_repairs_per_loss",
            "duplicates_per_receiver",
            "feedback_per_delivered",
            "repairs_per_data_loss",
            "all_repairs_per_data_loss"
        ]
    );
    let verdicts: Vec<&str> = rows.iter().map(|r| *r.last().unwrap()).collect();
    let all = verdicts.iter().all(|v| *v == "true");
    assert_eq!(code == Some(0), all, "exit status against {verdicts:?}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("completion_time_s") && stdout.contains("agree"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("agreement.json")).unwrap())
            .unwrap();
    assert_eq!(json["runs_per_side"], 2);
    assert_eq!(json["first_seed"], 3);
    assert_eq!(json["all_agree"], all);
    // Both sides measured every run: completion time and the counts the ratios use.
    for side in ["sim", "testbed"] {
        let text = std::fs::read_to_string(out.join(side).join("runs.csv")).unwrap();
        assert_eq!(text.lines().count(), 3, "{side}: {text}");
        let head = text.lines().next().unwrap();
        for col in ["last_delivery_s", "sender_repairs", "receiver_control_sent"] {
            assert!(head.split(',').any(|c| c == col), "{side} {col}: {head}");
        }
    }
    let tb = csv_row(&out.join("testbed/runs.csv"));
    let t: f64 = field(&tb, "last_delivery_s").parse().unwrap();
    // 100 messages every 2 ms: at least 0.2 s from the first data to the last delivery.
    assert!(t > 0.19 && t < 60.0, "{tb:?}");
    // Refused before any run: a sweep, one run per side.
    let swept = dir.path().join("s.toml");
    std::fs::write(&swept, text.replace("p = 0.05", "p = [0.05, 0.1]")).unwrap();
    for (file, n) in [(&swept, "2"), (&f, "1")] {
        let o = common::rmcast(&[
            "testbed".as_ref(),
            "--agree".as_ref(),
            n.as_ref(),
            file.as_os_str(),
            "--out".as_ref(),
            dir.path().join("refused").as_os_str(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", common::explain(&o));
    }
}
