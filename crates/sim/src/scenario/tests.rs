use super::*;

fn parse(s: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(s, "t.toml", PathBuf::from("."))
}

const BASE: &str = r#"
seed = [1, 2]
[topology]
kind = "bus"
receivers = { from = 2, to = 6, step = 2 }
[protocol]
name = "saw"
timeout_ms = 20
[traffic]
messages = 10
size = 500
[[loss]]
model = "bernoulli"
p = [0.0, 0.05]
at = "interface"
"#;

#[test]
fn sweep_is_the_cross_product_in_a_fixed_order() {
    let sc = parse(BASE).unwrap();
    assert_eq!(sc.runs(), 2 * 3 * 2);
    let keys: Vec<&str> = sc.axes.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(keys, vec!["loss.0.p", "seed", "topology.receivers"]);
    let p = sc.point(1);
    assert_eq!(p.assignment[2].1, Value::Integer(4));
    assert_eq!(p.table["topology"]["receivers"], Value::Integer(4));
    assert_eq!(p.table["loss"][0]["p"], Value::Float(0.0));
}

#[test]
fn runs_are_deterministic_and_complete() {
    let sc = parse(BASE).unwrap();
    let a = to_csv(&run_sweep(&sc, RunOptions::default(), &|| {}).unwrap());
    let b = to_csv(&run_sweep(&sc, RunOptions::default(), &|| {}).unwrap());
    assert_eq!(a, b);
    assert_eq!(a.lines().count(), 13);
    let header: Vec<&str> = a.lines().next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    for line in a.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f[col("completed")], "true", "{line}");
        assert_eq!(f[col("delivered_min")], "10");
    }
}

#[test]
fn float_ranges_print_as_written() {
    let sc = parse(&BASE.replace(
        "p = [0.0, 0.05]",
        "p = { from = 0.0, to = 0.3, step = 0.1 }",
    ))
    .unwrap();
    let a = &sc.axes[0];
    assert_eq!(
        a.values,
        vec![
            Value::Float(0.0),
            Value::Float(0.1),
            Value::Float(0.2),
            Value::Float(0.3)
        ]
    );
}

/// `text` is refused with an error naming the file, `key` and what was expected.
fn assert_refused(text: &str, key: &str) {
    let s = parse(text).unwrap_err().to_string();
    assert!(s.starts_with("t.toml: key `"), "{s}");
    assert!(s.contains(&format!("`{key}`")), "{key}: {s}");
    assert!(s.contains("expected"), "{s}");
}

#[test]
fn errors_name_file_key_and_expectation() {
    let cases = [
        (
            BASE.replace("kind = \"bus\"", "kind = \"ring\""),
            "topology.kind",
        ),
        (
            BASE.replace("timeout_ms = 20", "timeout_ms = \"x\""),
            "protocol.timeout_ms",
        ),
        (
            BASE.replace("timeout_ms = 20", "timeot_ms = 20"),
            "protocol.timeot_ms",
        ),
        (BASE.replace("p = [0.0, 0.05]", "p = 1.5"), "loss.0.p"),
        (
            BASE.replace("at = \"interface\"", "at = \"moon\""),
            "loss.0.at",
        ),
        (
            BASE.replace("name = \"saw\"", "name = \"nope\""),
            "protocol.name",
        ),
        (BASE.replace("size = 500", "size = -1"), "traffic.size"),
        (BASE.replace("seed = [1, 2]", "seed = []"), "seed"),
        (BASE.replace("step = 2", "step = 0"), "topology.receivers"),
    ];
    for (text, key) in cases {
        assert_refused(&text, key);
    }
    let e = parse("[topology\n").unwrap_err();
    assert!(matches!(e, ScenarioError::Syntax { .. }));
}

/// A scenario over the edge list `file` (in the scenario's directory) from node 0 to
/// `receivers`.
fn over_edges(file: &str, receivers: &str) -> String {
    format!(
        "[topology]\nkind = \"edge_list\"\nfile = {file}\nreceiver_ids = {receivers}\n\
         [protocol]\nname = \"saw\"\n[traffic]\nmessages = 5\n"
    )
}

