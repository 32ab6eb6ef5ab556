#!/usr/bin/env bash
# Behaviour check for refactors: runs every scenario under scenarios/ with `rmcast sim` and
# `rmcast repro --quick`, and compares runs.csv / runs.jsonl / packets.csv / losses.csv of each
# scenario and claims.json of the report byte for byte with the same outputs of a baseline
# revision (built in a git worktree), or with a directory a previous call recorded.
#
#   scripts/same-behaviour.sh record DIR [REV]   # outputs of REV (default HEAD) into DIR
#   scripts/same-behaviour.sh check DIR          # outputs of the working tree vs DIR
#   scripts/same-behaviour.sh REV                # record REV into a temp dir, then check
#
# Exit status: 0 identical, 1 some output differs (the differing files are named), 2 usage or
# build error. Environment: CARGO_TARGET_DIR is honoured for the working tree's build.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '2,13p' "$0" >&2; exit 2; }

# outputs BIN DIR: every scenario's runs and the quick report's claims into DIR.
outputs() {
  local bin=$1 dir=$2 src=$3 f name
  mkdir -p "$dir"
  while IFS= read -r f; do
    # a scenario file has a [protocol] or [run] table; claims.toml files are not scenarios
    grep -q '^\[protocol\]\|^\[run\]\|^\[topology\]' "$f" || continue
    name=$(echo "${f#"$src"/scenarios/}" | tr '/' '_' | sed 's/\.toml$//')
    if ! RAYON_NUM_THREADS=2 "$bin" sim "$f" --out "$dir/$name" --quiet >"$dir/$name.log" 2>&1; then
      echo "sim failed: $f (see $dir/$name.log)" >&2
      echo "failed" >"$dir/$name.status"
    fi
    rm -f "$dir/$name.log"
  done < <(find "$src/scenarios" -name '*.toml' | sort)
  set +e
  "$bin" repro --quick --quiet --out "$dir/repro" >/dev/null 2>&1
  echo "$?" >"$dir/repro.status"
  set -e
  # only the machine-readable results are compared; the report's HTML/SVG follow from them.
  # Claims measured on real sockets (xtp.net.*, xtp.ns.*: wall-clock goodput on loopback and
  # namespace hosts) vary from run to run; their measurements, and the explanations that quote
  # them, are blanked, everything else kept.
  python3 - "$dir/repro/claims.json" <<'PY'
import json, sys
path = sys.argv[1]
rows = json.load(open(path))
for r in rows:
    if r["id"].startswith(("xtp.net.", "xtp.ns.")):
        for k in ("mean", "sd", "n", "ci_lo", "ci_hi", "detail", "verdict", "explanation"):
            r[k] = "(real sockets: not compared)"
json.dump(rows, open(path, "w"), indent=1, sort_keys=True)
PY
  find "$dir/repro" -type f ! -name claims.json -delete
}

build_at() { # REV -> path of a release binary built from REV
  local rev=$1 wt
  wt=$(mktemp -d /tmp/rmcast-base.XXXXXX)
  git -C "$top" worktree add -q --detach "$wt" "$rev"
  (cd "$wt" && CARGO_TARGET_DIR="${BASE_TARGET_DIR:-$top/target/same-behaviour-base}" \
    cargo build --release -q -p rmcast) >&2
  echo "${BASE_TARGET_DIR:-$top/target/same-behaviour-base}/release/rmcast $wt"
}

record() { # DIR REV
  local dir=$1 rev=${2:-HEAD} bin wt
  read -r bin wt < <(build_at "$rev")
  outputs "$bin" "$dir" "$wt"
  git -C "$top" worktree remove --force "$wt"
  echo "recorded $(git -C "$top" rev-parse --short "$rev") into $dir"
}

check() { # DIR
  local base=$1 now rc=0
  [ -d "$base" ] || { echo "no baseline at $base" >&2; exit 2; }
  (cd "$top" && cargo build --release -q -p rmcast) || exit 2
  now=$(mktemp -d /tmp/rmcast-now.XXXXXX)
  outputs "${CARGO_TARGET_DIR:-$top/target}/release/rmcast" "$now" "$top"
  if diff -r -q "$base" "$now"; then
    echo "same behaviour: $(find "$now" -type f | wc -l) output files identical to $base"
  else
    echo "behaviour changed: the files above differ (baseline $base, now $now)"
    rc=1
  fi
  return $rc
}

case "${1:-}" in
  record) [ $# -ge 2 ] || usage; record "$2" "${3:-HEAD}" ;;
  check) [ $# -eq 2 ] || usage; check "$2" ;;
  ""|-h|--help) usage ;;
  *) base=$(mktemp -d /tmp/rmcast-base-out.XXXXXX); record "$base" "$1"; check "$base" ;;
esac
