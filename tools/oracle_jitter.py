#!/usr/bin/env python3
"""How much of gcsim's score against the oracle cases is decided by millisecond ties.

Real Slurm does not reproduce itself: a job end a few ms before or after a
scheduler tick changes one decision and the runs part. gcsim replays each case
with run1's measured timers (CASE/gcsim.args), so the same ties decide its score.
This replays every case again with the timers nudged by amounts below what the
logs can tell apart (the exit latency by a few ms, the backfill cycle's per-job
cost by a fifth) and counts, per variant, the issue 4 points that hold (per case:
two prefixes, four deviations, four aggregates; the capped topo-tree case has no
makespan). It also prints how far gcsim follows run1 job for job. A point that
holds in every variant is decided by gcsim's rules; one that comes and goes is a tie.

  tools/oracle_jitter.py [--gcsim build/gcsim] [--latency-ms -6,-4,-2,0,2,4,6]
                         [--cycle-scale 0.8,1,1.2] [CASE ...]
Standard library only; uses oracle_compare.py's loaders.
"""
import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_compare as oc  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = ["gpu-sockets", "two-types", "fairshare", "binding", "topo-tree"]
NAMES = ["prefix1", "prefix2", "med1", "p90_1", "med2", "p90_2", "mean_wait", "p90_wait", "makespan", "backfill"]


def timer_args(case):
    with open(os.path.join(ROOT, "tests/oracle", case, "gcsim.args")) as f:
        return f.readline().split()


def value(args, key):
    for a in args:
        if a.startswith(key + "="):
            return float(a.split("=", 1)[1])
    return 0.0


def judge(case, sacct):
    """The issue 4 points over the jobs both real runs started, as tests/unit/test_oracle_cases.cpp."""
    d = os.path.join(ROOT, "tests/oracle", case)
    reals = [oc.as_rel(oc.load_real(os.path.join(d, f"run{i}/real.csv")), 0) for i in (1, 2)]
    raw = oc.load_sim(sacct)
    first_real = min(min(v[0] for v in r.values()) for r in reals)
    sim = oc.as_rel(raw, min(v["submit"] for v in raw.values()) - first_real)
    both = set(reals[0]) & set(reals[1]) & set(sim)
    a, b, s = ({n: r[n] for n in both} for r in (reals[0], reals[1], sim))
    order = sorted(a, key=lambda n: (a[n][0], n))
    stable = oc.prefix(order, a, b)
    real_dev, dev1, dev2 = oc.devs(order, a, b), oc.devs(order, s, a), oc.devs(order, s, b)
    ag = [oc.aggregates(x) for x in (s, a, b)]

    def within(key):
        v, x, y = ag[0][key], ag[1][key], ag[2][key]
        tol = 0.05 * (x + y) / 2
        return min(x, y, (x + y) / 2 - tol) - 1e-9 <= v <= max(x, y, (x + y) / 2 + tol) + 1e-9

    capped = case == "topo-tree"
    held = [oc.prefix(order, s, a) >= stable, oc.prefix(order, s, b) >= stable,
            dev1[0] <= real_dev[0], dev1[1] <= real_dev[1], dev2[0] <= real_dev[0], dev2[1] <= real_dev[1],
            within("mean_wait"), within("p90_wait"), capped or within("makespan"), within("backfill_share")]
    return held, oc.prefix(order, s, a), dev1[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="*", default=CASES)
    ap.add_argument("--gcsim", default=os.path.join(ROOT, "build/gcsim"))
    ap.add_argument("--latency-ms", default="-6,-4,-2,0,2,4,6")
    ap.add_argument("--cycle-scale", default="0.8,1,1.2")
    o = ap.parse_args()
    lat = [float(x) / 1000 for x in o.latency_ms.split(",")]
    scale = [float(x) for x in o.cycle_scale.split(",")]
    variants = list(itertools.product(lat, scale))
    totals = [0] * len(variants)
    print(f"{len(variants)} variants per case (exit latency {o.latency_ms} ms, backfill cycle cost x {o.cycle_scale})")
    print(f"{'case':12} {'points':>22} {'always missed':>24} {'sometimes':>30} {'prefix vs run1':>16} {'p90 vs run1':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for case in o.cases:
            d = os.path.join(ROOT, "tests/oracle", case)
            base = timer_args(case)
            acc = ["--accounts", os.path.join(d, "accounts.cfg")] if os.path.exists(os.path.join(d, "accounts.cfg")) else []
            counts, prefixes, p90s, missed = [], [], [], {n: 0 for n in NAMES}
            for i, (dl, f) in enumerate(variants):
                extra = ["--set", f"job_exit_latency={max(0.0, value(base, 'job_exit_latency') + dl):.4f}",
                         "--set", f"bf_cycle_per_job={value(base, 'bf_cycle_per_job') * f:.7f}"]
                out = os.path.join(tmp, case)
                subprocess.run([o.gcsim, "run", "--no-progress", "--policy", "slurm",
                                "--cluster", os.path.join(d, "slurm.conf"), "--trace", os.path.join(d, "trace.csv"),
                                *acc, *base, *extra, "--out", out], check=True, capture_output=True)
                held, pre, p90 = judge(case, os.path.join(out, "jobs.sacct"))
                counts.append(sum(held))
                totals[i] += sum(held)
                prefixes.append(pre)
                p90s.append(p90)
                for n, h in zip(NAMES, held):
                    missed[n] += not h
            always = ",".join(n for n in NAMES if missed[n] == len(variants)) or "-"
            some = ",".join(f"{n}({missed[n]})" for n in NAMES if 0 < missed[n] < len(variants)) or "-"
            pts = f"{statistics.mean(counts):.2f} ({min(counts)}-{max(counts)})"
            print(f"{case:12} {pts:>22} {always:>24} {some:>30} {statistics.median(prefixes):>16} "
                  f"{statistics.median(p90s):>12}")
    n_all = len(o.cases) * 10
    print(f"all {n_all} points in {sum(t == n_all for t in totals)} of {len(variants)} variants; "
          f"mean {statistics.mean(totals):.2f}, nominal (0 ms, x1) {totals[variants.index((0.0, 1.0))] if (0.0, 1.0) in variants else '-'}")


if __name__ == "__main__":
    main()
