//! The README's `rmcast repro` transcript and study list cannot drift from the registry: every
//! registered study is named, the transcript has one line per study with that study's claim
//! count, its FAIL lines name real claims that are pinned as expected failures, and the counts
//! add up. The numbers themselves come from a real run pasted into the README.

use rmcast_repro::{Pins, STUDIES};
use std::collections::BTreeMap;
use std::path::Path;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
        .expect("README.md")
}

/// The claim ids of each registered study, from its built-in claims file.
fn claim_ids() -> BTreeMap<&'static str, Vec<String>> {
    STUDIES
        .iter()
        .map(|s| {
            let ids = rmcast_repro::claim::parse_claims(s.name(), s.about().claims_toml)
                .expect("claims.toml")
                .specs
                .into_iter()
                .map(|c| c.id)
                .collect();
            (s.name(), ids)
        })
        .collect()
}

/// The lines of the ```text block that starts with the `repro` command.
fn transcript(readme: &str) -> Vec<&str> {
    let start = readme
        .find("$ cargo run --release -q -p rmcast -- repro")
        .expect("the README shows a repro transcript");
    let rest = &readme[start..];
    let end = rest.find("```").expect("the transcript block ends");
    rest[..end].lines().collect()
}

fn number_before(line: &str, word: &str) -> usize {
    let i = line
        .find(word)
        .unwrap_or_else(|| panic!("`{word}` in {line}"));
    line[..i]
        .split_whitespace()
        .last()
        .and_then(|n| n.trim_start_matches('(').parse().ok())
        .unwrap_or_else(|| panic!("a number before `{word}` in {line}"))
}

#[test]
fn readme_names_every_registered_study() {
    let text = readme();
    let para = text
        .find("`--list` names the registered studies")
        .map(|i| &text[i..])
        .expect("the README lists the studies");
    let para = &para[..para.find("\n\n").unwrap_or(para.len())];
    for s in STUDIES {
        assert!(
            para.contains(&format!("`{}`", s.name())),
            "the README's study list lacks `{}`",
            s.name()
        );
    }
}

#[test]
fn readme_transcript_matches_the_registry_and_the_pinned_list() {
    let text = readme();
    let lines = transcript(&text);
    let ids = claim_ids();
    let pins = Pins::builtin().expect("pinned.toml");
    let running = lines
        .iter()
        .find(|l| l.starts_with("running "))
        .expect("a `running N studies` line");
    assert_eq!(
        number_before(running, "studies"),
        STUDIES.len(),
        "{running}"
    );
    let (mut passed, mut inconclusive, mut failed) = (0, 0, 0);
    let mut current: Option<&str> = None;
    let mut fails_seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut studies_seen = Vec::new();
    for line in &lines {
        if let Some(rest) = line.strip_prefix("  FAIL ") {
            let id = rest.split(':').next().unwrap_or("");
            let study = current.expect("a FAIL line follows its study's line");
            assert!(
                ids[study].iter().any(|c| c == id),
                "FAIL {id}: not a claim of {study}"
            );
            assert!(
                pins.get(id).is_some(),
                "FAIL {id}: the README shows a failure that is not pinned"
            );
            *fails_seen.entry(study).or_default() += 1;
            continue;
        }
        let Some((name, rest)) = line.split_once(": ") else {
            continue;
        };
        let Some(study) = STUDIES.iter().find(|s| s.name() == name) else {
            continue;
        };
        let claims = number_before(rest, "claims");
        let (p, f) = (number_before(rest, "passed"), number_before(rest, "failed"));
        let i = number_before(rest, "inconclusive");
        assert_eq!(
            claims,
            ids[study.name()].len(),
            "{line}: claims.toml has a different count"
        );
        assert_eq!(p + i + f, claims, "{line}");
        passed += p;
        inconclusive += i;
        failed += f;
        current = Some(study.name());
        studies_seen.push(study.name());
        fails_seen.insert(study.name(), 0);
    }
    let order: Vec<&str> = STUDIES.iter().map(|s| s.name()).collect();
    assert_eq!(
        studies_seen, order,
        "one line per registered study, in report order"
    );
    for line in &lines {
        if let Some((name, rest)) = line.split_once(": ") {
            if let Some(f) = fails_seen.get(name) {
                assert_eq!(
                    number_before(rest, "failed"),
                    *f,
                    "{line}: FAIL lines shown"
                );
            }
        }
    }
    let summary = lines
        .iter()
        .find(|l| l.starts_with("claims: "))
        .expect("the summary line");
    assert_eq!(number_before(summary, "passed"), passed, "{summary}");
    assert_eq!(
        number_before(summary, "inconclusive"),
        inconclusive,
        "{summary}"
    );
    assert_eq!(number_before(summary, "failed"), failed, "{summary}");
}
