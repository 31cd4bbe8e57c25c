#!/usr/bin/env python3
"""Measure the controller's timer phases in one recorded real-Slurm run, as gcsim --set options.

slurmctld's periodic work is not in slurm.conf: the background thread ticks about once
a second (10 x 100 ms sleeps plus work, so a little over 1 s) and runs the main
scheduler on a tick; the backfill thread sleeps bf_interval after each cycle and then
re-checks every ~1 s. Where those ticks fall relative to the trace, and how fast they
drift, differs from run to run. This reads a run's slurmctld.log (plain or .gz) and
meta.json and prints the options that make gcsim's timers fall where that run's did:

  ctld_start       slurmctld start relative to t0 (meta.json slurmctld_start_rel_t0)
  bf_tick_phase    first backfill cycle - ctld_start - bf_interval * bf_tick_period
  bf_tick_period   length of the backfill thread's "second": it sleeps bf_interval, then
                   1 s re-checks, from the end of each cycle (sum of the sleeps over
                   their whole seconds)
  bf_cycle_base    a cycle's length, least squares on the jobs it tested (the next
  bf_cycle_per_job cycle comes that much later: 1-45 ms in the oracle runs)
  main_tick_phase  main-scheduler tick phase after ctld_start, from the 'sched: Allocate'
  main_tick_period times (every main-loop start happens on a tick), best circular fit
  job_exit_latency median of end - start - duration (real_extra.csv ms times, trace.csv)
                   over the jobs started alone in their pass
  job_exit_latency_per_start
                   what each further job started in the same pass adds to it (least
                   squares of latency - job_exit_latency on k - 1, k the jobs started
                   within 20 ms: 0.07 s alone grew to 0.11, 0.15, 0.21 s for 2, 3, 4)
  prio_tick_phase  when priority/multifactor's decay thread first ran after ctld_start
  main_tick_times  the main-loop passes that started jobs: the tick wanders +-30 ms about
                   the fitted line (the thread's work varies), and whole-second
                   batch_sched_delay turns a few ms into a whole tick
  bf_cycle_times   every backfill cycle, start+length: a cycle gcsim runs at the same
                   moment ends where the log's did (its length varies +-5 ms about the
                   fit above, and the next cycle starts from its end)
  wall_clock_zero  the controller's clock at t0 (t0_epoch modulo a day): slurmctld counts
                   its timers in time_t seconds and aligns backfill on that clock

  tools/oracle_timers.py tests/oracle/CASE/run1 [--bf-interval 5]
Standard library only.
"""
import argparse
import csv
import datetime
import gzip
import json
import math
import os
import re

STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)\] (.*)$")


def read_log(run):
    p = os.path.join(run, "slurmctld.log")
    f = gzip.open(p + ".gz", "rt") if os.path.exists(p + ".gz") else open(p)
    out = []
    for line in f:
        m = STAMP.match(line)
        if m:
            t = datetime.datetime.fromisoformat(m.group(1)).replace(tzinfo=datetime.timezone.utc).timestamp()
            out.append((t, m.group(2)))
    return out


