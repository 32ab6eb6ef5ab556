# bench/ns2/common.sh: what compare.sh and lms-compare.sh share. Source it after setting HERE
# (this directory), ROOT (the repository) and a `log` function; it installs Debian's ns2 if
# `ns` is missing, builds rmcast and the graph exporter (unless SUMMARY_ONLY=1), and sets
# NS, NS_VERSION, TARGET, RMCAST and EXPORT.

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