/// Two islands, 0-1-2 and 3-4, and a line 0-1-2-3-4.
fn edge_files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("islands.txt"), "0 1\n1 2\n3 4\n").unwrap();
    std::fs::write(dir.path().join("line.txt"), "0 1\n1 2\n2 3\n3 4\n").unwrap();
    dir
}

#[test]
fn an_unreachable_receiver_is_an_error_naming_it_and_the_run() {
    let dir = edge_files();
    let text = over_edges("\"islands.txt\"", "[2, 4]");
    let e = Scenario::parse(&text, "t.toml", dir.path().into()).unwrap_err();
    assert_eq!(
        e,
        ScenarioError::Unreachable {
            file: "t.toml".into(),
            run: "run 0".into(),
            node: 4,
            from: 0,
        }
    );
    let s = e.to_string();
    assert!(
        s.starts_with("t.toml: run 0: receiver node 4 is unreachable"),
        "{s}"
    );
    // Reachable receivers of the same graph are fine.
    let text = over_edges("\"islands.txt\"", "[1, 2]");
    Scenario::parse(&text, "t.toml", dir.path().into()).unwrap();
}

#[test]
fn a_sweep_fails_before_any_run_when_a_later_run_cannot_reach_a_receiver() {
    let dir = edge_files();
    let text = over_edges("[\"line.txt\", \"islands.txt\"]", "[2, 4]");
    // Run 0 is checked when the file is read, and builds.
    let sc = Scenario::parse(&text, "t.toml", dir.path().into()).unwrap();
    assert_eq!(sc.runs(), 2);
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let e = run_sweep(&sc, RunOptions::default(), &|| {
        finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    })
    .unwrap_err();
    let s = e.to_string();
    assert!(
        s.starts_with("t.toml: run 1 (topology.file = \"islands.txt\"): receiver node 4"),
        "{s}"
    );
    assert_eq!(finished.into_inner(), 0, "no run was simulated");
    // The reachable run alone runs.
    assert_eq!(
        run_indices(&sc, &[0], RunOptions::default(), &|| {})
            .unwrap()
            .len(),
        1
    );
}

/// Stops after `after` finished runs.
struct StopAfter {
    after: usize,
    done: std::sync::atomic::AtomicUsize,
}

impl Progress for StopAfter {
    fn done(&self) {
        self.done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    fn stopped(&self) -> bool {
        self.done.load(std::sync::atomic::Ordering::SeqCst) >= self.after
    }
}

#[test]
fn a_sweep_asked_to_stop_starts_no_more_runs() {
    let sc = parse(BASE).unwrap();
    let runs = sc.runs();
    assert!(runs >= 4, "{runs} runs");
    let p = StopAfter {
        after: 1,
        done: Default::default(),
    };
    let e = run_sweep(&sc, RunOptions::default(), &p).unwrap_err();
    let done = p.done.into_inner();
    // The runs in flight when it stopped finish (at most one per worker thread).
    assert!(
        done >= 1 && done <= rayon::current_num_threads(),
        "{done} runs"
    );
    assert_eq!(
        e.to_string(),
        format!("t.toml: stopped after {done} of {runs} runs")
    );
    // A progress that never stops runs them all.
    assert_eq!(
        run_sweep(&sc, RunOptions::default(), &|| {}).unwrap().len(),
        runs
    );
}

/// What each registered protocol is given so that a sender facing a silent receiver gives up
/// rather than waits for ever (where it can), on a tree whose round trip is about 80 ms.
fn give_up_keys(proto: &str) -> &'static str {
    match proto {
        "saw" | "rra" => "timeout_ms = 200\nmax_retransmissions = 3",
        "bap" => "rto_ms = 200\nmax_retransmissions = 3",
        "xtp" => "ctimeout_s = 5",
        "prmp" => "max_silent_polls = 3",
        _ => "",
    }
}

