#!/usr/bin/env python3
"""bench/ns3/compare.py: run the binary-tree workload in rmcast and in ns-3, once per seed,
check the counts, and write the JSON result (see bench/ns3/README.md). Called by compare.sh
with the paths of the two programs already built:

    compare.py RMCAST NS3_PROGRAM SCENARIO_TEMPLATE OUT JSON

Environment: SEEDS, FIRST_SEED, HEIGHT, PACKETS, SIZE, LOSS, CHECK_PACKETS, SIGMAS (see compare.sh).
"""
import csv
import json
import math
import os
import platform
import re
import subprocess
import sys
import time


def env_int(k, d):
    return int(os.environ.get(k, d))


def env_float(k, d):
    return float(os.environ.get(k, d))


RMCAST, NS3, TEMPLATE, OUT, JSON_OUT = sys.argv[1:6]
SEEDS = env_int("SEEDS", 3)
FIRST_SEED = env_int("FIRST_SEED", 1)
HEIGHT = env_int("HEIGHT", 10)
PACKETS = env_int("PACKETS", 10000)
SIZE = env_int("SIZE", 1024)
LOSS = env_float("LOSS", 0.01)
CHECK_PACKETS = env_int("CHECK_PACKETS", 100)
SIGMAS = env_float("SIGMAS", 3.0)


def log(*a):
    print("compare.py:", *a, file=sys.stderr, flush=True)


