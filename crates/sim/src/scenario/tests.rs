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
        let e = parse(&text).unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("t.toml: key `"), "{s}");
        assert!(s.contains(&format!("`{key}`")), "{key}: {s}");
        assert!(s.contains("expected"), "{s}");
    }
    let e = parse("[topology\n").unwrap_err();
    assert!(matches!(e, ScenarioError::Syntax { .. }));
}