/// One run of `proto` from the root of a binary tree of height 2 (4 receivers behind
/// routers) to its leaves, 10 messages, 60 s at most, with `loss` (a rule's keys) at the
/// receiver with the highest node id; (completed, stop_reason, delivered_min, delivered_max).
fn cut_run(proto: &str, loss: &str) -> (String, String, u64, u64) {
    let head = format!(
        "seed = 1\n[topology]\nkind = \"binary_tree\"\nheight = 2\ndelay_ms = 10\n\
         [protocol]\nname = \"{proto}\"\n{}\n[traffic]\nmessages = 10\nsize = 512\n\
         interval_ms = 20\n[stop]\ntime_limit_s = 60\nwhen_complete = {}\n",
        give_up_keys(proto),
        // The unreliable sender completes once it has sent: run until the network is idle.
        proto != "unreliable",
    );
    let sc = parse(&head).unwrap_or_else(|e| panic!("{proto}: {e}"));
    let last = build::build(&sc, &sc.point(0))
        .unwrap()
        .receivers
        .into_iter()
        .max();
    let text = match (loss, last) {
        ("", _) => head,
        (l, Some(r)) => format!("{head}[[loss]]\n{l}\nat = \"rx\"\nnodes = [{}]\n", r.0),
        (_, None) => panic!("no receivers"),
    };
    let res = run_sweep(&parse(&text).unwrap(), RunOptions::default(), &|| {}).unwrap();
    let col = |k: &str| {
        let v = res[0].column(k);
        v.unwrap_or_else(|| panic!("{proto}: no {k}")).csv()
    };
    let n = |k: &str| col(k).parse::<u64>().unwrap();
    (
        col("completed"),
        col("stop_reason"),
        n("delivered_min"),
        n("delivered_max"),
    )
}

/// `completed` says that every receiver holds every message, for every registered protocol:
/// true without loss; false for a receiver that hears nothing (100 % loss on its side), and
/// for one cut off from data after the first data packet (a Gilbert–Elliott chain that
/// enters its lossy state for good) while it still sends feedback. Before, `completed` was
/// the sender's `Completed` alone, which NAK-based senders (pgm, srm, lms) report when their
/// linger ends, ACK-based ones when they give messages or receivers up (saw, bap, rra at their
/// retransmission limit, prmp removing a silent child, xtp at CTIMEOUT), and the unreliable
/// baseline once it has sent: those runs said `completed = true, stop_reason = complete`.
#[test]
fn completed_only_when_every_receiver_holds_every_message() {
    let cases = [
        ("silent", "model = \"bernoulli\"\np = 1.0"),
        (
            "cut off",
            "model = \"gilbert_elliott\"\np_gb = 1.0\np_bg = 0.0\nloss_good = 0.0\n\
             loss_bad = 1.0\nfilter = \"data\"",
        ),
    ];
    let mut sender_completed: Vec<(&str, &str)> = Vec::new();
    for entry in crate::registry::registry() {
        let proto = entry.name();
        let (completed, reason, min, max) = cut_run(proto, "");
        assert_eq!(
            (completed.as_str(), min, max),
            ("true", 10, 10),
            "{proto} without loss: {reason}"
        );
        for (case, loss) in cases {
            let (completed, reason, min, max) = cut_run(proto, loss);
            println!("{proto} {case}: completed {completed}, {reason}, delivered {min}..{max}");
            assert_eq!(completed, "false", "{proto} {case}: {reason}, {min}..{max}");
            assert!(min < 10, "{proto} {case}: the receiver got everything");
            if reason == "complete" {
                sender_completed.push((proto, case));
            }
        }
    }
    // The runs the old column got wrong: the sender completed, a receiver lacked data. A
    // deliberate subset of the table (the loop above runs every protocol): those whose
    // sender was seen to complete in both cases when the column was fixed.
    for proto in ["saw", "bap", "rra", "prmp", "pgm", "srm", "lms"] {
        for (case, _) in cases {
            assert!(
                sender_completed.contains(&(proto, case)),
                "{proto} {case}: the sender did not complete, so this run tests nothing new"
            );
        }
    }
}

