#!/usr/bin/env python3
"""Convert Microsoft Philly job records to gcsim's sbatch-trace CSV.

Input: the flattened Philly cluster_job_log sample (JSON list; one record per
job with submitted_time, runtime_min, status, vc, user and the machines/GPUs
of its final attempt). Output: `name,submit,duration,args,user,account`.

What the conversion assumes (Philly records no request, only the placement):
  * GPUs: the job's GPU count G is the sum over its machines; it asks for
    ceil(G/K) nodes with G/nodes GPUs each (one task per GPU), as a user of a
    K-GPU-per-node Slurm cluster would (K = --node-gpus, default 8).
  * CPUs and memory: --cpus-per-task=8 and --mem-per-gpu=64G per task/GPU
    (half of a DGX A100's 16 cores and 256 GB per GPU).
  * Time limit: Philly has none; --time is the runtime rounded up to the next
    of 1h, 2h, 4h, 8h, 12h, 1d, 2d, 3d, 7d, 14d, 28d (the buckets users pick),
    capped at --max-time minutes (default 2880 = 2 days, a common Slurm site
    MaxTime): longer jobs are killed at the limit (TIMEOUT), as they would be.
  * submit: seconds after the window start; account: the VC; user: the user hash.
Standard library only:
  tools/philly_to_sbatch.py IN.json[.gz] OUT.csv --from-day 7 --days 14 [--max-time 2880] [--node-gpus 8] [--partition P]
"""
import argparse
import csv
import datetime as dt
import gzip
import json
import math

BUCKETS_MIN = [60, 120, 240, 480, 720, 1440, 2880, 4320, 10080, 20160, 40320]


def time_limit(runtime_min):
    for b in BUCKETS_MIN:
        if runtime_min <= b:
            return b
    return BUCKETS_MIN[-1]


def fmt_time(minutes):
    d, m = divmod(minutes, 1440)
    h, m = divmod(m, 60)
    return f"{d}-{h:02d}:{m:02d}:00" if d else f"{h:02d}:{m:02d}:00"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--from-day", type=float, default=0.0)
    ap.add_argument("--days", type=float, default=1e9)
    ap.add_argument("--max-time", type=int, default=2880, help="cap on --time, minutes")
    ap.add_argument("--node-gpus", type=int, default=8, help="GPUs per node of the target cluster")
    ap.add_argument("--partition", default="", help="add --partition=P to every job")
    a = ap.parse_args()
    opener = gzip.open if a.input.endswith(".gz") else open
    with opener(a.input, "rt") as f:
        jobs = json.load(f)
    parse = lambda s: dt.datetime.strptime(s, "%Y-%m-%d %H:%M:%S")
    jobs.sort(key=lambda j: (j["submitted_time"], j["jobid"]))
    t0 = parse(jobs[0]["submitted_time"])
    lo = t0 + dt.timedelta(days=a.from_day)
    hi = lo + dt.timedelta(days=a.days)
    rows = []
    for j in jobs:
        t = parse(j["submitted_time"])
        if not (lo <= t < hi) or j["runtime_min"] is None:
            continue
        gpus = sum(len(m["gpus"]) for m in j["detail"])
        if gpus <= 0:
            continue
        nodes = math.ceil(gpus / a.node_gpus)
        per_node = gpus // nodes
        if per_node * nodes != gpus:
            gpu_args = f"--nodes={nodes} --ntasks={gpus} --gpus={gpus}"
        else:
            gpu_args = f"--nodes={nodes} --ntasks-per-node={per_node} --gpus-per-node={per_node}"
        runtime_s = max(1, round(j["runtime_min"] * 60))
        limit = min(time_limit(j["runtime_min"]), a.max_time)
        args = f"{gpu_args} --cpus-per-task=8 --mem-per-gpu=64G --time={fmt_time(limit)}"
        if a.partition:
            args += f" --partition={a.partition}"
        name = j["jobid"].replace("application_", "")
        rows.append([name, int((t - lo).total_seconds()), runtime_s, args, j["user"], j["vc"]])
    with open(a.output, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["name", "submit", "duration", "args", "user", "account"])
        w.writerows(rows)
    print(f"{len(rows)} jobs written to {a.output}")


if __name__ == "__main__":
    main()
