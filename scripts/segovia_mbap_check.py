#!/usr/bin/env python3
"""A second implementation of seed 000's MBAP under failures (Segovia 1996, Tables 4.8-4.13).

It re-implements, from the thesis's text and sharing no code with rmcast, what those tables
ran: the MBAP sender and receivers (§2.6, §2.6.1), the bus's physical layer (§3.3: requests
ordered by time, every request pending during a transmission moved to its end, two or more
requests at one instant collide for 32 bit times, binary exponential backoff in slots of 512
bit times, a frame discarded after 16 attempts), the error model (§3.4: each interface drops a
frame it transmits or receives with the failure rate) and the statistics (§3.5: latency from the
message's first transmission by the sender's LLC to the ACK that completes it; retransmissions
per message). Parameters are §4.4's: 1518-byte data and 64-byte ACK frames, the packet timeout
by the formula n*d + r*a + i + t + increment with increments 45,000 / 90,000 / 135,000 bit
times for 20 / 40 / 60 receivers, and 500 messages per run (every Mean Retr of Tables 4.6-4.13
is a multiple of 1/500).

What it still shares with rmcast, because the thesis does not say (docs/segovia-mbap.md):
the ACK-delay timeout t = 95,000 and the retransmission limit 20 (both from the sample command
file of §3.6, not stated for these runs), a limit compared as count <= limit (so 21
retransmissions before a message fails), the backoff bound inclusive (0..2^min(i,10), the
text's words; --backoff exclusive for IEEE 802.3's 0..2^min(i,10)-1), backoff slots counted
from the collision's end, a frame dropped on transmit taking no bus time, no host processing
time, a uniform random ACK delay, events at one instant handled before the bus so that their
requests collide, and a message the sender gives up on leaving its window.

Two receiver readings (`--reading`):
  literal  (the default) §2.6 word for word: in-sequence data resets the ACK-delay timer and
           increments the counter; when the counter reaches the window the receiver ACKs and
           resets the counter; out-of-sequence data is discarded without an ACK and touches
           nothing; when the timer fires the receiver ACKs its status and sets the timer once
           more (so it keeps firing every t until data arrives). Nothing else arms, stops or
           resets the timer.
  rmcast   rmcast's reading (crates/proto/src/bap/mod.rs, as the segovia study runs it), none
           of which is in §2.6: the timer is also armed by out-of-sequence data when idle, the
           timer's ACK resets the counter, re-arming stops after 3 firings without data, and
           the timer stops when the window's ACK is sent. With it the script is a second
           implementation of bap's rules, which is what .ci/run checks (--agree).

The thesis's numbers are read from scenarios/repro/segovia/claims.toml; with --report, rmcast's
are read from the report.md of an `rmcast repro` run (its err.bap_* lines), so the three stand
side by side. Example (several minutes on 2 cores):

    python3 scripts/segovia_mbap_check.py --report rmcast-report/report.md
    python3 scripts/segovia_mbap_check.py --reading rmcast --report rmcast-report/report.md
    python3 scripts/segovia_mbap_check.py --receivers 20 --windows 10 --rates 0,1,5 --t 50000
"""
import argparse
import heapq
import math
import os
import random
import re
import statistics
import sys
import tomllib
from collections import deque
from multiprocessing import Pool

DATA_BITS = 1518 * 8
ACK_BITS = 64 * 8
SLOT = 512
JAM = 32
MAX_ATTEMPTS = 16
INCREMENT = {20: 45_000, 40: 90_000, 60: 135_000}
TABLE = {(20, 0): 8, (40, 0): 9, (60, 0): 10, (20, 22_000): 11, (40, 22_000): 12, (60, 22_000): 13}