const DUMBBELL: &str = r#"
[topology]
kind = "dumbbell"
receivers = 3
bandwidth_bps = 1000000
bottleneck_queue = 5
[protocol]
name = "unreliable"
[traffic]
messages = 200
size = 500
[cross]
from = 3
to = 4
messages = 50
size = 500
interval_ms = 10
start_ms = 500
[metrics]
sample_ms = 100
[stop]
when_complete = false
"#;

#[test]
fn a_dumbbell_drops_a_flood_at_its_bottleneck_and_carries_a_cross_flow() {
    let sc = parse(DUMBBELL).unwrap();
    let r = &run_sweep(&sc, RunOptions::default(), &|| {}).unwrap()[0];
    // 200 packets at once into a 5-packet queue: 6 cross the bottleneck (one on the wire).
    assert_eq!(r.column("delivered_min"), Some(&Metric::U(6)));
    assert_eq!(r.column("lost_queue_overflow"), Some(&Metric::U(194)));
    // From 0.5 s the cross flow's 50 datagrams, 50 kB/s of payload on a 125 kB/s bottleneck, all arrive.
    // (the last sample is the last 100 ms instant before the run ended: one may be in flight).
    let last = r.samples.last().unwrap();
    let (sent, received) = last.cross.unwrap();
    assert!(
        sent > 50 * 500 && sent - received <= sent / 50,
        "{sent} {received}"
    );
    assert!(last.source_rate.is_none(), "the baseline has no rate gauge");
    assert_eq!(last.lost_queue, 194);
    // One row per sample, the sampling instants 100 ms apart.
    let csv = series_csv(std::slice::from_ref(r));
    assert_eq!(csv.lines().count(), r.samples.len() + 1);
    assert!(csv.starts_with(&SERIES_COLUMNS.join(",")));
    assert!((r.samples[1].time_s - r.samples[0].time_s - 0.1).abs() < 1e-9);
}

#[test]
fn bad_cross_flows_and_dumbbells_are_errors_naming_the_key() {
    let cases = [
        (DUMBBELL.replace("from = 3", "from = 2"), "cross.from"),
        (DUMBBELL.replace("to = 4", "to = 5"), "cross.to"),
        (DUMBBELL.replace("to = 4", "to = 3"), "cross.to"),
        (DUMBBELL.replace("to = 4", "to = 99"), "cross.to"),
        (DUMBBELL.replace("to = 4", "to = -1"), "cross.to"),
        (DUMBBELL.replace("from = 3\n", ""), "cross.from"),
        (DUMBBELL.replace("from = 3", "form = 3"), "cross.form"),
        (
            DUMBBELL.replace("sample_ms = 100", "sample_ms = 0"),
            "metrics.sample_ms",
        ),
        (
            DUMBBELL.replace("receivers = 3", "receivers = 0"),
            "topology.receivers",
        ),
        (
            DUMBBELL.replace("bottleneck_queue = 5", "bottleneck_queue = -5"),
            "topology.bottleneck_queue",
        ),
        (
            DUMBBELL.replace("kind = \"dumbbell\"", "kind = \"bus\""),
            "topology.bottleneck_queue",
        ),
        (
            DUMBBELL.replace("receivers = 3", "receivers = 3\nrouting = \"hop\""),
            "topology.routing",
        ),
    ];
    for (text, key) in cases {
        assert_refused(&text, key);
    }
}

