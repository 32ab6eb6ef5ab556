//! Sets `RMCAST_COMMIT`, the commit the binary was built from, for the outputs that record
//! it (`rmcast --version`, `rmcast repro`'s first line and report, every `rmcast bench`
//! JSON): `git rev-parse --short HEAD`, with `-dirty` when tracked files differ from it, or
//! `unknown` outside a git checkout (a source tarball) or without git.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../..");
    let commit = match git(&root, &["rev-parse", "--short", "HEAD"]) {
        Some(rev) if !rev.is_empty() => {
            let dirty = git(&root, &["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            format!("{rev}{}", if dirty { "-dirty" } else { "" })
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=RMCAST_COMMIT={commit}");
    // Run again when HEAD moves (a commit, a checkout: HEAD, the index, the refs) or when a
    // tracked source changes (the -dirty mark).
    for args in [
        ["rev-parse", "--git-path", "HEAD"],
        ["rev-parse", "--git-path", "index"],
    ] {
        if let Some(p) = git(&root, &args) {
            println!("cargo:rerun-if-changed={}", root.join(p).display());
        }
    }
    if let Some(common) = git(&root, &["rev-parse", "--git-common-dir"]) {
        let common = root.join(common);
        println!("cargo:rerun-if-changed={}", common.join("refs").display());
        println!(
            "cargo:rerun-if-changed={}",
            common.join("packed-refs").display()
        );
    }
    for dir in [
        "crates",
        "python",
        "scenarios",
        "scripts",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
}
