//! The commit this binary was built from, as `build.rs` found it, for the outputs that record
//! what made them: `rmcast --version`, `rmcast repro` (its first line and the report) and
//! every `rmcast bench` JSON result.

/// A short commit id, with `-dirty` when tracked files differed from it at build time, or
/// `unknown` when the binary was not built in a git checkout.
pub const COMMIT: &str = env!("RMCAST_COMMIT");

/// `rmcast --version`: the package version and the commit.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("RMCAST_COMMIT"),
    ")"
);

/// `v` with `"commit": COMMIT` added, when it is a JSON object (a bench result).
pub fn stamp(mut v: serde_json::Value) -> serde_json::Value {
    if let Some(o) = v.as_object_mut() {
        o.insert("commit".into(), COMMIT.into());
    }
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_commit_is_an_id_or_unknown() {
        let id = super::COMMIT.trim_end_matches("-dirty");
        assert!(
            id == "unknown" || (id.len() >= 7 && id.chars().all(|c| c.is_ascii_hexdigit())),
            "{}",
            super::COMMIT
        );
        let v = super::stamp(serde_json::json!({"rows": []}));
        assert_eq!(v["commit"], super::COMMIT);
        assert_eq!(super::stamp(serde_json::json!([1])), serde_json::json!([1]));
    }
}