/// Multi-level prmp (`relays = true`): on seed 003's binary tree the two lower routers relay,
/// every receiver gets everything, the sender hears only the relays (its packets fall), and
/// the relays' local repairs cut the duplicates single-level prmp's multicast repairs cause;
/// the same seed gives the same row.
#[test]
fn prmp_relays_serve_their_routers_receivers() {
    let text = |relays: bool| {
        format!(
            "seed = 3\n[topology]\nkind = \"binary_tree\"\nheight = 2\nsource_link = true\n\
             delay_ms = 0.5\nbandwidth_bps = 100000000\n[protocol]\nname = \"prmp\"\nrelays = {relays}\n[traffic]\n\
             messages = 400\nsize = 1000\ninterval_ms = 1\n[[loss]]\nmodel = \"bernoulli\"\n\
             p = 0.05\nat = \"link\"\n"
        )
    };
    let run = |relays: bool| {
        let res = run_sweep(
            &parse(&text(relays)).unwrap(),
            RunOptions::default(),
            &|| {},
        )
        .unwrap();
        let col = |k: &str| res[0].column(k).unwrap().csv();
        (
            col("completed"),
            col("delivered_min").parse::<u64>().unwrap(),
            col("sender_packets_sent").parse::<u64>().unwrap(),
            col("receiver_duplicates").parse::<u64>().unwrap(),
            to_csv(&res),
        )
    };
    let (done, min, sent, dups, csv) = run(true);
    let (done1, min1, sent1, dups1, _) = run(false);
    println!("relays: sender {sent}, duplicates {dups}; single level: {sent1}, {dups1}");
    assert_eq!((done.as_str(), min), ("true", 400));
    assert_eq!((done1.as_str(), min1), ("true", 400));
    assert!(
        sent < sent1,
        "the sender repairs only the relays: {sent} vs {sent1}"
    );
    assert!(dups < dups1, "local repairs: {dups} vs {dups1} duplicates");
    assert_eq!(run(true).4, csv, "deterministic");
    // Not a prmp switch's value: refused naming the key.
    let bad = text(true).replace("relays = true", "relays = 3");
    assert!(parse(&bad)
        .and_then(|sc| run_sweep(&sc, RunOptions::default(), &|| {}).map(|_| ()))
        .is_err_and(|e| e.to_string().contains("relays")));
}

/// dsp with `designated = "relay"`: the router above each region is its designated receiver
/// (a router agent), every receiver a member; every receiver gets everything, and a receiver
/// behind no router is refused naming the reason.
#[test]
fn dsp_designated_relays_run_at_the_routers() {
    let text = "seed = 2\n[topology]\nkind = \"binary_tree\"\nheight = 2\nsource_link = true\n\
                delay_ms = 0.5\nbandwidth_bps = 100000000\n[protocol]\nname = \"dsp\"\n\
                designated = \"relay\"\nwindow = 64\nblock_bytes = 1000\nrate_mbps = 8\n\
                [traffic]\nmessages = 300\nsize = 1000\ninterval_ms = 1\n[[loss]]\n\
                model = \"bernoulli\"\np = 0.05\nat = \"link\"\n";
    let res = run_sweep(&parse(text).unwrap(), RunOptions::default(), &|| {}).unwrap();
    let col = |k: &str| res[0].column(k).unwrap().csv();
    assert_eq!(col("completed"), "true");
    assert_eq!(col("delivered_min"), "300");
    let on_bus =
        "seed = 1\n[topology]\nkind = \"bus\"\nreceivers = 3\n[protocol]\nname = \"dsp\"\n\
                  designated = \"relay\"\n[traffic]\nmessages = 10\nsize = 500\n";
    let e = parse(on_bus)
        .and_then(|sc| run_sweep(&sc, RunOptions::default(), &|| {}).map(|_| ()))
        .unwrap_err();
    assert!(e.to_string().contains("behind a router"), "{e}");
}

