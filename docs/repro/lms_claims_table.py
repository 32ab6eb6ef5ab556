#!/usr/bin/env python3
"""Print a Markdown table of the lms claims whose verdict or mean differs between runs.

    python3 docs/repro/lms_claims_table.py NAME=DIR/claims.json NAME=DIR/claims.json ...

Each column is one run (`rmcast repro lms ... --out DIR`): the claim's verdict and its mean at
the decisive point (what `scripts/pin_values.py` records). `--all` prints every claim.
"""
import json
import sys


def main():
    args = [a for a in sys.argv[1:] if a != "--all"]
    every = "--all" in sys.argv[1:]
    runs = []
    for a in args:
        name, path = a.rsplit("=", 1)
        with open(path, encoding="utf-8") as f:
            runs.append((name, {c["id"]: c for c in json.load(f)}))
    ids = list(runs[0][1])
    print("| claim | " + " | ".join(n for n, _ in runs) + " |")
    print("|---|" + "---|" * len(runs))
    for i in ids:
        cells = []
        for _, d in runs:
            c = d.get(i)
            if c is None:
                cells.append(("—", None))
                continue
            m = c.get("mean")
            x = c.get("x")
            at = f" (x = {x:g})" if isinstance(x, (int, float)) else ""
            cells.append((c["verdict"], None if m is None else f"{m:.4g}{at}"))
        if not every and len({str(c) for c in cells}) == 1:
            continue
        print(f"| `{i}` | " + " | ".join(
            f"{v} {m}" if m is not None else v for v, m in cells) + " |")


if __name__ == "__main__":
    main()
