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

/// Where the help of a flag names `protocol` as one of its readers (`prmp: …` or
/// `dsp, csp, cp: …`): the index after the name.
fn named_at(text: &str, protocol: &str) -> Option<usize> {
    text.match_indices(protocol)
        .find(|&(i, _)| {
            let before = text[..i].chars().last();
            let after = text[i + protocol.len()..].chars().next();
            matches!(before, None | Some(' ')) && matches!(after, Some(':' | ','))
        })
        .map(|(i, _)| i + protocol.len())
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
            // One line, as wrapping leaves it.
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let at = named_at(&text, p.name)
                .unwrap_or_else(|| panic!("--{flag} help does not name {}: {text}", p.name));
            let shown = text
                .split("[default: ")
                .nth(1)
                .and_then(|s| s.split(']').next());
            match q.socket_default() {
                Value::Derived(why) => {
                    assert!(shown.is_none(), "--{flag}: {text}");
                    assert!(text[at..].contains(why), "--{flag} lacks {why:?}: {text}");
                }
                Value::Bool(false) => assert!(shown.is_none(), "--{flag}: {text}"),
                v => {
                    // One default for every reader (clap's `[default: …]`), or each reader's
                    // own after its name.
                    let shown = shown.unwrap_or_else(|| {
                        let own = text[at..]
                            .split("default ")
                            .nth(1)
                            .unwrap_or_else(|| panic!("--{flag} shows no default: {text}"));
                        own.split([')', ',', ';']).next().unwrap_or(own)
                    });
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

#[test]
fn send_refuses_a_flag_value_outside_the_protocols_range() {
    let mut checked = 0;
    for p in PROTOCOLS.iter().filter(|p| p.sockets) {
        for q in p.params {
            let Some(flag) = q.flag else { continue };
            let bad = match q.range {
                Range::Int { min, .. } if min > 0 => format!("{}", min - 1),
                Range::Int { max, .. } if max < u64::MAX => format!("{}", u128::from(max) + 1),
                Range::Real { min, .. } if min > 0.0 => format!("{}", min / 2.0),
                Range::Real { max, .. } if max < 1e9 => format!("{}", max * 2.0),
                _ => continue,
            };
            let arg = format!("--{flag}={bad}");
            let out = common::rmcast(&[
                "send",
                "no-such-file",
                "-g",
                "239.255.78.73:28473",
                "-i",
                "lo",
                "-n",
                "1",
                "--protocol",
                p.name,
                arg.as_str(),
            ]);
            let case = format!("{} --{flag}={bad}", p.name);
            common::assert_refused(&out, &format!("--{flag} {bad} is outside"), &case);
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} values checked");
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