/// lms and pgm (the protocols with router agents) on an imported graph, where every node is a
/// router and the receivers sit on routers: 2 and 4 are leaves, 3 has receivers 4 and 5
/// below it. Before a router handed DREQs to the receiver on its own node, LMS consumed them
/// there: no replier ever answered (3-14 of 200 messages delivered to the worst receiver).
/// Before a router saw what its own node's agent sends, a PGM network element never saw its
/// own receiver's NAK, so it discarded the RDATA that receiver asked for (the other
/// protocols run as a guard: their receivers on routers are reached too). Before cp's local
/// exchange passed what was addressed to its node but not a status to the agent there, the
/// exchange on 3 consumed the ASSIGNs of receiver 3's own exchange (on 1): 3 never
/// re-multicast for its region nor freed its buffer, and receiver 2 held 181 of 200 when
/// the source finished (25 of 200 with seed 2 at 10 Mb/s, the source stalled). Likewise
/// dsp's designated receiver hosted on router 3 (`designated = "relay"`) consumed the local
/// re-multicasts of region 1's, hosted on router 1, to receiver 3 (33 of 200 delivered).
#[test]
fn protocols_repair_receivers_that_sit_on_routers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("edges.txt"),
        "0 1 2\n1 2 2\n1 3 5\n3 4 1\n3 5 1\n2 5 8\n",
    )
    .unwrap();
    let relay = "designated = \"relay\"\n";
    for (proto, extra) in [
        ("lms", ""),
        ("pgm", ""),
        ("srm", ""),
        ("dsp", ""),
        ("dsp", relay),
        ("csp", ""),
        ("cp", ""),
    ] {
        let text = format!(
            "seed = [1, 2]\n[topology]\nkind = \"edge_list\"\nfile = \"edges.txt\"\n\
             source = 0\nreceiver_ids = [2, 3, 4, 5]\n[protocol]\nname = \"{proto}\"\n{extra}\
             [traffic]\nmessages = 200\nsize = 500\ninterval_ms = 10\n[[loss]]\n\
             model = \"bernoulli\"\np = 0.05\nat = \"link\"\nfilter = \"original\"\n\
             [stop]\ntime_limit_s = 30\n"
        );
        let sc = Scenario::parse(&text, "t.toml", dir.path().into()).unwrap();
        for r in run_sweep(&sc, RunOptions::default(), &|| {}).unwrap() {
            let col = |k: &str| r.column(k).unwrap().csv();
            assert!(
                col("lost_bernoulli").parse::<u64>().unwrap() > 20,
                "{proto}: the run is lossy"
            );
            assert_eq!(col("completed"), "true", "{proto}");
            assert_eq!(col("delivered_min"), "200", "{proto}");
        }
    }
}

/// PGM on the chain 0 - 1 - 2 of routers with the receiver on 2 and the original message 5
/// dropped on the link 1 → 2: the network element on 2 sees its own receiver's NAK (on the
/// node's `LOCAL` interface), confirms it with an NCF that reaches the receiver on no link,
/// and passes the RDATA to it: one NAK, one repair, everything delivered once. Before, the
/// NAK left the node unseen, the element on 2 discarded the RDATA as unasked for, and the
/// receiver NAKed on for the rest of the run without the message.
#[test]
fn pgm_element_on_the_receiver_s_own_node_passes_its_repair() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("edges.txt"), "0 1 2\n1 2 2\n").unwrap();
    let text = "seed = 1\n[topology]\nkind = \"edge_list\"\nfile = \"edges.txt\"\n\
                source = 0\nreceiver_ids = [2]\n[protocol]\nname = \"pgm\"\n\
                [traffic]\nmessages = 20\nsize = 500\ninterval_ms = 10\n[[loss]]\n\
                model = \"drop_nth\"\nk = 5\nfilter = \"original\"\nat = \"link\"\n\
                links = [1]\nfrom = 1\ncause = \"single_loss\"\n";
    let sc = Scenario::parse(text, "t.toml", dir.path().into()).unwrap();
    let r = &run_sweep(&sc, RunOptions::default(), &|| {}).unwrap()[0];
    let col = |k: &str| r.column(k).unwrap().csv();
    assert_eq!(col("lost_single_loss"), "1");
    assert_eq!(col("completed"), "true");
    assert_eq!(col("delivered_min"), "20");
    assert_eq!(col("receiver_control_sent"), "1", "one NAK");
    assert_eq!(col("originated_repair"), "1", "one RDATA");
    assert_eq!(col("receiver_duplicates"), "0");
}