class Run:
    """One simulation pass: node 0 sends, nodes 1..r receive."""

    def __init__(self, r, n, fail, seed, increment, t, rand, limit, messages, reading,
                 inclusive=True):
        self.rng = random.Random(seed)
        self.inclusive = inclusive
        self.r, self.n, self.fail, self.t, self.rand, self.limit = r, n, fail, t, rand, limit
        self.literal = reading == "literal"
        self.timeout = n * DATA_BITS + r * ACK_BITS + rand + t + increment
        self.messages = messages
        self.now = 0
        self.events = []
        self.order = 0
        # MAC: per node a FIFO of frames; the head frame's physical-layer request and attempts.
        self.queue = [deque() for _ in range(r + 1)]
        self.request = {}
        self.attempts = [0] * (r + 1)
        self.busy_until = 0
        # Sender LLC.
        self.modulus = 2 * n
        self.base = 0
        self.window = deque()  # per message [first send time, retransmissions]
        self.queued = messages
        self.acks = [None] * r
        self.timer = 0
        self.records = []
        # Receivers.
        self.expected = [0] * r
        self.last = [None] * r
        self.counter = [0] * r
        self.ack_timer = [0] * r
        self.armed = [False] * r
        self.idle = [0] * r
        self.ack_pending = [False] * r

    def at(self, time, fn, *args):
        self.order += 1
        heapq.heappush(self.events, (time, self.order, fn, args))

    # Medium access and physical layer.
    def mac_send(self, node, frame):
        self.queue[node].append(frame)
        if len(self.queue[node]) == 1:
            self.mac_next(node)

    def mac_next(self, node):
        while self.queue[node]:
            if self.rng.random() < self.fail:  # dropped by the transmitting interface
                self.queue[node].popleft()
                continue
            self.attempts[node] = 0
            self.request[node] = self.now
            return
        self.request.pop(node, None)

    def phy_time(self):
        return min(max(v, self.busy_until) for v in self.request.values())

    def phy(self, t):
        self.now = t
        nodes = [k for k, v in self.request.items() if max(v, self.busy_until) == t]
        if len(nodes) == 1:
            node = nodes[0]
            frame = self.queue[node][0]
            end = t + (DATA_BITS if frame[0] == "data" else ACK_BITS)
            self.busy_until = end
            del self.request[node]
            self.at(end, self.transmitted, node, frame)
            return
        self.busy_until = t + JAM
        for node in nodes:
            self.attempts[node] += 1
            if self.attempts[node] >= MAX_ATTEMPTS:
                self.queue[node].popleft()
                del self.request[node]
                self.at(t + JAM, self.mac_next, node)
            else:
                top = 2 ** min(self.attempts[node], 10)
                k = self.rng.randint(0, top if self.inclusive else top - 1)
                self.request[node] = t + JAM + k * SLOT

    def transmitted(self, node, frame):
        self.queue[node].popleft()
        self.mac_next(node)
        if frame[0] == "data":
            for i in range(self.r):
                if self.rng.random() >= self.fail:  # the receiving interface's draw
                    self.on_data(i, frame[1])
        elif self.rng.random() >= self.fail:
            self.on_ack(frame[1], frame[2])

    # Sender.
    def send(self, k):
        self.mac_send(0, ("data", (self.base + k) % self.modulus))
        self.timer += 1  # "as each message is sent, the packet timer is set"
        self.at(self.now + self.timeout, self.on_timeout, self.timer)

    def fill(self):
        while len(self.window) < self.n and self.queued:
            self.queued -= 1
            self.window.append([self.now, 0])
            self.send(len(self.window) - 1)

    def rank(self, seq):
        return (seq - self.base) % self.modulus

    def finish(self, k, failed):
        for _ in range(k):
            sent, retx = self.window.popleft()
            self.records.append((self.now - sent, retx, failed))
            self.base += 1
        size = len(self.window)
        for i, a in enumerate(self.acks):
            if a is not None and self.rank(a) >= size:
                self.acks[i] = None

    def on_ack(self, i, seq):
        size, rank = len(self.window), self.rank(seq)
        old = self.acks[i]
        if rank >= size or (old is not None and self.rank(old) >= rank):
            return  # outside the window, or processed before
        self.acks[i] = seq
        if any(a is None for a in self.acks):
            return
        ranks = [self.rank(a) for a in self.acks]
        if max(ranks) < size:
            self.finish(min(ranks) + 1, False)
            self.fill()

    def on_timeout(self, timer):
        if timer != self.timer or not self.window:
            return
        spent = 0
        while spent < len(self.window) and self.window[spent][1] > self.limit:
            spent += 1
        if spent:
            self.finish(spent, True)
        for k in range(len(self.window)):  # go-back-N: the whole active window
            self.window[k][1] += 1
            self.send(k)
        self.fill()

    # Receivers.
    def arm(self, i):
        self.ack_timer[i] += 1
        self.armed[i] = True
        self.at(self.now + self.t, self.on_ack_timer, i, self.ack_timer[i])

    def ack(self, i):
        if self.rand == 0:
            self.send_ack(i)
        elif not self.ack_pending[i]:
            self.ack_pending[i] = True
            self.at(self.now + self.rng.randint(0, self.rand), self.send_ack, i)

    def send_ack(self, i):
        self.ack_pending[i] = False
        if self.last[i] is not None:
            self.mac_send(i + 1, ("ack", i, self.last[i]))

    def on_data(self, i, seq):
        self.idle[i] = 0
        if seq == self.expected[i]:
            self.last[i] = seq
            self.expected[i] = (seq + 1) % self.modulus
            self.counter[i] += 1
            self.arm(i)
            if self.counter[i] >= self.n:
                self.ack(i)
                self.counter[i] = 0
                if not self.literal:
                    self.ack_timer[i] += 1
                    self.armed[i] = False
        elif not self.literal and not self.armed[i]:
            self.arm(i)  # otherwise discarded without an ACK

    def on_ack_timer(self, i, timer):
        if timer != self.ack_timer[i]:
            return
        self.armed[i] = False
        self.ack(i)
        if not self.literal:
            self.counter[i] = 0
            self.idle[i] += 1
            if self.idle[i] >= 3:
                return
        self.arm(i)

    def run(self):
        self.fill()
        while len(self.records) < self.messages:
            t_event = self.events[0][0] if self.events else math.inf
            t_phy = self.phy_time() if self.request else math.inf
            if t_event == math.inf and t_phy == math.inf:
                raise RuntimeError("the run stalled with messages outstanding")
            if t_event <= t_phy:  # events at an instant first, so their requests collide
                self.now, _, fn, args = heapq.heappop(self.events)
                fn(*args)
            else:
                self.phy(t_phy)
        return (
            statistics.fmean(x[0] for x in self.records),
            statistics.fmean(x[1] for x in self.records),
            statistics.fmean(1.0 if x[2] else 0.0 for x in self.records),
        )


