#!/usr/bin/env python3
"""Record each pinned claim's value, as a run measured it, in scenarios/repro/pinned.toml.

`rmcast repro --check` fails when a pinned claim's value at its decisive point moves more than
25 % from the value recorded with its pin (crates/repro/src/pinned.rs, DRIFT): a known failure
is known at the size it was measured. This script writes those values from a run's
claims.json into each pin's `measured = { quick = ..., full = ... }`, for the run's mode only,
keeping the other mode's value. Pins whose claim the run did not measure, whose claim has no
single value (orderings, trends), or which test real sockets (`tests = "network"`: their
values vary between runs) are left as they are. Needs Python 3.11 (tomllib).

    target/release/rmcast repro --quick --out /tmp/q && \\
        python3 scripts/pin_values.py --mode quick /tmp/q/claims.json
    target/release/rmcast repro --out /tmp/f && \\
        python3 scripts/pin_values.py --mode full /tmp/f/claims.json
"""
import argparse
import json
import math
import os
import re
import sys
import tempfile
import tomllib

MEASURED = re.compile(r"^measured\s*=.*$", re.M)


def render(values):
    parts = [f"{m} = {values[m]!r}" for m in ("quick", "full") if m in values]
    return "measured = { " + ", ".join(parts) + " }"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("claims", help="claims.json of an `rmcast repro` run")
    p.add_argument("--mode", choices=["quick", "full"], required=True,
                   help="the run's mode (quick: --quick; full: the full or extended sweeps)")
    p.add_argument("--pinned", default=os.path.join(here, "..", "scenarios", "repro",
                                                    "pinned.toml"))
    a = p.parse_args()
    try:
        with open(a.claims, encoding="utf-8") as f:
            claims = {c["id"]: c for c in json.load(f)}
        with open(a.pinned, encoding="utf-8") as f:
            text = f.read()
        pins = tomllib.loads(text).get("pin", [])
    except (OSError, ValueError, KeyError, TypeError) as e:
        p.error(str(e))
    # Split the file into its header and one block per [[pin]], in order.
    starts = [m.start() for m in re.finditer(r"^\[\[pin\]\]\s*$", text, re.M)]
    if len(starts) != len(pins):
        p.error(f"{a.pinned}: {len(pins)} pins but {len(starts)} `[[pin]]` lines")
    blocks = [text[s:e] for s, e in zip(starts, starts[1:] + [len(text)])]
    recorded = skipped = 0
    out = [text[: starts[0]] if starts else text]
    for pin, block in zip(pins, blocks):
        values = dict(pin.get("measured", {}))
        c = claims.get(pin["id"])
        mean = c.get("mean") if c else None
        if (a.mode in pin.get("modes", ["quick", "full"]) and c is not None
                and c.get("tests") != "network" and isinstance(mean, (int, float))
                and math.isfinite(mean)):
            values[a.mode] = float(mean)
            recorded += 1
        else:
            skipped += 1
        if values:
            line = render(values)
            if MEASURED.search(block):
                block = MEASURED.sub(line, block, count=1)
            else:
                body = block.rstrip("\n")
                block = body + "\n" + line + "\n" + block[len(body) + 1:]
        out.append(block)
    new = "".join(out)
    tomllib.loads(new)  # never write a file the gate cannot read
    d = os.path.dirname(os.path.abspath(a.pinned))
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=d, delete=False) as f:
        f.write(new)
    os.replace(f.name, a.pinned)
    print(f"{a.pinned}: {a.mode} values recorded for {recorded} pins, {skipped} left as they were")
    return 0


if __name__ == "__main__":
    sys.exit(main())
