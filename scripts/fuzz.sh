#!/usr/bin/env bash
# Run every rmcast fuzz target for RUNS executions each (default 10,000,000), one after another,
# one libFuzzer process at a time. Installs cargo-fuzz if missing; needs a nightly toolchain
# (`rustup toolchain install nightly`). Logs go to fuzz-logs/<target>.log at the workspace root,
# with one summary line per target in fuzz-logs/summary.txt. Corpora stay in each fuzz
# crate's corpus/ (git-ignored); a crash is saved in its artifacts/<target>/ and stops the run.
#
#   scripts/fuzz.sh [RUNS]                 every target
#   TARGETS="saw bap" scripts/fuzz.sh 1e6  only these
#
# Not run by CI (too slow); see docs/fuzzing.md.
set -euo pipefail
RUNS=${1:-10000000}
RUNS=$(python3 -c "print(int(float('$RUNS')))")
root=$(cd "$(dirname "$0")/.." && pwd)
logs=$root/fuzz-logs
mkdir -p "$logs"
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
# A crate's targets: every fuzz_targets/*.rs (wire has one per family, so a new family's
# target runs without a list kept here).
targets() { (cd "$root/$1/fuzz_targets" && for f in *.rs; do echo "${f%.rs}"; done); }
for dir in crates/wire/fuzz crates/net/fuzz; do
    for t in $(targets "$dir"); do
        if [ -n "${TARGETS:-}" ] && ! [[ " $TARGETS " == *" $t "* ]]; then continue; fi
        cd "$root/$dir"
        mkdir -p "corpus/$t"
        seeds=()
        [ -d "seeds/$t" ] && seeds=("seeds/$t")
        start=$(date +%s.%N)
        # -s none: the code under test is safe Rust (wire forbids unsafe; net's only unsafe
        # is in its socket, netns and signal modules), so AddressSanitizer would only slow
        # the search down; overflow checks and debug assertions stay on (cargo fuzz's -a).
        # The receiver opens sockets (loopback, group 239.255.90.1): as root it runs in a
        # network namespace of its own with only loopback up, so nothing leaves the host.
        wrap=()
        if [ "$t" = receiver ] && [ "$(id -u)" = 0 ]; then
            wrap=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh)
        fi
        "${wrap[@]}" cargo +nightly fuzz run -s none "$t" "corpus/$t" "${seeds[@]}" -- \
            -runs="$RUNS" -timeout=10 -print_final_stats=1 >"$logs/$t.log" 2>&1
        end=$(date +%s.%N)
        secs=$(python3 -c "print(round($end - $start, 1))")
        last=$(grep -E '^#[0-9]+' "$logs/$t.log" | tail -1)
        echo "$t: $RUNS runs in $secs s; last status: $last" | tee -a "$logs/summary.txt"
    done
done
