#!/usr/bin/env bash
# Acceptance test: a `gcsim sweep --emit-slurm` job array, run by a real Slurm on
# loopback (tools/slurm/local_slurm.sh), merges into the same sweep.csv, plots and
# target answer as the same sweep run locally.
#
#   tests/slurm/sweep_array.sh PATH_TO_GCSIM
#
# Exit 0 pass, 1 fail, 77 skip (no root / no Slurm packages).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
local_slurm="$root/tools/slurm/local_slurm.sh"
WAIT_S=300

if [[ $# -ne 1 ]]; then
    echo "usage: $0 PATH_TO_GCSIM" >&2
    exit 2
fi
gcsim=$(readlink -f "$1" 2>/dev/null || true)
if [[ -z "$gcsim" || ! -x "$gcsim" ]]; then
    echo "sweep_array: $1 is not an executable" >&2
    exit 1
fi
"$local_slurm" available
rc=$?
if [[ $rc -ne 0 ]]; then
    echo "sweep_array: SKIP (local Slurm not available)" >&2
    exit "$rc"
fi

tmp=$(mktemp -d /tmp/gcsim-sweep-array.XXXXXX)
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    "$local_slurm" stop "$tmp/slurm" || true
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "sweep_array: FAIL: $*" >&2; exit 1; }

grid=(--cluster "$root/configs/dgx-a100-pod.yaml" --trace "$root/traces/philly-d07-d21.csv"
      --runtime-model step --profiles "$root/configs/profiles/input-bound.yaml"
      --grid nodes=16,32,48 --grid binding=numa-bound,unbound --no-progress)

"$gcsim" sweep "${grid[@]}" --target 'p95_wait<=1d' --out "$tmp/local" >/dev/null || fail "local sweep"
"$gcsim" sweep "${grid[@]}" --target 'p95_wait<=1d' --emit-slurm "$tmp/array" >/dev/null || fail "--emit-slurm"

# Two emulated nodes of two CPUs: the array's six one-CPU tasks run four at a time.
conf_line=$("$local_slurm" start "$tmp/slurm" --nodes 2 --cpus 2) || fail "local Slurm did not start"
export "${conf_line?}"
job=$(sbatch --parsable "$tmp/array/sweep.sbatch") || fail "sbatch"
job=${job%%;*}
echo "sweep_array: submitted array job $job" >&2
deadline=$((SECONDS + WAIT_S))
while squeue -h -j "$job" 2>/dev/null | grep -q .; do
    ((SECONDS < deadline)) || fail "the array did not finish in ${WAIT_S} s"
    sleep 1
done
ran=$(ls "$tmp/array/points" 2>/dev/null | wc -l)
echo "sweep_array: $ran point directories written by the array" >&2
for log in "$tmp/array/logs"/*.out; do
    [[ -s $log ]] && sed 's/^/  task log: /' "$log" >&2
done

"$gcsim" sweep --merge "$tmp/array" --target 'p95_wait<=1d' >/dev/null || fail "--merge"
for f in sweep.csv sweep.html target.txt plan.tsv plot_wait_p95_s.svg; do
    cmp -s "$tmp/local/$f" "$tmp/array/$f" || fail "$f differs between the local sweep and the merged array"
    echo "sweep_array: ok: $f identical" >&2
done
echo "sweep_array: ok: $(cat "$tmp/array/target.txt")"
exit 0
