//! `rmcast bench xtp`: tiny runs on the simulated bus and on loopback sockets; the JSON
//! carries every field of the thesis's `metric` per run, and the numbers agree with each
//! other (throughput = bytes × 8 / timing, ms per call = timing / calls). Bad input exits 2.

mod common;

use serde_json::Value;

/// `rmcast bench xtp ARGS`: its exit status, JSON report (`Null` if none) and standard error.
fn bench(args: &[&str]) -> (i32, Value, String) {
    common::json_run(&[&["bench", "xtp"], args].concat())
}

fn check_run(r: &Value, message: u64, min_calls: u64) {
    // The fields of the thesis's `metric`.
    for k in "message write mode receivers loss rep ok ms mbps calls ms_per_call repairs".split(' ')
    {
        assert!(r.get(k).is_some(), "field {k} missing in {r}");
    }
    assert_eq!(r["ok"], Value::Bool(true), "{r}");
    assert_eq!(r["message"].as_u64(), Some(message));
    let ms = r["ms"].as_f64().unwrap();
    let mbps = r["mbps"].as_f64().unwrap();
    let calls = r["calls"].as_u64().unwrap();
    let mpc = r["ms_per_call"].as_f64().unwrap();
    assert!(ms > 0.0 && ms.is_finite(), "{r}");
    assert!(calls >= min_calls, "{calls} calls < {min_calls}: {r}");
    let expect = message as f64 * 8.0 / (ms / 1e3) / 1e6;
    assert!(
        (mbps - expect).abs() <= 1e-6 * expect.max(1.0),
        "{mbps} vs {expect}"
    );
    assert!((mpc * calls as f64 - ms).abs() <= 1e-6 * ms.max(1.0), "{r}");
}

const SIM_ARGS: [&str; 11] = [
    "--sim",
    "--unicast",
    "--receivers",
    "1,3",
    "--message",
    "51200",
    "--write",
    "8192",
    "--loss",
    "0,1/10",
    "--json",
];

#[test]
fn sim_runs_report_metric_fields() {
    let (code, v, err) = bench(&SIM_ARGS);
    assert_eq!(code, 0, "{err}\n{v}");
    let runs = v["runs"].as_array().unwrap();
    // unicast + 1:1 + 1:3, two loss levels.
    assert_eq!(runs.len(), 6);
    for r in runs {
        // 51,200 B in 8192-B writes: seven calls.
        check_run(r, 51_200, 7);
        assert_eq!(r["calls"].as_u64(), Some(7));
        // 4.7 ms per call is the modelled floor.
        assert!(r["ms_per_call"].as_f64().unwrap() > 4.7, "{r}");
    }
    assert_eq!(v["failed"].as_u64(), Some(0));
    // Deterministic: the same arguments give the same numbers.
    let (_, again, _) = bench(&SIM_ARGS);
    assert_eq!(v, again);
}

/// One loopback run of 30,000 B in 4096-B writes with `args`: the report and its one run,
/// checked (4,095 message bytes per write: 8 writes, plus the file header frame).
fn one_loopback_run(args: &[&str]) -> (Value, Value) {
    let common = ["--message", "30000", "--write", "4096", "--json"];
    let (code, v, err) = bench(&[args, &common[..]].concat());
    assert_eq!(code, 0, "{err}\n{v}");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    check_run(&runs[0], 30_000, 8);
    let run = runs[0].clone();
    (v, run)
}

#[test]
fn loopback_run_reports_metric_fields() {
    let (v, run) = one_loopback_run(&["--receivers", "2", "--loss", "1/10"]);
    assert_eq!(run["receivers"].as_u64(), Some(2));
    assert_eq!(v["where"].as_str(), Some("loopback"));
}

#[test]
fn loopback_unicast_run_with_a_fifth_lost() {
    let (v, run) = one_loopback_run(&["--unicast", "--receivers", "0", "--loss", "1/5"]);
    assert_eq!(run["mode"].as_str(), Some("unicast"), "{v}");
}

fn text(extra: &[&str]) -> String {
    let sim = [
        "bench",
        "xtp",
        "--sim",
        "--message",
        "10000",
        "--write",
        "4096",
    ];
    common::stdout_of(&[&sim[..], extra].concat())
}

#[test]
fn table_and_csv_outputs() {
    let t = text(&[]);
    assert!(
        t.contains("Mbit/s") && t.contains("ms/call") && t.contains("1 runs, 0 failed"),
        "{t}"
    );
    let c = text(&["--csv"]);
    let lines: Vec<&str> = c.lines().collect();
    assert_eq!(lines.len(), 2, "{c}");
    assert!(lines[0].starts_with("where,setting,message,write,"));
    assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
}

#[test]
fn bad_input_exits_2() {
    for args in [
        &["--loss", "2"][..],
        &["--write", "0"],
        &["--receivers", "0"],
        &["--setting", "nonsense"],
        &["--reps", "0"],
    ] {
        let (code, _, err) = bench(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(!err.is_empty());
    }
}
