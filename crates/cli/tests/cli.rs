mod common;

use common::{rmcast, stdout_of};

#[test]
fn protocols_lists_saw() {
    let text = stdout_of(&["protocols"]);
    assert!(text.lines().any(|l| l.starts_with("saw ")), "{text}");
}

#[test]
fn protocols_json_is_machine_readable() {
    let v: serde_json::Value = serde_json::from_str(&stdout_of(&["protocols", "--json"])).unwrap();
    assert!(v.as_array().unwrap().iter().any(|p| p["name"] == "saw"));
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    assert_eq!(rmcast(&["frobnicate"]).status.code(), Some(2));
}
