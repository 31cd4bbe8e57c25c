#!/usr/bin/env python3
"""Compare a gcsim run with runs recorded on a real Slurm (tests/oracle/CASE/runN/real.csv).

Judges gcsim the way a rerun of real Slurm is judged (issue 4):
  1. stable prefix: up to the first job where the real runs diverge, does gcsim
     match job for job (start within 2 s, same CPU ids, same GPU indices)?
  2. as close as a rerun: median and p90 of |gcsim start - real start| against
     the same figures between the real runs;
  3. aggregates: mean wait, p90 wait, makespan, share started by backfill.
Standard library only:
  tools/oracle_compare.py RUN_DIR/jobs.sacct tests/oracle/CASE/run1/real.csv tests/oracle/CASE/run2/real.csv
"""
import csv
import datetime
import statistics
import sys

TOL = 2


def load_real(path):
    """Jobs the run started (a capped run leaves CANCELLED_BY_CAP rows without a start)."""
    return {r["name"]: r for r in csv.DictReader(open(path)) if r["start"]}


def load_sim(path):
    rows = [l.rstrip("\n").split("|") for l in open(path)]
    head = rows[0]
    out = {}
    t0 = None
    for r in rows[1:]:
        d = dict(zip(head, r))
        ts = lambda k: int(datetime.datetime.fromisoformat(d[k]).replace(tzinfo=datetime.timezone.utc).timestamp())
        out[d["JobName"]] = {"submit": ts("Submit"), "start": ts("Start"), "end": ts("End"),
                             "cpu_ids": d["CPU_IDs"], "gpu_idx": d["GRES_IDX"],
                             "reason_flags": d.get("Flags", "")}
        t0 = ts("Submit") if t0 is None else min(t0, ts("Submit"))
    return out


def as_rel(run, base):
    """Normalise to {name: (submit, start, end, cpu_ids, gpu_idx, backfill)} relative to base."""
    return {n: (int(r["submit"]) - base, int(r["start"]) - base, int(r["end"]) - base, r["cpu_ids"], r["gpu_idx"],
                "Backfill" in r["reason_flags"]) for n, r in run.items()}


def same(a, b):
    return abs(a[1] - b[1]) <= TOL and a[3] == b[3] and a[4] == b[4]


def prefix(order, a, b):
    k = 0
    for n in order:
        if n not in a or n not in b or not same(a[n], b[n]):
            break
        k += 1
    return k


def devs(order, a, b):
    d = sorted(abs(a[n][1] - b[n][1]) for n in order if n in a and n in b)
    return statistics.median(d), d[int(0.9 * (len(d) - 1))]


def aggregates(run):
    waits = sorted(v[1] - v[0] for v in run.values())
    return {"mean_wait": statistics.mean(waits), "p90_wait": waits[int(0.9 * (len(waits) - 1))],
            "makespan": max(v[2] for v in run.values()) - min(v[0] for v in run.values()),
            "backfill_share": sum(v[5] for v in run.values()) / len(run)}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sim_raw = load_sim(sys.argv[1])
    reals = [load_real(p) for p in sys.argv[2:]]
    real_rel = [as_rel(r, 0) for r in reals]
    base = min(v["submit"] for v in sim_raw.values())
    # gcsim times are wall-clock from the trace start; the oracle's are offsets from t0.
    first_real = min(min(v[0] for v in r.values()) for r in real_rel)
    sim = as_rel(sim_raw, base - first_real)
    order = sorted(real_rel[0], key=lambda n: (real_rel[0][n][0], n))
    print(f"{'':24}{'prefix':>8}{'|dstart| med':>14}{'p90':>6}")
    if len(real_rel) >= 2:
        stable = prefix(order, real_rel[0], real_rel[1])
        m, p = devs(order, real_rel[0], real_rel[1])
        print(f"{'real run1 vs run2':24}{stable:>8}{m:>14}{p:>6}")
    for i, r in enumerate(real_rel):
        m, p = devs(order, sim, r)
        print(f"{'gcsim vs run' + str(i + 1):24}{prefix(order, sim, r):>8}{m:>14}{p:>6}")
    print()
    print(f"{'':24}{'mean wait':>10}{'p90 wait':>10}{'makespan':>10}{'backfill':>10}")
    for name, run in [("gcsim", sim)] + [(f"real run{i + 1}", r) for i, r in enumerate(real_rel)]:
        a = aggregates(run)
        print(f"{name:24}{a['mean_wait']:>10.1f}{a['p90_wait']:>10}{a['makespan']:>10}{a['backfill_share']:>10.2f}")


if __name__ == "__main__":
    main()
