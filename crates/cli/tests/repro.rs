//! `rmcast repro` end to end: files, summary line, exit codes, and the report opened in
//! headless Chromium (skipped with a message where Chromium is not installed; `.ci/run`
//! installs it, and under `CI=true` a missing Chromium fails the test).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rmcast-repro-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One `--quick` report of every registered study, shared by the tests that read it
/// (a full quick run of every study is the expensive part).
fn shared_quick_report() -> &'static (PathBuf, String) {
    static REPORT: std::sync::OnceLock<(PathBuf, String)> = std::sync::OnceLock::new();
    REPORT.get_or_init(|| {
        let dir = scratch("quick");
        let text = quick_report(&dir);
        (dir, text)
    })
}

/// `rmcast repro ARGS --out OUT`.
fn repro(args: &[&str], out: &Path) -> Output {
    common::cmd()
        .arg("repro")
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn quick_report(dir: &Path) -> String {
    let out = repro(&["--quick", "--quiet", "--jobs", "2"], dir);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "repro --quick failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn svgs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    v.sort();
    v
}

#[test]
fn quick_check_writes_report_and_ends_with_summary() {
    let (dir, text) = shared_quick_report();
    let dir = dir.as_path();
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("claims: ") && last.ends_with(" failed") && last.contains(" passed, "),
        "last line: {last}"
    );
    // Whether every claim passes is `.ci/run`'s `repro --quick --check` step; here the
    // machinery: files, counts, formats.
    for f in ["report.md", "index.html", "claims.csv", "claims.json"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("Quick mode"), "report must say it is quick");
    assert!(md.contains("## demo"));
    assert!(!svgs(dir).is_empty());
    // CSV: header plus one row per claim, as many as the summary counts.
    let csv = std::fs::read_to_string(dir.join("claims.csv")).unwrap();
    let passed: usize = last
        .trim_start_matches("claims: ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(csv.starts_with("id,study,source,"));
    let failed: usize = last
        .rsplit(", ")
        .next()
        .unwrap()
        .trim_end_matches(" failed")
        .parse()
        .unwrap();
    let inconclusive: usize = last
        .rsplit(", ")
        .nth(1)
        .unwrap()
        .trim_end_matches(" inconclusive")
        .parse()
        .unwrap();
    assert!(csv.lines().any(|l| l.starts_with("demo.")));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("claims.json")).unwrap()).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), passed + inconclusive + failed);
    let count = |v: &str| rows.iter().filter(|r| r["verdict"] == v).count();
    assert_eq!(count("pass"), passed);
    assert_eq!(count("inconclusive"), inconclusive);
    assert_eq!(count("fail"), failed);
    // Every number an explanation quotes comes from this run: no placeholder names a
    // measure the study did not record.
    for r in rows {
        let e = r["explanation"].as_str().unwrap_or("");
        assert!(!e.contains(": not measured}"), "{}: {e}", r["id"]);
    }
}

#[test]
fn json_goes_to_stdout_and_summary_to_stderr() {
    let dir = scratch("json");
    let out = repro(&["demo", "--quick", "--quiet", "--json"], &dir);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["id"].as_str().unwrap().starts_with("demo.") && c["verdict"] != "fail"));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err
        .trim_end()
        .lines()
        .last()
        .unwrap()
        .starts_with("claims: "));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_study_and_bad_jobs_are_usage_errors() {
    let out = repro(
        &["no-such-study"],
        &std::env::temp_dir().join("rmcast-never-written"),
    );
    common::assert_refused(&out, "unknown study `no-such-study`", "repro no-such-study");
    assert_eq!(
        common::rmcast(&["repro", "--jobs", "0"]).status.code(),
        Some(2)
    );
}

