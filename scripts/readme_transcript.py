#!/usr/bin/env python3
"""Put a run's transcript into the README (the quick or the full `rmcast repro --check` block).

The README shows two transcripts, each checked by crates/cli/tests/readme.rs against the
registry and the pinned list. This script writes one from a run's own output, so that it is
never typed by hand: FAIL lines are cut at 102 characters (quick) or left out (full), as the
README says.

    target/release/rmcast repro --quick --check >q.out 2>q.err
    python3 scripts/readme_transcript.py quick q.out q.err
    /usr/bin/time -v target/release/rmcast repro --check --out /work/full >f.out 2>f.err
    python3 scripts/readme_transcript.py full f.out f.err
"""
import argparse
import os


def cut(line):
    if len(line) <= 104:
        return line
    head = line[:102]
    return head + ("…" if head.endswith(" ") else " …")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=["quick", "full"])
    p.add_argument("stdout")
    p.add_argument("stderr")
    a = p.parse_args()
    out = open(a.stdout, encoding="utf-8").read().splitlines()
    err = open(a.stderr, encoding="utf-8").read().splitlines()
    check = [l for l in err if l.startswith("check: ") and "expected (of" in l]
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
    text = open(readme, encoding="utf-8").read()
    if a.mode == "quick":
        cmd = "$ cargo run --release -q -p rmcast -- repro --quick --check"
        body = [cut(l) for l in out] + check
    else:
        cmd = "$ grep -v '^  FAIL' out.txt"
        elapsed = [l.strip() for l in err if l.strip().startswith("Elapsed (wall clock)")]
        body = [l for l in out if not l.startswith("  FAIL ")]
        body += ["$ grep -E 'expected \\(of|Elapsed' err.txt"] + check
        body += ["\t" + e for e in elapsed]
    # The block whose command line is `cmd`: replace what follows it up to the fence.
    start = text.index(cmd) + len(cmd) + 1
    end = text.index("```", start)
    text = text[:start] + "\n".join(body) + "\n" + text[end:]
    open(readme, "w", encoding="utf-8").write(text)
    print(f"README.md: {a.mode} transcript replaced ({len(body)} lines)")


if __name__ == "__main__":
    main()
