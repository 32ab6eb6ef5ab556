//! What the README states about the code, checked against the code (issue 60): the protocol
//! table against `rmcast protocols --json`, the study list against the registry, every command
//! it shows parses (`rmcast … --help` after its arguments: an unknown flag or a bad value
//! fails), every bare `--flag` exists in the help of the command its section is about, every
//! example it runs exists, every repository path in its code resolves, every relative link in
//! it and in the guide resolves, every `rmcast` command in the guide's code blocks parses too,
//! and CI runs its test command. The `rmcast repro` transcripts in
//! `docs/results/` cannot drift from the registry either: each has one line per study (in the
//! order the studies finished) with that study's claim count, its FAIL lines name real claims
//! that are pinned as expected failures, and the counts add up. The numbers themselves come from
//! real runs written there by `scripts/repro_transcript.py`.

#[path = "readme/facts.rs"]
mod facts;

use rmcast_repro::{Pins, STUDIES};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
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

/// The lines of the ```text block of a transcript page, from its `$ …` command on.
fn transcript(page: &str) -> Vec<&str> {
    let start = page
        .find("```text\n$ ")
        .expect("a ```text block with a command")
        + 8;
    let rest = &page[start..];
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
fn readme_names_every_registered_study_with_its_seed() {
    let text = read("README.md");
    let para = text
        .find("The registered studies:")
        .map(|i| &text[i..])
        .expect("the README lists the studies");
    let para = &para[..para.find("\n\n").unwrap_or(para.len())];
    let named = facts::ticked(para);
    let registered: Vec<&str> = STUDIES.iter().map(|s| s.name()).collect();
    for s in STUDIES {
        let Some(at) = para.find(&format!("`{}` (", s.name())) else {
            panic!("the README's study list lacks `{}`", s.name());
        };
        // "(seed 003: …)" must be the seed the study's own description names.
        let after = &para[at + s.name().len() + 4..];
        if let Some(seed) = after.strip_prefix("seed ").map(|r| &r[..3]) {
            assert!(
                s.about().source.contains(&format!("seed {seed}")),
                "the README says `{}` is seed {seed}; the study says: {}",
                s.name(),
                s.about().source
            );
        }
    }
    for n in named.iter().filter(|n| !n.contains(' ')) {
        assert!(
            registered.contains(&n.as_str()) || n == "saw",
            "the README's study list names `{n}`, which is not a registered study"
        );
    }
}

#[test]
fn recorded_transcripts_match_the_registry_and_the_pinned_list() {
    for page in ["docs/results/repro-quick.md", "docs/results/repro-full.md"] {
        let text = read(page);
        assert!(text.contains("Code: `"), "{page} names the commit it ran");
        check_transcript(&transcript(&text));
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
                "FAIL {id}: the transcript shows a failure that is not pinned"
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
    // A full transcript leaves its FAIL lines out (`grep -v '^  FAIL'`); a quick one shows all.
    let fails_shown = !lines.iter().any(|l| l.contains("grep -v '^  FAIL'"));
    for line in lines.iter().filter(|_| fails_shown) {
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