#[test]
fn extended_mode_excludes_quick_and_is_said_in_the_report() {
    assert_eq!(
        common::rmcast(&["repro", "--quick", "--extended"])
            .status
            .code(),
        Some(2)
    );
    let dir = scratch("extended");
    let out = repro(&["demo", "--extended", "--quiet"], &dir);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    assert!(
        text.starts_with("running 1 study (extended: full sweeps and the largest sizes)"),
        "{text}"
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("**Extended mode** (`--extended`)"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_exits_1_when_a_claim_fails_and_the_report_explains_it() {
    let dir = scratch("check");
    // The demo's claims from disk plus one that cannot hold: a message to one receiver on
    // the bus faster than d + a.
    let claims_dir = dir.join("claims");
    std::fs::create_dir_all(claims_dir.join("demo")).unwrap();
    let builtin = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/repro/demo/claims.toml"),
    )
    .unwrap();
    let extra = include_str!("data/impossible_claim.toml");
    std::fs::write(claims_dir.join("demo/claims.toml"), builtin + extra).unwrap();
    let out_dir = dir.join("report");
    let claims = claims_dir.to_str().unwrap();
    let check = ["demo", "--quick", "--check", "--quiet", "--claims", claims];
    let out = repro(&check, &out_dir);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL demo.bus.impossible"), "{text}");
    assert!(text.trim_end().ends_with(", 1 failed"), "{text}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("check: unexpected failure demo.bus.impossible"),
        "{err}"
    );
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(md.contains("the data and the ACK frame alone take 12656 bit times"));
    // The claim's value in this run, as scripts/pin_values.py would record it.
    let json = std::fs::read_to_string(out_dir.join("claims.json")).unwrap();
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    let value = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "demo.bus.impossible")
        .and_then(|c| c["mean"].as_f64())
        .unwrap();
    // Pinned as an expected failure of quick mode with its value, the same failure passes the
    // check; a pin for full mode only does not cover it; a pin without the value, or with one
    // the run no longer gives, fails the check.
    let recorded = format!("modes = [\"quick\"]\nmeasured = {{ quick = {value} }}");
    let moved = format!(
        "modes = [\"quick\"]\nmeasured = {{ quick = {} }}",
        value * 2.0
    );
    for (pins, code, says) in [
        (recorded.as_str(), 0, "1 expected (of 1 pinned)"),
        (
            "modes = [\"full\"]",
            1,
            "unexpected failure demo.bus.impossible",
        ),
        (
            "modes = [\"quick\"]",
            1,
            "demo.bus.impossible has no recorded value for this mode",
        ),
        (moved.as_str(), 1, "demo.bus.impossible moved"),
    ] {
        let file = dir.join("pinned.toml");
        std::fs::write(
            &file,
            format!("[[pin]]\nid = \"demo.bus.impossible\"\n{pins}\nreason = \"test\"\n"),
        )
        .unwrap();
        let out = repro(
            &[&check[..], &["--pinned", file.to_str().unwrap()]].concat(),
            &out_dir,
        );
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(code), "{pins}: {err}");
        assert!(err.contains(says), "{pins}: {err}");
    }
    // Without --check the same run exits 0.
    let out = repro(
        &["demo", "--quick", "--quiet", "--claims", claims],
        &out_dir,
    );
    assert_eq!(out.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn list_names_the_demo_study() {
    assert!(common::stdout_of(&["repro", "--list"])
        .lines()
        .any(|l| l.starts_with("demo ")));
}

fn chromium() -> Option<String> {
    if let Ok(c) = std::env::var("RMCAST_CHROMIUM") {
        return Some(c);
    }
    ["chromium", "chromium-browser"].into_iter().find_map(|c| {
        std::process::Command::new(c)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()
            .filter(|s| s.success())
            .map(|_| c.to_string())
    })
}

/// Run headless Chromium with the flags a sandboxed CI needs, bounded by `timeout`.
fn headless(bin: &str, profile: &Path, extra: &[String], url: &str) -> std::process::Output {
    let mut cmd = std::process::Command::new("timeout");
    cmd.arg("120").arg(bin).args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ]);
    cmd.arg(format!("--user-data-dir={}", profile.display()));
    cmd.args(extra).arg(url);
    cmd.stdin(Stdio::null());
    cmd.output().unwrap()
}

#[test]
fn browser_renders_the_report_plots() {
    let Some(bin) = chromium() else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("CI=true but chromium is not installed (.ci/run installs it)");
        }
        println!("skipped: chromium not installed (apt-get install chromium)");
        return;
    };
    let (dir, _) = shared_quick_report();
    let dir = dir.as_path();
    let profile = scratch("chromium-profile");
    let index = dir.join("index.html").canonicalize().unwrap();
    let url = format!("file://{}", index.display());

    // The DOM after parsing: every plot is there as an inline <svg>, no study failed to run.
    let out = headless(&bin, &profile, &["--dump-dom".to_string()], &url);
    assert!(out.status.success(), "chromium --dump-dom failed: {out:?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    // The studies' plots, and the committed --explore sweeps' heat maps (`explored-*.svg`,
    // shown for a study below 80 % validation passes), each inline once.
    let (heat_maps, plots): (Vec<PathBuf>, Vec<PathBuf>) = svgs(dir).into_iter().partition(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("explored-"))
    });
    assert_eq!(
        dom.matches("class=\"rmcast-plot\"").count(),
        plots.len(),
        "every SVG plot must be inline in index.html"
    );
    assert_eq!(
        dom.matches("validation pass rate over the grid").count(),
        heat_maps.len(),
        "every explored heat map must be inline in index.html"
    );
    for p in &plots {
        let id = format!("id=\"plot-{}\"", p.file_stem().unwrap().to_string_lossy());
        assert!(dom.contains(&id), "{id} missing from the DOM");
    }
    assert!(dom.contains("<polyline"), "no plotted lines in the DOM");
    assert!(dom.contains("claims: "), "no summary line in the DOM");
    assert!(
        !dom.contains("The study did not run"),
        "a study did not run"
    );
    assert!(!dom.to_lowercase().contains("parsererror"));

    // Each standalone SVG file parses as XML (Chromium shows a parser error page otherwise)
    // and keeps its axis labels.
    for p in &plots {
        let url = format!("file://{}", p.canonicalize().unwrap().display());
        let out = headless(&bin, &profile, &["--dump-dom".to_string()], &url);
        let dom = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}: {out:?}", p.display());
        assert!(
            !dom.contains("parsererror")
                && !dom.contains("This page contains the following errors"),
            "{} does not parse: {dom}",
            p.display()
        );
        assert!(
            dom.contains("x-label") && dom.contains("y-label"),
            "{}",
            p.display()
        );
    }

    // A screenshot of the page: a PNG of the requested size with real content.
    let shot = profile.join("page.png");
    let out = headless(
        &bin,
        &profile,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1200,2400".to_string(),
            "--hide-scrollbars".to_string(),
        ],
        &url,
    );
    assert!(
        out.status.success(),
        "chromium --screenshot failed: {out:?}"
    );
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((w, h), (1200, 2400));
    // A blank 1200×2400 page compresses to a few KB; tables and plots do not.
    assert!(png.len() > 40_000, "screenshot only {} bytes", png.len());
    println!(
        "browser check: {} plots in the DOM, screenshot {w}×{h}, {} bytes",
        plots.len(),
        png.len()
    );
    let _ = std::fs::remove_dir_all(&profile);
}
