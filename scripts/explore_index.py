#!/usr/bin/env python3
"""Write docs/repro/explore/README.md: an index of the committed `rmcast repro --explore`
sweeps, from each sweep's own files (explore-points.csv for the pass rates, explore.md's
table of tables for the per-table verdicts, run.log's first line for the command's grid).

Usage: scripts/explore_index.py [DOCS_DIR]   (default docs/repro/explore)
"""
import csv
import pathlib
import sys

COMMANDS = {
    # The command that wrote each sweep (also in crates/repro/src/explored.rs).
    "segovia-t-limit": "rmcast repro segovia --runs-cap 1 --explore t=35000..155000:5 --explore limit=10..30:3",
    "segovia-backoff-t": "rmcast repro segovia --runs-cap 1 --explore backoff=0..1:2 --explore t=35000..155000:3",
    "lms-routes": "rmcast repro lms --explore hop_routes=0..1:2",
    "xtp-cost-wtimer": "rmcast repro xtp --quick --explore per_call_ms=2..8:4 --explore wtimer_ms=2..20:4",
}


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "docs/repro/explore")
    out = [
        "# Committed `--explore` sweeps",
        "",
        "Written by `scripts/explore_index.py` from each sweep's files. Each directory holds the",
        "tool's output: `explore.md` (pass rate per point; per table whether some point passes",
        "all of it inside the seed's stated ranges), `explore.csv` (every claim at every point),",
        "`explore-points.csv`, the heat maps `explore-pass-rate.svg` and `explore-claims.svg`, and",
        "`run.log`. `rmcast repro` embeds each `explore.csv` and pass-rate heat map and shows them",
        "in the report of a study whose validation claims pass below 80 % (crates/repro/src/explored.rs).",
        "",
        "| sweep | command | points | validation pass rate (lowest – highest) | best point |",
        "|---|---|---|---|---|",
    ]
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        pts = d / "explore-points.csv"
        if not pts.is_file():
            continue
        rows = list(csv.DictReader(pts.open()))
        fixed = {"validation_claims", "passed", "inconclusive", "failed", "pass_rate", "in_seed_range"}
        axes = [k for k in rows[0].keys() if k not in fixed]
        rates = [(float(r["pass_rate"]), r) for r in rows]
        lo = min(rates, key=lambda t: t[0])
        hi = max(rates, key=lambda t: t[0])
        best = ", ".join(f"{a} = {hi[1][a]}" for a in axes)
        out.append(
            f"| [`{d.name}`]({d.name}/explore.md) | `{COMMANDS.get(d.name, '?')}` | {len(rows)} | "
            f"{100 * lo[0]:.1f} % – {100 * hi[0]:.1f} % (of {hi[1]['validation_claims']}) | {best}: "
            f"{hi[1]['passed']} passed |"
        )
    out += [
        "",
        "These sweeps were run by a binary from before commit bf9f281, which fixed explore.md's",
        "parameter lines: each calls the first grid point's value \"the study's own value\" (e.g.",
        "t = 35,000 for segovia, whose runs use 95,000; the studies' values are in their reports'",
        "tables of unstated values). The numbers are unaffected.",
        "",
    ]
    (root / "README.md").write_text("\n".join(out))
    print(f"wrote {root / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
