#![allow(clippy::unwrap_used)]
use super::*;
use std::path::PathBuf;

const TWO: &str = r#"
[[pin]]
scenario = "csp-tree-1m5"
metric = "completion_time_s"
reason = "slower on sockets"
run = "docs/results/agreement/csp-tree-1m5.csv"

[[pin]]
scenario = "csp-tree-1m5"
metric = "duplicates_per_receiver"
reason = "more duplicates on sockets"
run = "docs/results/agreement/csp-tree-1m5.csv"
"#;

#[test]
fn a_disagreement_is_expected_only_when_pinned_and_a_pin_that_agrees_fails_the_check() {
    let pins = Pins::parse(TWO).unwrap();
    // Both pinned metrics still disagree, the others agree: passed.
    let all = [
        ("completed", Verdict::Within),
        ("completion_time_s", Verdict::Disagree),
        ("repairs_per_loss", Verdict::Overlap),
        ("duplicates_per_receiver", Verdict::Disagree),
    ];
    let c = pins.check("csp-tree-1m5", &all);
    assert_eq!(c.expected, ["completion_time_s", "duplicates_per_receiver"]);
    assert!(c.passed(), "{c:?}");
    // A disagreement that is not pinned fails it.
    let mut more = all;
    more[2].1 = Verdict::Disagree;
    let c = pins.check("csp-tree-1m5", &more);
    assert_eq!(c.unexpected, ["repairs_per_loss"]);
    assert!(!c.passed());
    // A pinned metric that agrees now fails it too, and is named.
    let mut fixed = all;
    fixed[1].1 = Verdict::Within;
    let c = pins.check("csp-tree-1m5", &fixed);
    assert_eq!(c.now_agreeing, ["completion_time_s"]);
    assert!(!c.passed());
    assert!(c.report("csp-tree-1m5").contains("NOW AGREEING"));
    // An unmeasured metric is unexpected even when pinned.
    let mut gone = all;
    gone[3].1 = Verdict::Undefined;
    let c = pins.check("csp-tree-1m5", &gone);
    assert_eq!(c.unexpected, ["duplicates_per_receiver"]);
    assert!(!c.passed());
    // Pins are per file: another file's disagreement on the same metric is not excused.
    let c = pins.check("cp-tree-1m5", &all);
    assert_eq!(
        c.unexpected,
        ["completion_time_s", "duplicates_per_receiver"]
    );
    // A pin for a metric the run did not judge is unknown.
    let c = pins.check("csp-tree-1m5", &all[..2]);
    assert_eq!(c.unknown, ["duplicates_per_receiver"]);
    assert!(!c.passed());
}

#[test]
fn a_pin_twice_without_a_reason_or_for_no_judged_metric_is_refused() {
    // The first pin again after both.
    let first = &TWO[..TWO.rfind("\n[[pin]]").unwrap()];
    assert!(Pins::parse(first).is_ok());
    let twice = format!("{TWO}{first}");
    assert!(Pins::parse(&twice).is_err());
    let no_reason = TWO.replace("reason = \"slower on sockets\"", "reason = \"  \"");
    assert!(Pins::parse(&no_reason).is_err());
    let no_run = TWO.replace(
        "run = \"docs/results/agreement/csp-tree-1m5.csv\"\n\n",
        "\n",
    );
    assert!(Pins::parse(&no_run).is_err());
    let bad_metric = TWO.replace("metric = \"completion_time_s\"", "metric = \"time\"");
    assert!(Pins::parse(&bad_metric).is_err());
    let extra = TWO.replacen("reason =", "measured = 1\nreason =", 1);
    assert!(Pins::parse(&extra).is_err());
    assert!(Pins::parse("pin = 3").is_err());
    assert!(Pins::parse("").unwrap().pins.is_empty());
}

#[test]
fn a_list_of_metrics_is_one_pin_each_with_the_reason_said_once() {
    let list = r#"
[[pin]]
scenario = "csp-tree-1m5"
metrics = ["completion_time_s", "duplicates_per_receiver"]
reason = "slower on sockets"
run = "docs/results/agreement/csp-tree-1m5.csv"
"#;
    let pins = Pins::parse(list).unwrap();
    let got: Vec<(&str, &str)> = pins
        .pins
        .iter()
        .map(|p| (p.metric.as_str(), p.reason.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("completion_time_s", "slower on sockets"),
            ("duplicates_per_receiver", "slower on sockets")
        ]
    );
    // Both forms, neither, an empty list, a non-string entry, a metric listed twice, or one
    // also pinned on its own: refused.
    let both = list.replace("metrics =", "metric = \"completed\"\nmetrics =");
    assert!(Pins::parse(&both).is_err());
    let neither = list.replace(
        "metrics = [\"completion_time_s\", \"duplicates_per_receiver\"]\n",
        "",
    );
    assert!(Pins::parse(&neither).is_err());
    assert!(Pins::parse(
        &list.replace("[\"completion_time_s\", \"duplicates_per_receiver\"]", "[]")
    )
    .is_err());
    assert!(Pins::parse(&list.replace("\"duplicates_per_receiver\"]", "3]")).is_err());
    assert!(
        Pins::parse(&list.replace("\"duplicates_per_receiver\"]", "\"completion_time_s\"]"))
            .is_err()
    );
    assert!(Pins::parse(&format!("{list}{TWO}")).is_err());
    assert!(Pins::parse(&list.replace("\"duplicates_per_receiver\"]", "\"time\"]")).is_err());
}

#[test]
fn an_agreement_csv_gives_its_verdicts_and_a_bad_one_is_an_error() {
    let csv = "metric,sim_n,verdict,agree\ncompleted,5,agree-within-15%,true\n\
               completion_time_s,5,disagree,false\n";
    let v = verdicts_of_csv(csv).unwrap();
    assert_eq!(
        v,
        [
            ("completed".to_string(), Verdict::Within),
            ("completion_time_s".to_string(), Verdict::Disagree)
        ]
    );
    assert!(verdicts_of_csv("metric,agree\ncompleted,true\n").is_err());
    assert!(verdicts_of_csv("metric,verdict\ncompleted,maybe\n").is_err());
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every committed agreement.csv named as a 1.5 Mb/s scenario file of scenarios/testbed/
/// passes the built-in list's check, and every pin's committed run shows its metric
/// disagreeing: the list is neither short of a disagreement nor holds one the runs do not show.
#[test]
fn the_built_in_pins_account_for_every_committed_run_at_1m5() {
    let pins = Pins::parse(BUILTIN).unwrap();
    assert!(!pins.pins.is_empty());
    let dir = root().join("docs/results/agreement");
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        let scenario = root().join(format!("scenarios/testbed/{stem}.toml"));
        if !stem.contains("-1m5") || !scenario.exists() {
            continue;
        }
        let v = verdicts_of_csv(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let judged: Vec<(&str, Verdict)> = v.iter().map(|(m, v)| (m.as_str(), *v)).collect();
        let c = pins.check(&stem, &judged);
        assert!(c.passed(), "{}", c.report(&stem));
        checked += 1;
    }
    assert!(checked >= 10, "{checked} committed runs checked");
    for pin in &pins.pins {
        let text = std::fs::read_to_string(root().join(&pin.run))
            .unwrap_or_else(|e| panic!("{}: {e}", pin.run));
        let v = verdicts_of_csv(&text).unwrap();
        assert!(
            v.iter()
                .any(|(m, v)| *m == pin.metric && *v == Verdict::Disagree),
            "{} / {}: {} does not show it disagreeing",
            pin.scenario,
            pin.metric,
            pin.run
        );
    }
}
