//! The protocol spec table (`rmcast_proto::spec`) is the one place a protocol's defaults are
//! written. These tests walk it against what a user meets: `rmcast send --help` shows the
//! spec's socket default for every flag, and `rmcast sim` reads every scenario key the spec
//! lists with the spec's range (an out-of-range or mistyped value is refused naming the key,
//! an unlisted key is refused as unknown).

mod common;

use rmcast_proto::spec::{Range, Value};
use rmcast_proto::PROTOCOLS;

fn send_help() -> String {
    common::stdout_of(&["send", "--help"])
}

/// The text of the `--flag` entry in `--help` (its line and the lines up to the next flag).
fn entry<'a>(help: &'a str, flag: &str) -> Option<&'a str> {
    let start = help.lines().find(|l| {
        let l = l.trim_start();
        l.starts_with(&format!("--{flag} "))
            || (l.starts_with('-') && l.contains(&format!(", --{flag} ")))
    })?;
    let rest = &help[help.find(start)?..];
    let mut end = rest.find('\n').unwrap_or(rest.len());
    while end < rest.len() {
        let next = rest[end + 1..]
            .find('\n')
            .map_or(rest.len(), |e| end + 1 + e);
        if rest[end + 1..next].trim_start().starts_with('-') {
            break;
        }
        end = next;
    }
    Some(&rest[..end])
}

#[test]
fn send_help_shows_every_flag_default_of_the_spec() {
    let help = send_help();
    let mut checked = 0;
    for p in PROTOCOLS.iter().filter(|p| p.sockets) {
        for q in p.params {
            let Some(flag) = q.flag else { continue };
            let text = entry(&help, flag)
                .unwrap_or_else(|| panic!("{}.{}: --{flag} not in send --help", p.name, q.key));
            match q.socket_default() {
                Value::Derived(_) => {
                    assert!(!text.contains("[default:"), "--{flag}: {text}");
                }
                v @ (Value::Int(_) | Value::Real(_)) if flag == "window" => {
                    // One flag, a default per protocol: the help names each.
                    let n = v.real().unwrap();
                    let want = [format!("({n}"), format!("(default {n}")];
                    let part = text
                        .split(';')
                        .find(|s| s.contains(&format!("{}:", p.name)))
                        .unwrap_or_else(|| panic!("--window help does not name {}", p.name));
                    assert!(
                        want.iter().any(|w| part.contains(w.as_str())),
                        "--window help for {}: {part:?} lacks {n}",
                        p.name
                    );
                }
                v => {
                    let shown = text
                        .split("[default: ")
                        .nth(1)
                        .and_then(|s| s.split(']').next())
                        .unwrap_or_else(|| panic!("--{flag} shows no default: {text}"));
                    match v.real() {
                        Some(x) => assert_eq!(shown.parse::<f64>().ok(), Some(x), "--{flag}"),
                        None => assert_eq!(shown, v.to_string(), "--{flag}"),
                    }
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 12, "only {checked} flags checked");
}

fn scenario(protocol: &str, key: &str, value: &str) -> String {
    format!(
        "name = \"spec check\"\nseed = 1\n\n[topology]\nkind = \"binary_tree\"\nheight = 2\n\
         bandwidth_bps = 1500000\ndelay_ms = 10\n\n[protocol]\nname = \"{protocol}\"\n\
         {key} = {value}\n\n[traffic]\nmessages = 2\nsize = 512\ninterval_ms = 100\n"
    )
}

fn sim_refuses(dir: &std::path::Path, protocol: &str, key: &str, value: &str) -> String {
    let file = dir.join(format!("{protocol}-{key}.toml"));
    std::fs::write(&file, scenario(protocol, key, value)).unwrap();
    let out_dir = dir.join("out");
    let out = common::rmcast::<&std::ffi::OsStr>(&[
        "sim".as_ref(),
        file.as_os_str(),
        "--out".as_ref(),
        out_dir.as_os_str(),
        "--quiet".as_ref(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{protocol}.{key} = {value} was accepted"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn sim_reads_every_scenario_key_of_the_spec_with_its_range() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for p in PROTOCOLS {
        assert!(
            rmcast_sim::registry::lookup(p.name).is_some(),
            "{}: in the spec but not in the simulator's registry",
            p.name
        );
        for q in p.params.iter().filter(|q| q.scenario) {
            let bad = match q.range {
                Range::Int { .. } => "-1".to_string(),
                Range::Real { min, .. } if min > f64::MIN => format!("{}", min - 1.0),
                Range::Real { max, .. } => format!("{}", max * 2.0),
                Range::Bool => "\"maybe\"".to_string(),
                Range::Choice(_) => "\"no-such-choice\"".to_string(),
            };
            let err = sim_refuses(dir.path(), p.name, q.key, &bad);
            assert!(err.contains(q.key), "{}.{} = {bad}: {err}", p.name, q.key);
            checked += 1;
        }
        let err = sim_refuses(dir.path(), p.name, "no_such_key", "1");
        assert!(err.contains("no_such_key"), "{}: {err}", p.name);
    }
    assert!(checked >= 90, "only {checked} keys checked");
}
