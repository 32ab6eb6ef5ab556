# bench/ns2/common.sh: what compare.sh and lms-compare.sh share. Source it after setting HERE
# (this directory), ROOT (the repository) and a `log` function; it installs Debian's ns2 if
# `ns` is missing, builds rmcast and the graph exporter (unless SUMMARY_ONLY=1), and sets
# NS, NS_VERSION, TARGET, RMCAST and EXPORT; `loss_and_stop_toml` ends an rmcast scenario.

if ! command -v ns >/dev/null 2>&1; then
    log "installing Debian's ns2"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ns2 >&2
fi
NS=$(command -v ns)
NS_VERSION=$(dpkg-query -W -f='${Version}' ns2 2>/dev/null || echo unknown)

TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
if [ "${SUMMARY_ONLY:-0}" != 1 ]; then
    log "building rmcast and the graph exporter (cargo build --release)"
    (cd "$ROOT" && CARGO_TARGET_DIR="$TARGET" cargo build --release -q -p rmcast >&2)
    # The exporter is its own workspace; sharing the target dir reuses rmcast-sim's build.
    (cd "$HERE/export" && CARGO_TARGET_DIR="$TARGET" cargo build --release -q >&2)
fi
RMCAST=$TARGET/release/rmcast
EXPORT=$TARGET/release/ns2-export

# loss_and_stop_toml DROPS: the end of an rmcast scenario for a drops file (`FROM TO SEQ LINK
# [K]` per line): a `drop_nth` rule on original data per line (link LINK entered from FROM,
# K or else SEQ + 1, cause single_loss), then `[stop]` at $STOP_S without stopping on
# completion.
loss_and_stop_toml() {
    local from seq link k
    while read -r from _ seq link k; do
        cat <<TOML

[[loss]]
model = "drop_nth"
k = ${k:-$((seq + 1))}
filter = "original"
at = "link"
links = [$link]
from = $from
cause = "single_loss"
TOML
    done < "$1"
    cat <<TOML

[stop]
time_limit_s = $STOP_S
when_complete = false
TOML
}
