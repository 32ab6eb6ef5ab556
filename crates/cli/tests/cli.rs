use assert_cmd::Command;

#[test]
fn protocols_lists_saw() {
    let out = Command::cargo_bin("rmcast")
        .unwrap()
        .arg("protocols")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("saw ")), "{text}");
}

#[test]
fn protocols_json_is_machine_readable() {
    let out = Command::cargo_bin("rmcast")
        .unwrap()
        .args(["protocols", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.as_array().unwrap().iter().any(|p| p["name"] == "saw"));
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    let out = Command::cargo_bin("rmcast")
        .unwrap()
        .arg("frobnicate")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
