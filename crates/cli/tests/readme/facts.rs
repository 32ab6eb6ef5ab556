//! The README's facts about the code: protocols, commands, flags, examples, paths and links.

use super::{read, repo};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The README's subcommand help texts, each asked of the binary once.
struct Helps(BTreeMap<String, String>);

impl Helps {
    fn get(&mut self, sub: &str) -> &str {
        self.0.entry(sub.to_string()).or_insert_with(|| {
            let out = rmcast(&[sub, "--help"]);
            assert!(out.0, "rmcast {sub} --help failed: {}", out.1);
            out.1
        })
    }
}

/// Runs the binary; (success, stdout + stderr).
fn rmcast(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rmcast"))
        .args(args)
        .output()
        .expect("run rmcast");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// The text between backticks in `md` (outside fenced blocks).
pub fn ticked(md: &str) -> Vec<String> {
    md.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Every piece of code in `md`: each line of a fenced block (its `#` comment cut off) and, with
/// `inline`, each inline span outside them.
fn code_of(md: &str, inline: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (i, part) in md.split("```").enumerate() {
        if i % 2 == 1 {
            let body = part.split_once('\n').map_or("", |x| x.1);
            out.extend(
                body.lines()
                    .map(|l| l.split(" #").next().unwrap_or("").to_string()),
            );
        } else if inline {
            out.extend(ticked(part));
        }
    }
    out
}

fn code(md: &str) -> Vec<String> {
    code_of(md, true)
}

/// `rmcast ARGS --help` succeeds: ARGS parse (clap stops at an unknown flag or a bad value
/// before it reaches `--help`).
fn assert_parses(line: &str, args: &[String]) {
    let mut with_help: Vec<&str> = args.iter().map(String::as_str).collect();
    if !with_help.contains(&"--help") {
        with_help.push("--help");
    }
    let (ok, out) = rmcast(&with_help);
    assert!(ok, "`{line}` does not parse:\n{out}");
}

/// The `rmcast` arguments of a line of code, if it runs `rmcast` (directly, under `sudo`, in
/// a pipe, or as `cargo run … -p rmcast -- …`).
fn rmcast_args(line: &str) -> Option<Vec<String>> {
    line.split('|').find_map(|seg| {
        let seg = seg.trim().trim_start_matches("sudo ");
        let rest = if let Some(r) = seg.strip_prefix("rmcast ") {
            r
        } else if seg.starts_with("cargo run") && seg.contains("-p rmcast --") {
            seg.split_once(" -- ")?.1
        } else {
            return None;
        };
        Some(rest.split_whitespace().map(str::to_string).collect())
    })
}

fn flags(s: &str) -> Vec<&str> {
    s.split(|c: char| c.is_whitespace() || c == '=')
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .collect()
}

/// Whether `help` lists `flag` as a whole word (`--explor` is not `--explore`).
fn has_flag(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(i, _)| {
        !help[i + flag.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// The README's sections: (heading, body).
fn sections(md: &str) -> Vec<(&str, &str)> {
    md.split("\n## ")
        .skip(1)
        .map(|s| s.split_once('\n').unwrap_or((s, "")))
        .collect()
}

#[test]
fn every_command_the_readme_shows_parses_and_every_flag_exists() {
    let md = read("README.md");
    let mut helps = Helps(BTreeMap::new());
    let mut commands = 0;
    for (heading, body) in sections(&md) {
        let mut subs: Vec<String> = ticked(heading)
            .iter()
            .filter_map(|c| c.strip_prefix("rmcast ").map(str::to_string))
            .collect();
        for line in code(body) {
            let Some(args) = rmcast_args(&line) else {
                continue;
            };
            commands += 1;
            assert_parses(&format!("README.md: {line}"), &args);
            if let Some(sub) = args.first().filter(|s| !s.starts_with('-')) {
                if !subs.contains(sub) && ticked(heading).is_empty() {
                    subs.push(sub.clone());
                }
            }
        }
        // A flag shown on its own belongs to the command(s) the section is about.
        for span in code(body).iter().filter(|c| c.starts_with("--")) {
            for flag in flags(span) {
                assert!(
                    subs.iter().any(|s| has_flag(helps.get(s), flag)),
                    "`{flag}` in the README's section \"{heading}\" is not a flag of {subs:?}"
                );
            }
        }
    }
    assert!(
        commands >= 10,
        "only {commands} rmcast commands found in the README"
    );
}

#[test]
fn every_command_in_the_guides_code_blocks_parses() {
    let mut commands = 0;
    for page in markdown_in("docs/guide") {
        for line in code_of(&read(&page), false) {
            if let Some(args) = rmcast_args(&line) {
                commands += 1;
                assert_parses(&format!("{page}: {line}"), &args);
            }
        }
    }
    assert!(
        commands >= 8,
        "only {commands} rmcast commands found in the guide"
    );
}

#[test]
fn the_protocol_table_is_the_spec_table() {
    let md = read("README.md");
    let (_, body) = sections(&md)
        .into_iter()
        .find(|(h, _)| *h == "Protocols")
        .expect("a Protocols section");
    let rows: BTreeMap<String, String> = body
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((name.to_string(), cells.get(2)?.to_string()))
        })
        .collect();
    let (ok, json) = rmcast(&["protocols", "--json"]);
    assert!(ok, "{json}");
    let specs: Vec<Value> = serde_json::from_str(&json).expect("protocols --json");
    let names: BTreeSet<&str> = specs.iter().filter_map(|p| p["name"].as_str()).collect();
    let shown: BTreeSet<&str> = rows.keys().map(String::as_str).collect();
    assert_eq!(
        shown, names,
        "the README's protocol table against `rmcast protocols --json`"
    );
    for p in &specs {
        let (name, seed) = (p["name"].as_str().unwrap(), p["seed"].as_str().unwrap());
        assert!(
            seed.starts_with(&rows[name]),
            "{name}: README seed {}, spec {seed}",
            rows[name]
        );
    }
    // The default it names is the one `rmcast send` uses.
    let flat = body.replace('\n', " ");
    let default = flat
        .split("the default is `")
        .nth(1)
        .and_then(|r| r.split('`').next())
        .expect("the README names the default protocol");
    let (_, help) = rmcast(&["send", "--help"]);
    assert_eq!(default, rmcast_net::agents::DEFAULT_PROTOCOL, "{help}");
}

#[test]
fn every_example_path_and_test_command_the_readme_names_exists() {
    let md = read("README.md");
    let root = repo();
    for line in code(&md) {
        let words: Vec<&str> = line.split_whitespace().collect();
        // `cargo run -p CRATE --example NAME`: CRATE's directory has examples/NAME.rs.
        if let Some(i) = words.iter().position(|w| *w == "--example") {
            let krate = words[words.iter().position(|w| *w == "-p").unwrap() + 1];
            let dir = krate.strip_prefix("rmcast-").unwrap_or(krate);
            let file = root.join(format!("crates/{dir}/examples/{}.rs", words[i + 1]));
            assert!(file.exists(), "`{line}`: no {}", file.display());
            let manifest = read(&format!("crates/{dir}/Cargo.toml"));
            assert!(manifest.contains(&format!("name = \"{krate}\"")), "{krate}");
        }
        // Every repository path in the README's code exists.
        for w in &words {
            let w = w.trim_end_matches([',', ')', ';']);
            let top = [
                "scenarios/",
                "tools/",
                "crates/",
                "docs/",
                "scripts/",
                "python/",
            ];
            if top.iter().any(|t| w.starts_with(t)) || w == "./python" {
                assert!(root.join(w).exists(), "`{line}`: {w} does not exist");
            }
        }
    }
    // The README's test command is the one CI runs.
    assert!(md.contains("```sh\n# the main job"), "the two commands");
    let ci = read(".ci/run");
    assert!(
        md.contains("\ncargo test --workspace\n"),
        "the README's test command"
    );
    assert!(
        ci.contains("\ncargo test --workspace\n"),
        ".ci/run runs the README's test command"
    );
    assert!(
        ci.contains("repro --quick --check"),
        ".ci/run runs the studies"
    );
}

/// Relative links of one Markdown file that do not resolve.
fn broken_links(rel: &str) -> Vec<String> {
    let text = read(rel);
    let dir = repo().join(rel).parent().unwrap().to_path_buf();
    let mut broken = Vec::new();
    for part in text.split("](").skip(1) {
        let target = part.split(')').next().unwrap_or("");
        let path = target.split('#').next().unwrap_or("");
        if path.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        if !dir.join(path).exists() {
            broken.push(format!("{rel}: {target}"));
        }
    }
    broken
}

fn markdown_in(dir: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(repo().join(dir))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    out.sort();
    out
}

#[test]
fn every_relative_link_in_the_readme_and_the_guide_resolves() {
    let mut files = vec!["README.md".to_string(), "ARCHITECTURE.md".to_string()];
    files.extend(markdown_in("docs"));
    files.extend(markdown_in("docs/guide"));
    files.extend(markdown_in("docs/results"));
    let broken: Vec<String> = files.iter().flat_map(|f| broken_links(f)).collect();
    assert!(
        broken.is_empty(),
        "links that do not resolve:\n{}",
        broken.join("\n")
    );
    assert!(Path::new(&repo().join("docs/guide")).is_dir());
}

#[test]
fn the_defaults_the_readme_states_are_the_binary_defaults() {
    let md = read("README.md").replace('\n', " ");
    // (what the README says, the command, what its help says)
    let pairs = [
        (
            "Pacing defaults to 1 Gbit/s",
            "send",
            "--rate defaults to 1G",
        ),
        (
            "The report lands in `rmcast-report/`",
            "repro",
            "[default: rmcast-report]",
        ),
        (
            "report in rmcast-report/",
            "repro",
            "[default: rmcast-report]",
        ),
    ];
    let mut helps = Helps(BTreeMap::new());
    for (said, sub, help) in pairs {
        assert!(
            md.contains(said),
            "the README no longer says {said:?}: update this test"
        );
        assert!(
            helps.get(sub).contains(help),
            "the README says {said:?}; `rmcast {sub} --help` lacks {help:?}"
        );
    }
}

/// Issue 60's bounds: at most 200 lines, and no dated timing (a date, or a number of seconds,
/// milliseconds, minutes or hours): measurements go to docs/results/.
#[test]
fn the_readme_is_short_and_keeps_no_diary() {
    let md = read("README.md");
    let lines = md.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines; at most 200");
    let words: Vec<&str> = md.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let b = w
            .trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-')
            .as_bytes();
        let date = b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && b.iter()
                .enumerate()
                .all(|(k, c)| k == 4 || k == 7 || c.is_ascii_digit());
        assert!(
            !date,
            "README.md shows a date ({w}): records go to docs/results/"
        );
        let number = !b.is_empty() && b.iter().all(|c| c.is_ascii_digit() || *c == b'.');
        let unit = words
            .get(i + 1)
            .map(|u| u.trim_end_matches([',', ';', ')', '.']));
        assert!(
            !(number && matches!(unit, Some("s" | "ms" | "min" | "h" | "hours" | "minutes"))),
            "README.md shows a timing ({w} {}): measurements go to docs/results/",
            unit.unwrap_or("")
        );
    }
}