def timed(cmd, env=None, stdout=None):
    """Run cmd as a child process; (exit status, wall s, user+sys CPU s of the child)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=stdout)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, wall, ru.ru_utime + ru.ru_stime


# --- the closed form -------------------------------------------------------------------
def tree_moments(h, p):
    """Per packet sent from the root of a complete binary tree of height h with independent
    loss p on every link: mean and variance of (receivers reached, link transmissions).
    A link is transmitted on (and counted as a hop, lost or not) iff its upper end holds the
    packet. Recursion over subtree heights (X_0 = 1, H_0 = 0):
        X_k = B1 X'_{k-1} + B2 X''_{k-1},   H_k = 2 + B1 H'_{k-1} + B2 H''_{k-1},
    B ~ Bernoulli(1-p), all independent. The receivers' deliveries share paths, so they are
    correlated: the variance is not a binomial one."""
    q = 1.0 - p
    m, s = 1.0, 1.0  # E X, E X^2
    a, b = 0.0, 0.0  # E H, E H^2
    for _ in range(h):
        m, s = 2 * q * m, 2 * q * s + 2 * (q * m) ** 2
        ez, ez2 = q * a, q * b
        a, b = 2 + 2 * ez, 4 + 8 * ez + 2 * ez2 + 2 * ez * ez
    return {"delivered": (m, s - m * m), "link_hops": (a, b - a * a)}


MOM = tree_moments(HEIGHT, LOSS)
RECEIVERS = 2**HEIGHT
LINKS = 2 ** (HEIGHT + 1) - 2


# --- the two tools -----------------------------------------------------------------------
def scenario(seed, packets, loss):
    with open(TEMPLATE) as f:
        t = f.read()
    subs = [
        (r"(?m)^seed = .*$", f"seed = {seed}"),
        (r"(?m)^height = .*$", f"height = {HEIGHT}"),
        (r"(?m)^messages = .*$", f"messages = {packets}"),
        (r"(?m)^size = .*$", f"size = {SIZE}"),
        (r"(?m)^p = .*$", f"p = {loss!r}"),
    ]
    for pat, rep in subs:
        t, n = re.subn(pat, rep, t)
        if n != 1:
            sys.exit(f"compare.py: {TEMPLATE}: expected one line matching {pat}")
    return t


def run_rmcast(tag, seed, packets, loss):
    toml = os.path.join(OUT, f"rm-{tag}.toml")
    with open(toml, "w") as f:
        f.write(scenario(seed, packets, loss))
    out = os.path.join(OUT, f"rm-{tag}")
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    rc, wall, cpu = timed([RMCAST, "sim", toml, "--out", out, "--quiet"], env=env)
    if rc != 0:
        sys.exit(f"compare.py: rmcast sim {toml} failed ({rc})")
    with open(os.path.join(out, "runs.csv")) as f:
        row = next(csv.DictReader(f))
    return {
        "seed": seed,
        "receivers": int(row["receivers"]),
        "delivered": int(row["delivered_total"]),
        "link_hops": int(row["link_hops"]),
        "lost": int(row["lost_total"]),
        "events": int(row["events"]),
        "end_time_s": float(row["end_time_s"]),
        "process_wall_s": round(wall, 4),
        "process_cpu_s": round(cpu, 4),
    }


def run_ns3(tag, seed, packets, loss):
    path = os.path.join(OUT, f"ns3-{tag}.json")
    with open(path, "w") as f:
        rc, wall, cpu = timed(
            [NS3, str(seed), str(HEIGHT), str(packets), str(SIZE), repr(loss)], stdout=f
        )
    if rc != 0:
        sys.exit(f"compare.py: {NS3} failed ({rc})")
    with open(path) as f:
        r = json.load(f)
    r["process_wall_s"] = round(wall, 4)
    r["process_cpu_s"] = round(cpu, 4)
    return r


# --- checks --------------------------------------------------------------------------------
def z_closed_form(total, key, packets):
    m, v = MOM[key]
    if v == 0:
        return 0.0 if total == packets * m else math.inf
    return (total - packets * m) / math.sqrt(packets * v)


def z_between(a, b, key, packets):
    """(a - b) over the SD of the difference of two independent totals of `packets` packets."""
    v = MOM[key][1]
    if v == 0:
        return 0.0 if a == b else math.inf
    return (a - b) / math.sqrt(2 * packets * v)


def rate(n, s):
    return round(n / s, 1) if s and s > 0 else None


def main():
    os.makedirs(OUT, exist_ok=True)
    load_start = os.getloadavg()
    checks = []

    def check(name, ok, **detail):
        checks.append(dict(name=name, ok=bool(ok), **detail))
        log(("ok   " if ok else "FAIL ") + name, json.dumps(detail))

    # Lossless: both tools must deliver and transmit exactly the same, known counts.
    lossless = None
    if CHECK_PACKETS > 0:
        log(f"lossless check: {CHECK_PACKETS} packets, both tools")
        rm0 = run_rmcast("lossless", 1, CHECK_PACKETS, 0.0)
        ns0 = run_ns3("lossless", 1, CHECK_PACKETS, 0.0)
        want = {"delivered": RECEIVERS * CHECK_PACKETS, "link_hops": LINKS * CHECK_PACKETS}
        for k, w in want.items():
            check(f"lossless {k}: rmcast = ns-3 = {w}", rm0[k] == ns0[k] == w,
                  rmcast=rm0[k], ns3=ns0[k], expected=w)
        lossless = {"packets": CHECK_PACKETS, "expected": want, "rmcast": rm0, "ns3": ns0}

    runs = []
    for seed in range(FIRST_SEED, FIRST_SEED + SEEDS):
        log(f"seed {seed}: rmcast sim")
        rm = run_rmcast(f"s{seed}", seed, PACKETS, LOSS)
        log(f"seed {seed}: rmcast {rm['process_wall_s']} s wall, {rm['process_cpu_s']} CPU-s; ns-3")
        ns = run_ns3(f"s{seed}", seed, PACKETS, LOSS)
        log(f"seed {seed}: ns-3 {ns['process_wall_s']} s wall, {ns['process_cpu_s']} CPU-s")
        for r in (rm, ns):
            if r["receivers"] != RECEIVERS:
                sys.exit(f"compare.py: {r['receivers']} receivers, expected {RECEIVERS}")
        for k in ("delivered", "link_hops"):
            for name, r in (("rmcast", rm), ("ns-3", ns)):
                z = z_closed_form(r[k], k, PACKETS)
                check(f"seed {seed} {name} {k} vs closed form", abs(z) <= SIGMAS,
                      value=r[k], expected=round(PACKETS * MOM[k][0], 1), z=round(z, 3))
            z = z_between(rm[k], ns[k], k, PACKETS)
            check(f"seed {seed} {k}: rmcast vs ns-3", abs(z) <= SIGMAS,
                  rmcast=rm[k], ns3=ns[k], difference=rm[k] - ns[k], z=round(z, 3))
        runs.append({"seed": seed, "rmcast": rm, "ns3": ns})

    def total(tool, k):
        return sum(r[tool][k] for r in runs)

    n_all = PACKETS * SEEDS
    for k in ("delivered", "link_hops"):
        z = z_between(total("rmcast", k), total("ns3", k), k, n_all)
        check(f"all seeds {k}: rmcast vs ns-3", abs(z) <= SIGMAS,
              rmcast=total("rmcast", k), ns3=total("ns3", k), z=round(z, 3))

    hops_rm, hops_ns = total("rmcast", "link_hops"), total("ns3", "link_hops")
    cpu_rm, cpu_ns = total("rmcast", "process_cpu_s"), total("ns3", "process_cpu_s")
    wall_rm, wall_ns = total("rmcast", "process_wall_s"), total("ns3", "process_wall_s")
    run_cpu_ns, run_wall_ns = total("ns3", "run_cpu_s"), total("ns3", "run_wall_s")
    def speed_of(tool, hops, cpu, wall):
        return {
            "wall_s_per_run": round(wall / SEEDS, 3),
            "cpu_s_per_run": round(cpu / SEEDS, 3),
            "hops_per_wall_s": rate(hops, wall),
            "hops_per_cpu_s": rate(hops, cpu),
            "events_per_cpu_s": rate(total(tool, "events"), cpu),
        }

    speed = {
        "rmcast": speed_of("rmcast", hops_rm, cpu_rm, wall_rm),
        "ns3": {
            **speed_of("ns3", hops_ns, cpu_ns, wall_ns),
            "run_only_cpu_s_per_run": round(run_cpu_ns / SEEDS, 3),
            "run_only_hops_per_cpu_s": rate(hops_ns, run_cpu_ns),
            "run_only_hops_per_wall_s": rate(hops_ns, run_wall_ns),
        },
    }
    ratio_cpu = (hops_rm / cpu_rm) / (hops_ns / cpu_ns)
    ratio_wall = (hops_rm / wall_rm) / (hops_ns / wall_ns)
    ratio_run = (hops_rm / cpu_rm) / (hops_ns / run_cpu_ns)

    def cmd_out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.strip() or None
        except OSError:
            return None

    cpu_model = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    res = {
        "workload": {
            "topology": f"complete binary tree of height {HEIGHT}: the source at the root, "
                        f"routers at depths 1..{HEIGHT - 1}, {RECEIVERS} receiver hosts at depth {HEIGHT}, "
                        f"{LINKS} point-to-point links of 100 Mb/s and 1 ms",
            "traffic": f"{PACKETS} packets of {SIZE} payload bytes, multicast once each, all offered at t = 0",
            "loss": f"independent Bernoulli({LOSS}) per packet per link, after transmission",
            "routing": "static multicast routes (ns-3: Ipv4StaticRoutingHelper::AddMulticastRoute per router; "
                       "rmcast: the simulator's shortest-path tree for the static group)",
            "rmcast_scenario": "bench/ns3/tree.toml (seed, height, messages, size, p replaced per run)",
            "ns3_program": "bench/ns3/tree.cc",
        },
        "machine": {"cpu": cpu_model, "cores": os.cpu_count(), "kernel": platform.release(),
                    "load_at_start": load_start, "load_at_end": os.getloadavg()},
        "ns3_version": cmd_out(["dpkg-query", "-W", "-f=${Version}", "libns3-dev"]),
        "ns3_build": os.environ.get("NS3_BUILD_NOTE"),
        "rmcast_version": cmd_out([RMCAST, "--version"]),
        "rmcast_commit": cmd_out(["git", "-C", here, "rev-parse", "--short", "HEAD"]),
        "seeds": list(range(FIRST_SEED, FIRST_SEED + SEEDS)),
        "threads": 1,
        "timing": "process_* are measured around each process (wait4: wall, user + sys CPU), start-up, "
                  "building the network and writing output included, for both tools; ns-3's run_* are "
                  "Simulator::Run() alone, measured inside the program",
        "closed_form_per_packet": {k: {"mean": MOM[k][0], "variance": MOM[k][1]} for k in MOM},
        "tolerance_sigmas": SIGMAS,
        "speed": speed,
        "ratio_rmcast_over_ns3": {
            "hops_per_cpu_s": round(ratio_cpu, 2),
            "hops_per_wall_s": round(ratio_wall, 2),
            "hops_per_cpu_s_vs_ns3_run_only": round(ratio_run, 2),
            "target_per_core": 20,
            "target_met": ratio_cpu >= 20,
        },
        "counts_agree": all(c["ok"] for c in checks),
        "checks": checks,
        "lossless": lossless,
        "runs": runs,
    }
    with open(JSON_OUT, "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")

    print(f"ns-3 side by side: {RECEIVERS} receivers, {PACKETS} x {SIZE} B, loss {LOSS}/link, {SEEDS} seeds")
    print(f"{'':8} {'wall s/run':>11} {'CPU s/run':>10} {'hops/s':>12} {'hops/CPU-s':>12} "
          f"{'delivered (all seeds)':>22} {'link hops (all seeds)':>22}")
    for name, key in (("rmcast", "rmcast"), ("ns-3", "ns3")):
        s = speed[key]
        print(f"{name:8} {s['wall_s_per_run']:>11.3f} {s['cpu_s_per_run']:>10.3f} "
              f"{s['hops_per_wall_s']:>12.0f} {s['hops_per_cpu_s']:>12.0f} "
              f"{total(key, 'delivered'):>22} {total(key, 'link_hops'):>22}")
    print(f"expected (closed form)                                        "
          f"{n_all * MOM['delivered'][0]:>22.0f} {n_all * MOM['link_hops'][0]:>22.0f}")
    print(f"ratio rmcast/ns-3: {ratio_cpu:.1f}x per CPU-second (per core), {ratio_wall:.1f}x wall; "
          f"{ratio_run:.1f}x against ns-3's Simulator::Run() alone")
    bad = [c["name"] for c in checks if not c["ok"]]
    print(f"counts: {len(checks) - len(bad)} of {len(checks)} checks within {SIGMAS:g} SD"
          + ("" if not bad else "; FAILED: " + ", ".join(bad)))
    print(f"JSON: {JSON_OUT}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