def one(job):
    cell, seed, a = job
    r, n, rate = cell
    return cell, Run(r, n, rate / 100, f"{r}-{n}-{rate}-{a.rand}-{seed}",
                     INCREMENT.get(r, 45_000 * r // 20), a.t, a.rand, a.limit, a.messages,
                     a.reading, a.backoff == "inclusive").run()


def thesis_tables(path):
    with open(path, "rb") as f:
        paper = tomllib.load(f).get("paper", {})
    out = {}
    for key, v in paper.items():
        m = re.fullmatch(r"t4_\d+_bap_w(\d+)_r(\d+)_rand(\d+)_mean_(lat|retr)", key)
        if m:
            w, r, rand, what = int(m[1]), int(m[2]), int(m[3]), m[4]
            for x, y in zip(v["x"], v["y"]):
                out[(r, w, rand, int(x), what)] = y
    return out


def rmcast_report(path):
    out = {}
    line_re = re.compile(r"\* err\.bap_w(\d+)_r(\d+)_rand(\d+) by failure rate %: (.*)")
    item_re = re.compile(r"(mean latency |mean retransmissions |failed fraction )?(\d+): ([0-9.e+-]+)")
    names = {"mean latency ": "lat", "mean retransmissions ": "retr", "failed fraction ": "failed"}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = line_re.match(line.strip())
            if not m:
                continue
            w, r, rand, key = int(m[1]), int(m[2]), int(m[3]), None
            for item in m[4].rstrip(".").split("; "):
                mm = item_re.match(item)
                if mm:
                    key = names[mm[1]] if mm[1] else key
                    out[(r, w, rand, int(mm[2]), key)] = float(mm[3])
    return out


def ints(s):
    return [int(x) for x in s.split(",") if x]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--reading", choices=["literal", "rmcast"], default="literal",
                   help="the receivers' rules: §2.6 word for word, or rmcast's bap (see above)")
    p.add_argument("--backoff", choices=["inclusive", "exclusive"], default="inclusive",
                   help="backoff draw 0..2^k (the thesis's words) or 0..2^k-1 (IEEE 802.3)")
    p.add_argument("--receivers", type=ints, default=[20, 40, 60])
    p.add_argument("--windows", type=ints, default=[5, 10, 15])
    p.add_argument("--rates", type=ints, default=[0, 1, 2, 3, 4, 5], help="failure rates in %%")
    p.add_argument("--rand", type=int, default=0, help="BAPrand, bit times (0 or 22000)")
    p.add_argument("--t", type=int, default=95_000, help="ACK-delay timeout, bit times")
    p.add_argument("--limit", type=int, default=20, help="retransmission limit")
    p.add_argument("--messages", type=int, default=500)
    p.add_argument("--seeds", type=int, default=10, help="runs per cell")
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    p.add_argument("--claims", default=os.path.join(here, "..", "scenarios", "repro", "segovia",
                                                    "claims.toml"))
    p.add_argument("--report", help="an `rmcast repro` report.md, for rmcast's columns")
    p.add_argument("--agree", type=float, metavar="REL",
                   help="with --report: exit 1 unless every cell's mean latency and mean "
                        "retransmissions (where either is at least 0.05) are within REL of "
                        "rmcast's, relative to rmcast's")
    a = p.parse_args()
    if a.seeds < 1 or a.messages < 1 or a.rand < 0 or a.t < 0:
        p.error("--seeds and --messages must be positive, --rand and --t not negative")
    if a.agree is not None and not a.report:
        p.error("--agree needs --report")
    thesis = thesis_tables(a.claims)
    rmcast = rmcast_report(a.report) if a.report else {}
    cells = [(r, n, rate) for r in a.receivers for n in a.windows for rate in a.rates]
    missing = [c for c in cells if (c[0], c[1], a.rand, c[2], "lat") not in thesis]
    if missing:
        p.error(f"the thesis has no MBAP cell (receivers, window, failure %) {missing[0]} "
                f"with BAPrand = {a.rand} in {a.claims}")
    if rmcast:
        missing = [c for c in cells if (c[0], c[1], a.rand, c[2], "retr") not in rmcast]
        if missing:
            p.error(f"{a.report} has no err.bap_w{missing[0][1]}_r{missing[0][0]}_rand{a.rand} "
                    f"value at {missing[0][2]} %")
    jobs = [(c, s, a) for c in cells for s in range(a.seeds)]
    with Pool(max(1, a.jobs)) as pool:
        results = pool.map(one, jobs, chunksize=1)
    by_cell, disagree = {}, []
    for cell, res in results:
        by_cell.setdefault(cell, []).append(res)
    print(f"# MBAP, {a.reading} receiver, t = {a.t}, BAPrand = {a.rand}, limit {a.limit}, "
          f"{a.backoff} backoff, {a.messages} messages, {a.seeds} runs per cell "
          f"(mean ± sd over runs)")
    cols = "receivers,window,fail_pct,thesis_lat,check_lat,check_lat_sd,thesis_retr,check_retr," \
           "check_retr_sd,check_failed"
    print(cols + (",rmcast_lat,rmcast_retr" if rmcast else ""))
    for cell in cells:
        r, n, rate = cell
        runs = by_cell[cell]
        lat = [x[0] for x in runs]
        retr = [x[1] for x in runs]
        sd = (lambda v: statistics.stdev(v) if len(v) > 1 else 0.0)
        row = [r, n, rate, thesis.get((r, n, a.rand, rate, "lat"), ""), f"{statistics.fmean(lat):.0f}",
               f"{sd(lat):.0f}", thesis.get((r, n, a.rand, rate, "retr"), ""),
               f"{statistics.fmean(retr):.3f}", f"{sd(retr):.3f}",
               f"{statistics.fmean(x[2] for x in runs):.3f}"]
        if rmcast:
            row += [rmcast[(r, n, a.rand, rate, "lat")], rmcast[(r, n, a.rand, rate, "retr")]]
            for what, mine in (("lat", statistics.fmean(lat)), ("retr", statistics.fmean(retr))):
                theirs = rmcast[(r, n, a.rand, rate, what)]
                if max(mine, theirs) < 0.05:
                    continue
                off = abs(mine - theirs) / max(theirs, 1e-9)
                if a.agree is not None and off > a.agree:
                    disagree.append(f"{r} receivers, window {n}, {rate} %: {what} {mine:.4g} "
                                    f"here, {theirs:.4g} in rmcast ({off:.0%} apart)")
        print(",".join(str(x) for x in row), flush=True)
    if a.agree is not None:
        for d in disagree:
            print(f"disagree: {d}", file=sys.stderr)
        print(f"agree: {len(cells) - len({d.split(':')[0] for d in disagree})} of {len(cells)} "
              f"cells within {a.agree:.0%} of rmcast", file=sys.stderr)
        return 1 if disagree else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
