//! `rmcast sim --shard K/N` and `rmcast merge`: the merged sweep is byte-identical to an
//! unsharded run, and bad or inconsistent shards are refused with exit status 2.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/examples")
        .join(name)
}

fn rmcast(args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::cargo_bin("rmcast").unwrap();
    c.env_remove("JOB_COMPLETION_INDEX")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env("RAYON_NUM_THREADS", "2");
    for (k, v) in env {
        c.env(k, v);
    }
    c.args(args).output().unwrap()
}

fn sim(sc: &Path, out: &Path, shard: Option<&str>, env: &[(&str, &str)]) -> std::process::Output {
    let mut a: Vec<&std::ffi::OsStr> = vec![
        "sim".as_ref(),
        sc.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--quiet".as_ref(),
    ];
    if let Some(s) = shard {
        a.push("--shard".as_ref());
        a.push(s.as_ref());
    }
    rmcast(&a, env)
}

fn merge(dirs: &[PathBuf], out: &Path) -> std::process::Output {
    let mut a: Vec<&std::ffi::OsStr> = vec!["merge".as_ref(), "--quiet".as_ref()];
    for d in dirs {
        a.push(d.as_os_str());
    }
    a.push("--out".as_ref());
    a.push(out.as_os_str());
    rmcast(&a, &[])
}

fn ok(o: &std::process::Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn refused(o: &std::process::Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
}

#[test]
fn merged_shards_are_byte_identical_to_an_unsharded_run() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // 2 seeds x 3 group sizes = 6 runs; 4 shards, so shards hold 2, 2, 1 and 1 runs.
    let sc = example("bus-saw.toml");
    ok(&sim(&sc, &t.join("whole"), None, &[]));
    let dirs: Vec<PathBuf> = (0..4).map(|k| t.join(format!("shard{k}"))).collect();
    ok(&sim(&sc, &dirs[0], Some("0/4"), &[]));
    ok(&sim(&sc, &dirs[1], Some("1/4"), &[]));
    // The cluster schedulers' index variables.
    ok(&sim(
        &sc,
        &dirs[2],
        Some("auto/4"),
        &[("SLURM_ARRAY_TASK_ID", "2")],
    ));
    ok(&sim(
        &sc,
        &dirs[3],
        Some("auto/4"),
        &[("JOB_COMPLETION_INDEX", "3")],
    ));
    assert!(!dirs[0].join("runs.csv").exists(), "a shard is not a sweep");
    let mut shuffled = dirs.clone();
    shuffled.reverse();
    ok(&merge(&shuffled, &t.join("merged")));
    for f in ["runs.csv", "runs.jsonl"] {
        let a = std::fs::read(t.join("whole").join(f)).unwrap();
        let b = std::fs::read(t.join("merged").join(f)).unwrap();
        assert!(a.len() > 100);
        assert!(a == b, "{f} differs after merge");
    }
}

#[test]
fn bad_and_inconsistent_shards_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let sc = example("bus-saw.toml");
    for bad in ["3/3", "x/2", "1/0", "2"] {
        refused(&sim(&sc, &t.join("bad"), Some(bad), &[]), "expected K/N");
    }
    refused(
        &sim(&sc, &t.join("bad"), Some("auto/2"), &[]),
        "JOB_COMPLETION_INDEX",
    );
    refused(
        &sim(
            &sc,
            &t.join("bad"),
            Some("auto/2"),
            &[("SLURM_ARRAY_TASK_ID", "2")],
        ),
        "not an index below 2",
    );

    let d: Vec<PathBuf> = (0..3).map(|k| t.join(format!("s{k}"))).collect();
    for (k, dir) in d.iter().enumerate() {
        ok(&sim(&sc, dir, Some(&format!("{k}/3")), &[]));
    }
    let out = t.join("out");
    refused(&merge(&d[..2], &out), "missing shard(s) 2/3");
    refused(
        &merge(&[d[0].clone(), d[1].clone(), d[1].clone()], &out),
        "given twice",
    );
    // Same scenario with another seed: a different fingerprint.
    let text = std::fs::read_to_string(&sc).unwrap();
    let other = t.join("other.toml");
    std::fs::write(&other, text.replace("seed = [1, 2]", "seed = [1, 3]")).unwrap();
    let foreign = t.join("foreign");
    ok(&sim(&other, &foreign, Some("2/3"), &[]));
    refused(
        &merge(&[d[0].clone(), d[1].clone(), foreign], &out),
        "different scenarios or seeds",
    );
    // Cut into another number of shards.
    let two = t.join("two");
    ok(&sim(&sc, &two, Some("1/2"), &[]));
    refused(&merge(&[d[0].clone(), two], &out), "shard count");
    // A directory whose shard never finished.
    let empty = t.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    refused(
        &merge(&[d[0].clone(), d[1].clone(), empty], &out),
        "not a finished shard directory",
    );
    assert!(
        !out.join("runs.csv").exists(),
        "no runs.csv after a refused merge"
    );
    // A damaged shard: its parts no longer match its manifest.
    let parts = d[2].join("runs.part.jsonl");
    let text = std::fs::read_to_string(&parts).unwrap();
    let first_line = text.lines().next().unwrap().to_string();
    std::fs::write(&parts, format!("{first_line}\n")).unwrap();
    refused(&merge(&d, &out), "damaged shard");
    assert!(!out.join("runs.csv").exists());
}