/// The receiver on a router's own node is that router's replier, nearer than any below it
/// (ns-2's LMS, whose per-node agent sees its node's receiver, does the same): on the chain
/// 0 - 1 - 2 with receivers at 2 and below it at 3 and 4, the original message 4 dropped on
/// the link 2 → 3 is requested by 3, turned at 2 and repaired by 2's own receiver, subcast
/// toward 3 alone. Before, 2's replier link pointed at 3 itself, the request went up to the
/// source and its multicast repair reached 2 and 4 as duplicates. ns-2 2.35's own LMS on
/// this graph (bench/ns2/lms.tcl): 3 recovers in 0.2168 of its RTT, 0 duplicate replies.
#[test]
fn lms_repairs_from_the_receiver_on_the_turning_router_s_own_node() {
    let dir = tempfile::tempdir().unwrap();
    let edges = "0 1 10 10000000\n1 2 10 10000000\n2 3 5 10000000\n2 4 7 10000000\n";
    std::fs::write(dir.path().join("edges.txt"), edges).unwrap();
    let text = "seed = 1\n[topology]\nkind = \"edge_list\"\nfile = \"edges.txt\"\n\
                routing = \"delay\"\nsource = 0\nreceiver_ids = [2, 3, 4]\n\
                [protocol]\nname = \"lms\"\n[traffic]\nmessages = 30\nsize = 1024\n\
                interval_ms = 100\n[[loss]]\nmodel = \"drop_nth\"\nk = 5\n\
                filter = \"original\"\nat = \"link\"\nlinks = [2]\nfrom = 2\n\
                cause = \"single_loss\"\n[stop]\ntime_limit_s = 5\n";
    let sc = Scenario::parse(text, "t.toml", dir.path().into()).unwrap();
    let r = &run_sweep(&sc, RunOptions::default(), &|| {}).unwrap()[0];
    let col = |k: &str| r.column(k).unwrap().csv();
    assert_eq!(col("lost_single_loss"), "1");
    assert_eq!(col("delivered_min"), "30");
    assert_eq!(col("receiver_control_sent"), "1", "one request");
    assert_eq!(
        col("receiver_duplicates"),
        "0",
        "the repair reached 3 alone"
    );
}

/// Seed 001's protocols on the default binary tree (1.5 Mb/s, 10 ms links), where the spec's
/// 150 Mb/s and 1 ms (seed 001's own network) do not hold: the source's rate is the slowest
/// link's, RTDs count a block's transmission on every link, and the round trip inside a
/// region is the topology's. Before, dsp's statuses for an L of 2,840 blocks filled the links
/// and its designated receivers re-multicast every 1.2 ms: 68 s and 162,147 duplicates for
/// 2 s of data (seed 1); csp 8.8 s and 22,295, cp 14.3 s and 34,273. Given values are kept.
#[test]
fn tree_protocols_take_rate_and_round_trips_from_the_topology() {
    let text = |proto: &str, extra: &str| {
        format!(
            "seed = 1\n[topology]\nkind = \"binary_tree\"\nheight = 3\nsource_link = true\n\
             [protocol]\nname = \"{proto}\"\n{extra}[traffic]\nmessages = 200\nsize = 500\n\
             interval_ms = 10\n[[loss]]\nmodel = \"bernoulli\"\np = 0.05\nat = \"link\"\n\
             filter = \"original\"\n"
        )
    };
    let run = |t: String| {
        let r = run_sweep(&parse(&t).unwrap(), RunOptions::default(), &|| {})
            .unwrap()
            .remove(0);
        let col = |k: &str| {
            r.column(k)
                .unwrap()
                .csv()
                .parse::<f64>()
                .unwrap_or(f64::NAN)
        };
        assert_eq!(r.column("completed").unwrap().csv(), "true", "{t}");
        (col("completion_time_s"), col("receiver_duplicates"))
    };
    // Every protocol laid out on seed 001's regions (dsp, csp, cp).
    let regions: Vec<&str> = rmcast_proto::protocols::region_protocols()
        .map(|p| p.name)
        .collect();
    assert!(!regions.is_empty());
    for proto in regions {
        let (end, dups) = run(text(proto, ""));
        // 200 messages every 10 ms: the last leaves at 1.99 s.
        assert!(end < 3.0, "{proto}: done at {end} s");
        assert!(dups < 8.0 * 200.0, "{proto}: {dups} duplicates");
    }
    // The spec's values, given: the collapse the derived ones avoid.
    let (end, dups) = run(text("dsp", "rate_mbps = 150\nlocal_rtd_ms = 1\n"));
    assert!(end > 10.0 && dups > 10_000.0, "{end} s, {dups} duplicates");
}

