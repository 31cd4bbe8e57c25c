#!/usr/bin/env python3
"""Write a seeded sbatch-trace CSV for a real-Slurm oracle case.

The mix is what GPU sites submit: single-GPU jobs with a few cores, whole-socket
and whole-node GPU jobs, multi-node jobs and CPU-only jobs; sizes and the
arrival process are drawn from named RNG streams of one seed so a case can be
regenerated exactly. Every duration stays at least 10 s under its --time limit
(the oracle's limit check runs only every 30 s).

  tools/make_oracle_case.py OUT.csv --seed 1 --jobs 80 --span 150 --mix gpu-sockets
"""
import argparse
import csv
import random

MIXES = {
    # (weight, args) for a cluster of 2-socket x 8-core nodes with 4 GPUs (2 per socket)
    "gpu-sockets": [
        (30, "--ntasks=1 --cpus-per-task=2 --gres=gpu:1 --mem=4000"),
        (15, "--ntasks=1 --cpus-per-task=4 --gres=gpu:2 --mem=8000"),
        (10, "--ntasks=2 --cpus-per-task=4 --gres=gpu:2 --mem=8000"),
        (8, "--nodes=1 --ntasks-per-node=4 --cpus-per-task=4 --gres=gpu:4 --mem=32000"),
        (6, "--nodes=2 --ntasks-per-node=4 --cpus-per-task=2 --gres=gpu:4 --mem=16000"),
        (10, "--ntasks=1 --cpus-per-task=10 --gres=gpu:1 --mem=8000"),
        (12, "--ntasks=4 --cpus-per-task=1 --mem=2000"),
        (9, "--nodes=1 --ntasks=16 --mem=16000"),
    ],
    # two GPU types (a100 nodes Weight=10, v100 nodes Weight=1), partitions batch (tier 1) and high (tier 2)
    "two-types": [
        (20, "--ntasks=1 --cpus-per-task=2 --gres=gpu:1 --mem=4000"),
        (12, "--ntasks=1 --cpus-per-task=2 --gres=gpu:a100:1 --mem=4000"),
        (10, "--ntasks=1 --cpus-per-task=4 --gres=gpu:v100:2 --mem=8000"),
        (10, "--ntasks=1 --cpus-per-task=4 --gres=gpu:2 --mem=8000 -p high"),
        (8, "--nodes=1 --ntasks-per-node=4 --cpus-per-task=2 --gres=gpu:a100:4 --mem=16000"),
        (8, "--nodes=1 --ntasks=8 --mem=8000 -p high"),
        (10, "--ntasks=2 --cpus-per-task=1 --mem=2000"),
        (6, "--nodes=2 --ntasks-per-node=2 --cpus-per-task=2 --gres=gpu:2 --mem=8000"),
    ],
    # eight 2-socket x 4-core nodes with one GPU per socket under three leaf switches
    # (3+3+2 nodes) of a topology/tree; multi-node jobs with and without --switches
    "topo-tree": [
        (25, "--ntasks=1 --cpus-per-task=2 --gres=gpu:1 --mem=4000"),
        (12, "--nodes=1 --ntasks=8 --mem=8000"),
        (12, "--nodes=2 --ntasks-per-node=2 --cpus-per-task=2 --gres=gpu:2 --mem=8000"),
        (10, "--nodes=2 --ntasks-per-node=1 --cpus-per-task=4 --gres=gpu:1 --mem=4000 --switches=1"),
        (8, "--nodes=3 --ntasks-per-node=4 --gres=gpu:2 --mem=8000 --switches=1"),
        (8, "--nodes=4 --ntasks-per-node=2 --cpus-per-task=2 --gres=gpu:2 --mem=8000"),
        (10, "--ntasks=4 --cpus-per-task=1 --mem=2000"),
        (6, "--nodes=3 --ntasks-per-node=8 --mem=8000"),
    ],
    # gpu-sockets nodes; GPU-to-core binding requests: enforce-binding, --gpus-per-task,
    # --cpus-per-gpu, per-job --gpus
    "binding": [
        (20, "--ntasks=1 --cpus-per-task=6 --gres=gpu:1 --gres-flags=enforce-binding --mem=4000"),
        (15, "--ntasks=2 --cpus-per-task=3 --gpus-per-task=1 --mem=4000"),
        (12, "--nodes=1 --gpus=2 --cpus-per-gpu=4 --mem=8000"),
        (10, "--nodes=1 --ntasks=4 --gpus-per-task=1 --cpus-per-task=2 --mem=8000"),
        (10, "--gres=gpu:2 --cpus-per-gpu=3 --gres-flags=enforce-binding --mem=8000"),
        (10, "--ntasks=1 --cpus-per-task=10 --gres=gpu:1 --mem=8000"),
        (12, "--ntasks=6 --cpus-per-task=1 --mem=3000"),
        (6, "--nodes=2 --ntasks-per-node=2 --gpus-per-task=1 --cpus-per-task=2 --mem=8000"),
    ],
    # gpu-sockets nodes; three accounts with unequal shares compete (Fair Tree + age)
    "fairshare": [
        (35, "--ntasks=1 --cpus-per-task=4 --gres=gpu:1 --mem=4000"),
        (20, "--ntasks=1 --cpus-per-task=8 --gres=gpu:2 --mem=8000"),
        (15, "--nodes=1 --ntasks=16 --gres=gpu:4 --mem=16000"),
        (15, "--ntasks=4 --cpus-per-task=2 --mem=4000"),
        (10, "--nodes=2 --ntasks-per-node=8 --gres=gpu:2 --mem=8000"),
    ],
}

# account draw per mix (account, weight); mixes without an entry write no account column
ACCOUNTS = {
    "fairshare": [("acct_a", 50), ("acct_b", 30), ("acct_c", 20)],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("output")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=80)
    ap.add_argument("--span", type=int, default=150, help="seconds over which jobs arrive")
    ap.add_argument("--mix", default="gpu-sockets", choices=sorted(MIXES))
    a = ap.parse_args()
    arrivals = random.Random(f"{a.seed}/arrivals")
    sizes = random.Random(f"{a.seed}/sizes")
    durations = random.Random(f"{a.seed}/durations")
    owners = random.Random(f"{a.seed}/accounts")
    accounts = ACCOUNTS.get(a.mix)
    mix = MIXES[a.mix]
    weights = [w for w, _ in mix]
    rows = []
    t = 0.0
    for i in range(a.jobs):
        t += arrivals.expovariate(a.jobs / a.span)
        args = sizes.choices([m for _, m in mix], weights=weights)[0]
        dur = int(durations.uniform(15, 75))
        limit_min = (dur + 10 + 59) // 60 + durations.choice([0, 0, 1, 2])
        row = [f"j{i + 1:03d}", int(t), dur, f"{args} --time={limit_min}"]
        if accounts:
            row += ["", owners.choices([n for n, _ in accounts], weights=[w for _, w in accounts])[0]]
        rows.append(row)
    with open(a.output, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        w.writerow(["name", "submit", "duration", "args"] + (["user", "account"] if accounts else []))
        w.writerows(rows)
    print(f"{len(rows)} jobs, last submit at {int(t)} s -> {a.output}")


if __name__ == "__main__":
    main()
