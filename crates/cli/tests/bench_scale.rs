//! `rmcast bench scale`: one small size end to end, and the skip-after-timeout rule.

mod common;

/// `rmcast bench scale ARGS --json`: its exit status and JSON report.
fn scale(args: &[&str]) -> (i32, serde_json::Value) {
    let (code, v, err) = common::json_run(&[&["bench", "scale"], args, &["--json"]].concat());
    assert!(!v.is_null(), "not JSON: {err}");
    (code, v)
}

#[test]
fn a_thousand_receivers_recover_the_loss_under_pgm_and_lms() {
    let (code, v) = scale(&["--sizes", "1000", "--schemes", "pgm,lms"]);
    assert_eq!(code, 0, "{v}");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["receivers"], 1000);
        assert_eq!(r["receivers_complete"], 1000, "{r}");
        assert_eq!(r["completed"], true);
        assert_eq!(r["drops"], 1);
        assert!(r["events"].as_u64().unwrap() > 1000);
        assert!(r["peak_rss_bytes"].as_u64().unwrap() > 0);
    }
}

#[test]
fn a_scheme_that_times_out_is_skipped_at_larger_sizes() {
    let (code, v) = scale(&[
        "--sizes",
        "2000,1000",
        "--schemes",
        "pgm",
        "--timeout-s",
        "0",
    ]);
    assert_eq!(code, 1, "{v}");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs[0]["receivers"], 1000);
    assert!(runs[0]["error"].as_str().unwrap().starts_with("timed out"));
    assert_eq!(runs[1]["receivers"], 2000);
    assert_eq!(
        runs[1]["error"].as_str().unwrap(),
        "skipped: timed out at 1000 receivers"
    );
}
