//! The README's `rmcast repro` transcripts and study list cannot drift from the registry: every
//! registered study is named, each transcript has one line per study (in the order the studies
//! finished) with that study's claim count, its FAIL lines name real claims that are pinned as
//! expected failures, and the counts add up. The numbers themselves come from real runs pasted
//! into the README.

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

/// The lines of each ```text block that starts with the `repro` command.
fn transcripts(readme: &str) -> Vec<Vec<&str>> {
    let command = "$ cargo run --release -q -p rmcast -- repro";
    let blocks: Vec<Vec<&str>> = readme
        .match_indices(command)
        .map(|(start, _)| {
            let rest = &readme[start..];
            let end = rest.find("```").expect("the transcript block ends");
            rest[..end].lines().collect()
        })
        .collect();
    assert!(!blocks.is_empty(), "the README shows a repro transcript");
    blocks
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
fn readme_transcripts_match_the_registry_and_the_pinned_list() {
    let text = readme();
    for lines in transcripts(&text) {
        check_transcript(&lines);
    }
}

fn check_transcript(lines: &[&str]) {
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
    for line in lines {
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
        let full_only = if rest.contains("in full mode only") {
            number_before(rest, "in full mode only")
        } else {
            0
        };
        assert_eq!(p + i + f + full_only, claims, "{line}");
        passed += p;
        inconclusive += i;
        failed += f;
        current = Some(study.name());
        studies_seen.push(study.name());
        fails_seen.insert(study.name(), 0);
    }
    let mut order: Vec<&str> = STUDIES.iter().map(|s| s.name()).collect();
    order.sort_unstable();
    studies_seen.sort_unstable();
    assert_eq!(studies_seen, order, "one line per registered study");
    for line in lines {
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
