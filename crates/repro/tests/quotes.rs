//! Every claim that cites a seed quotes it, and the quote is the seed's own words.
//!
//! The seeds' texts are not part of the repository: the test reads them from `RMCAST_SEEDS`,
//! or from `../shared/seeds` beside the workspace. Without them it says skipped, and under
//! `CI=true` it fails (`.ci/run` points `RMCAST_SEEDS` at them).

use rmcast_repro::claim::{parse_claims, quote};
use std::path::{Path, PathBuf};

fn seeds_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("RMCAST_SEEDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/seeds"));
    dir.is_dir().then_some(dir)
}

/// The text of seed `n` (a file named `00n_*.txt`), normalized.
fn seed_text(dir: &Path, n: u32) -> quote::SeedText {
    let prefix = format!("{n:03}_");
    let entry = std::fs::read_dir(dir)
        .expect("seeds dir readable")
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .unwrap_or_else(|| panic!("no seed {prefix}*.txt in {}", dir.display()));
    quote::SeedText::new(&std::fs::read_to_string(entry.path()).expect("seed text readable"))
}

#[test]
fn every_claim_citing_a_seed_quotes_its_words() {
    let Some(dir) = seeds_dir() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but no seeds: set RMCAST_SEEDS to the seeds' folder"
        );
        eprintln!("skipped: no seeds (set RMCAST_SEEDS)");
        return;
    };
    let mut problems = Vec::new();
    let mut checked = 0;
    // Each seed read and normalized once, however many claims cite it.
    let mut seeds = std::collections::BTreeMap::new();
    for study in rmcast_repro::STUDIES {
        let about = study.about();
        let claims = parse_claims(about.name, about.claims_toml).expect("claims parse");
        for c in &claims.specs {
            let Some(seed) = quote::cited_seed(&c.source) else {
                continue;
            };
            match &c.quote {
                None => problems.push(format!("{}: cites seed {seed:03} but quotes nothing", c.id)),
                Some(q) => match seeds
                    .entry(seed)
                    .or_insert_with(|| seed_text(&dir, seed))
                    .check(q)
                {
                    Ok(()) => checked += 1,
                    Err(e) => problems.push(format!("{}: {e}", c.id)),
                },
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} of the claims citing a seed do not quote it ({checked} do):\n{}",
        problems.len(),
        problems.join("\n")
    );
}