/// Multi-level prmp on an imported graph, where every node routes and regions nest: with
/// receivers 2, 4 and 5 on 0-1, 1-2, 1-3, 3-4, 3-5, router 1 relays for 2 and for router
/// 3's relay, which relays for 4 and 5; with a receiver on 3 as well, 3 hosts no relay (it
/// would take its own receiver's packets) and 1 serves 2, 3, 4 and 5. Under 5 % link loss
/// every receiver gets everything (before relays nested, the first case was refused: the
/// upper relay passed nothing on), and the source, polling only router 1, sends less than
/// single-level prmp, which polls every receiver.
#[test]
fn prmp_relays_nest_on_imported_graphs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("edges.txt"),
        "0 1 2\n1 2 2\n1 3 5\n3 4 1\n3 5 1\n",
    )
    .unwrap();
    for rx in ["[2, 4, 5]", "[2, 3, 4, 5]"] {
        let text = |relays: bool| {
            format!(
                "seed = [1, 2, 3]\n[topology]\nkind = \"edge_list\"\nfile = \"edges.txt\"\n\
                 source = 0\nreceiver_ids = {rx}\n[protocol]\nname = \"prmp\"\n\
                 relays = {relays}\n[traffic]\nmessages = 300\nsize = 500\ninterval_ms = 1\n\
                 [[loss]]\nmodel = \"bernoulli\"\np = 0.05\nat = \"link\"\n"
            )
        };
        let run = |relays: bool| {
            let sc = Scenario::parse(&text(relays), "t.toml", dir.path().into()).unwrap();
            run_sweep(&sc, RunOptions::default(), &|| {}).unwrap()
        };
        let (nested, flat) = (run(true), run(false));
        for (r, f) in nested.iter().zip(&flat) {
            let col = |row: &RunResult, k: &str| row.column(k).unwrap().csv();
            assert_eq!(col(r, "completed"), "true", "{rx}");
            assert_eq!(col(r, "delivered_min"), "300", "{rx}");
            let sent = |row| col(row, "sender_packets_sent").parse::<u64>().unwrap();
            assert!(sent(r) < sent(f), "{rx}: {} vs {}", sent(r), sent(f));
        }
        assert_eq!(to_csv(&run(true)), to_csv(&nested), "deterministic");
    }
    // Receivers behind the router on the source's own node: polled by the source, no relay
    // (one there never saw the source's packets: 10-41 of 200 delivered).
    std::fs::write(dir.path().join("star.txt"), "0 1 1\n0 2 1\n").unwrap();
    let text = "seed = [1, 2]\n[topology]\nkind = \"edge_list\"\nfile = \"star.txt\"\n\
                source = 0\nreceiver_ids = [1, 2]\n[protocol]\nname = \"prmp\"\n\
                relays = true\n[traffic]\nmessages = 200\nsize = 500\ninterval_ms = 10\n";
    let sc = Scenario::parse(text, "t.toml", dir.path().into()).unwrap();
    for r in run_sweep(&sc, RunOptions::default(), &|| {}).unwrap() {
        assert_eq!(r.column("completed").unwrap().csv(), "true");
        assert_eq!(r.column("delivered_min").unwrap().csv(), "200");
    }
}
