#!/usr/bin/env bash
# Run docs/cluster.md's Slurm recipe end to end under a real, single-node Slurm, and check
# that the merged sweep is byte-identical to the same sweep run without a scheduler.
#
#   sudo bash bench/slurm/run.sh [SCENARIO]
#
# SCENARIO defaults to scenarios/examples/bus-saw.toml (6 runs). As root: it
# installs Debian's slurm-wlm and munge if missing, starts munged, slurmctld and slurmd on
# this machine with a throw-away configuration (state, spool and logs under a temporary
# directory), submits the recipe's job array and merge job exactly as the document writes
# them (the two code blocks under "## Slurm job array" are extracted from docs/cluster.md,
# so what runs is what the document says), waits for both, compares `runs.csv` and
# `runs.jsonl` with an unsharded `rmcast sim`, and stops the daemons it started.
#
# The node is declared with 16 CPUs and 64 GiB whatever the machine has
# (`SlurmdParameters=config_overrides`), so the recipe's `--cpus-per-task=4 --mem=8G` can be
# scheduled on a small machine; Slurm then runs the tasks side by side on the real cores.
# Nothing in the recipe is overridden: its 16 shards run (a sweep with fewer runs than
# shards leaves some shards empty, which the merge must accept).
#
# Exit status: 0 identical, 1 different or a job failed, 2 could not set up.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
scenario=$(realpath "${1:-$repo/scenarios/examples/bus-saw.toml}")
doc="$repo/docs/cluster.md"

die() { echo "slurm: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "run as root (it starts slurmctld, slurmd and munged)"
[ -f "$scenario" ] || die "no scenario file $scenario"

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "slurm: installing slurm-wlm and munge (Debian packages)"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null
fi

rmcast=${RMCAST:-}
if [ -z "$rmcast" ]; then
    echo "slurm: building rmcast (cargo build --release -p rmcast)"
    (cd "$repo" && cargo build --release -q -p rmcast)
    rmcast="${CARGO_TARGET_DIR:-$repo/target}/release/rmcast"
fi
[ -x "$rmcast" ] || die "no rmcast binary at $rmcast"

work=$(mktemp -d /tmp/rmcast-slurm.XXXXXX)
echo "slurm: working in $work"
mkdir -p "$work/state" "$work/spool" "$work/log" "$work/job" "$work/munge"
host=$(hostname -s)

# --- munge: a key of our own, a daemon of our own --------------------------------------
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$work/munge/munge.key"
munge_sock="$work/munge/munge.socket"
munged --force --key-file="$work/munge/munge.key" --socket="$munge_sock" \
    --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" \
    --seed-file="$work/munge/munge.seed" \
    || die "munged did not start (see $work/log/munged.log)"

# --- slurm.conf --------------------------------------------------------------------------
conf="$work/slurm.conf"
cat >"$conf" <<EOF
ClusterName=rmcast-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldPort=46817
SlurmdPort=46818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmdParameters=config_overrides
NodeName=$host CPUs=16 RealMemory=65536 State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$conf"

cleanup() {
    for p in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munge/munged.pid"; do
        [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
    done
}
trap cleanup EXIT

slurmctld -f "$conf" || die "slurmctld did not start (see $work/log/slurmctld.log)"
slurmd -f "$conf" || die "slurmd did not start (see $work/log/slurmd.log)"
for _ in $(seq 60); do
    sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && break
    sleep 1
done
sinfo -h -o '%T' | grep -qE '^(idle|mixed|allocated)' \
    || die "the node never came up: $(sinfo -h -o '%T %E' 2>&1)"
echo "slurm: $(sinfo -h -o '%P %D node(s) %T, %c CPUs') ($(sinfo --version))"

# --- the recipe, as the document writes it -----------------------------------------------
block() { # the N-th ```bash block after "## Slurm job array"
    awk -v n="$1" '
        /^## Slurm job array/ { on = 1; next }
        on && /^## / { exit }
        on && /^```bash$/ { k++; if (k == n) { inside = 1; next } }
        inside && /^```$/ { exit }
        inside { print }' "$doc"
}
block 1 >"$work/job/sweep.sbatch"
block 2 >"$work/job/submit.sh"
[ -s "$work/job/sweep.sbatch" ] && [ -s "$work/job/submit.sh" ] \
    || die "could not find the recipe's two bash blocks in $doc"
shards=$(sed -n 's|.*--shard auto/\([0-9][0-9]*\).*|\1|p' "$work/job/sweep.sbatch")
[ -n "$shards" ] || die "the recipe's sbatch file has no --shard auto/N"
cp "$scenario" "$work/job/sweep.toml"
cp "$rmcast" "$work/job/rmcast"

cd "$work/job"
echo "slurm: submitting the recipe ($shards array tasks, then the merge)"
bash -euo pipefail submit.sh

# Wait until the queue is empty (the array and the merge job have run).
start=$(date +%s)
while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
    [ $(($(date +%s) - start)) -lt 1800 ] || { echo "slurm: jobs still queued after 30 min" >&2; squeue; exit 1; }
    sleep 2
done
elapsed=$(($(date +%s) - start))

failed=0
for s in $(seq 0 $((shards - 1))); do
    if [ ! -f "shards/$s/shard.json" ]; then
        echo "slurm: shard $s did not finish (logs in $work/job/logs)" >&2
        failed=1
    fi
done
[ -f results/runs.csv ] || { echo "slurm: the merge job wrote no results/runs.csv (see $work/job/slurm-*.out)" >&2; failed=1; }
[ "$failed" = 0 ] || exit 1

echo "slurm: every job done in ${elapsed}s; running the same sweep without a scheduler"
./rmcast sim sweep.toml --out whole --quiet
same=1
for f in runs.csv runs.jsonl; do
    if cmp -s "whole/$f" "results/$f"; then
        echo "slurm: $f identical ($(wc -l <"results/$f") lines)"
    else
        echo "slurm: $f DIFFERS between the Slurm run and the unsharded run" >&2
        same=0
    fi
done
[ "$same" = 1 ] || exit 1
echo "slurm: ok: $shards-shard job array + merge under slurm-wlm = unsharded run, byte for byte"