def circular_fit(times, lo, hi, step):
    best = None
    p = lo
    while p <= hi + 1e-12:
        s = sum(math.sin(2 * math.pi * t / p) for t in times)
        c = sum(math.cos(2 * math.pi * t / p) for t in times)
        r = math.hypot(s, c) / len(times)
        if best is None or r > best[0]:
            best = (r, p, (math.atan2(s, c) / (2 * math.pi)) % 1.0 * p)
        p += step
    return best  # (concentration, period, phase)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("--bf-interval", type=float, default=5.0)
    a = ap.parse_args()
    meta = json.load(open(os.path.join(a.run, "meta.json")))
    t0 = meta["t0_epoch"]
    ctld = meta["slurmctld_start_rel_t0"]
    log = read_log(a.run)
    # backfill cycles: (start, end, jobs tested); the thread sleeps from a cycle's end
    cycles, begun = [], None
    for t, m in log:
        if "_attempt_backfill: beginning" in m:
            begun = t - t0
        elif begun is not None and ("completed testing" in m or "no jobs to backfill" in m):
            n = re.search(r"completed testing (\d+)", m)
            cycles.append((begun, t - t0, int(n.group(1)) if n else 0))
            begun = None
    bf = [c[0] for c in cycles]
    # each sleep (bf_interval, then 1 s re-checks) lasts a whole number of seconds times P
    gaps = [b[0] - a_[1] for a_, b in zip(cycles, cycles[1:])]
    bf_p = sum(gaps) / (sum(round(g) for g in gaps) or 1)
    bf_phase = bf[0] - ctld - a.bf_interval * bf_p
    # a cycle's length: least squares on the jobs it tested (base clamped at 0)
    n_ = len(cycles)
    sx = sum(c[2] for c in cycles)
    sy = sum(c[1] - c[0] for c in cycles)
    sxx = sum(c[2] ** 2 for c in cycles)
    sxy = sum(c[2] * (c[1] - c[0]) for c in cycles)
    det = n_ * sxx - sx * sx
    per_job = (n_ * sxy - sx * sy) / det if det else 0.0
    base = (sy - per_job * sx) / n_ if n_ else 0.0
    if base < 0:
        base, per_job = 0.0, (sxy / sxx if sxx else 0.0)
    main_starts = [t - t0 for t, m in log if m.startswith("sched: Allocate")]
    passes = []  # one time per pass (its starts come within ms)
    for t in sorted(main_starts):
        if not passes or t - passes[-1] > 0.5:
            passes.append(t)
    rel = [t - ctld for t in main_starts]
    conc, m_p, m_phase = circular_fit(rel, 1.0, 1.008, 0.0001)
    dur = {}
    trace = os.path.join(a.run, "..", "trace.csv")
    if os.path.exists(trace):
        dur = {r["name"]: float(r["duration"]) for r in csv.DictReader(open(trace))}
    runs = [(float(r["start_ms"]), float(r["end_ms"]) - float(r["start_ms"]) - dur[r["name"]])
            for r in csv.DictReader(open(os.path.join(a.run, "real_extra.csv")))
            if r["name"] in dur and r["start_ms"] and r["end_ms"] and r.get("exit_code", "0:0") == "0:0"]
    runs = [(s, l) for s, l in runs if 0 <= l <= 1]  # jobs that ran their duration
    # jobs started in one pass: starts within 20 ms of each other
    together = [sum(1 for s2, _ in runs if abs(s2 - s) < 0.02) for s, _ in runs]
    median = lambda v: sorted(v)[len(v) // 2] if v else 0.0
    exit_lat = median([l for (s, l), k in zip(runs, together) if k == 1] or [l for _, l in runs])
    # least squares of latency - exit_lat on k - 1 (larger passes weigh more)
    den = sum((k - 1) ** 2 for k in together)
    per_start = sum((k - 1) * (l - exit_lat) for (s, l), k in zip(runs, together)) / den if den else 0.0
    decay = [t - t0 for t, m in log if "_read_last_decay_ran" in m]
    prio = f" --set prio_tick_phase={decay[0] - ctld:.3f}" if decay else ""
    print(f"--set ctld_start={ctld:.3f} --set bf_tick_phase={bf_phase:.3f} --set bf_tick_period={bf_p:.5f} "
          f"--set bf_cycle_base={base:.5f} --set bf_cycle_per_job={per_job:.6f} "
          f"--set main_tick_phase={m_phase:.3f} --set main_tick_period={m_p:.4f} --set job_exit_latency={exit_lat:.3f}"
          f" --set job_exit_latency_per_start={per_start:.3f}{prio}"
          f" --set wall_clock_zero={t0 % 86400:.3f} --set main_tick_times=" + ":".join(f"{t:.3f}" for t in passes)
          + " --set bf_cycle_times=" + ":".join(f"{c[0]:.3f}+{c[1] - c[0]:.3f}" for c in cycles))
    print(f"# {len(bf)} backfill cycles, {len(main_starts)} main-loop starts (tick fit concentration {conc:.2f})")


if __name__ == "__main__":
    main()
