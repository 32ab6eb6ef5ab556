#!/usr/bin/env python3
"""Write a run's `rmcast repro --check` transcript to docs/results/ (quick or full).

docs/results/repro-quick.md and docs/results/repro-full.md each hold the latest recorded
run of one mode, with the commit it ran and when; crates/cli/tests/readme.rs checks both
against the registry and the pinned list. This script writes them from a run's own output,
so that they are never typed by hand: FAIL lines are cut at 102 characters (quick) or left
out (full). The commit is the one the binary says it was built from (its `rmcast VERSION
(commit ID)` line, from crates/cli/build.rs: `-dirty` when the tree had changes); outputs of
older binaries, which do not say, fall back to `git rev-parse --short HEAD` (`+dirty` with
changes), so run the script on the tree whose binary made them, or give --commit.

    target/release/rmcast repro --quick --check >q.out 2>q.err
    python3 scripts/repro_transcript.py quick q.out q.err
    /usr/bin/time -v target/release/rmcast repro --check --out /work/full >f.out 2>f.err
    python3 scripts/repro_transcript.py full f.out f.err
"""
import argparse
import datetime
import os
import re
import subprocess

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

QUICK_CMD = "$ cargo run --release -q -p rmcast -- repro --quick --check"
FULL_CMD = "$ /usr/bin/time -v target/release/rmcast repro --check --out DIR >out.txt 2>err.txt"

ABOUT = {
    "quick": (
        "`rmcast repro --quick --check`: the latest recorded run",
        "Reduced sweeps, as CI runs them (at least 5 runs per evaluated point). FAIL details are "
        "cut at 102 characters. Every failure shown is pinned in `scenarios/repro/pinned.toml`.",
    ),
    "full": (
        "`rmcast repro --check`: the latest recorded full run",
        "Full sweeps with sequential sampling; FAIL lines left out (the report lists them). Every "
        "timed full run, with what changed between them: "
        "[docs/repro/full-runs.md](../repro/full-runs.md).",
    ),
}


def cut(line):
    if len(line) <= 104:
        return line
    head = line[:102]
    return head + ("…" if head.endswith(" ") else " …")


def commit():
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    rev = git("rev-parse", "--short", "HEAD")
    return rev + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def commit_said(lines):
    """The commit the binary printed (`rmcast 0.1.0 (commit 1a2b3c4)`), if it did."""
    for line in lines:
        m = re.fullmatch(r"rmcast \S+ \(commit (\S+)\)", line.strip())
        if m:
            return m.group(1)
    return None


def page(mode, body, rev, when):
    title, about = ABOUT[mode]
    return "\n".join([
        f"# {title}",
        "",
        f"Code: `{rev}`. Recorded: {when}. Written by `scripts/repro_transcript.py {mode}` from "
        "the run's own stdout and stderr; `crates/cli/tests/readme.rs` checks its studies, "
        "claim counts and failed ids against the registry and the pinned list.",
        "",
        about,
        "",
        "```text",
        *body,
        "```",
        "",
    ])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=["quick", "full"])
    p.add_argument("stdout")
    p.add_argument("stderr")
    p.add_argument("--commit", help="the commit whose binary made the output (default: the "
                   "one the output names; for an older binary's output, HEAD, +dirty with "
                   "uncommitted changes)")
    p.add_argument("--note", default="", help="a sentence on the run's conditions, e.g. what "
                   "else loaded the machine")
    a = p.parse_args()
    out = open(a.stdout, encoding="utf-8").read().splitlines()
    err = open(a.stderr, encoding="utf-8").read().splitlines()
    check = [l for l in err if l.startswith("check: ") and "expected (of" in l]
    if a.mode == "quick":
        body = [QUICK_CMD] + [cut(l) for l in out] + check
    else:
        elapsed = [l.strip() for l in err if l.strip().startswith("Elapsed (wall clock)")]
        body = [FULL_CMD, "$ grep -v '^  FAIL' out.txt"]
        body += [l for l in out if not l.startswith("  FAIL ")]
        body += ["$ grep -E 'expected \\(of|Elapsed' err.txt"] + check
        body += ["\t" + e for e in elapsed]
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    path = os.path.join(ROOT, "docs", "results", f"repro-{a.mode}.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(page(a.mode, body, a.commit or commit_said(out) or commit(), when + (f"; {a.note.rstrip('.')}" if a.note else "")))
    print(f"{os.path.relpath(path, ROOT)}: {a.mode} transcript written ({len(body)} lines)")


if __name__ == "__main__":
    main()
