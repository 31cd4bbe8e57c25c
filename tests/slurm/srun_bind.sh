#!/usr/bin/env bash
# Acceptance test: under a real local Slurm, `srun ... gcsim real bind -- CMD`
# gives every task the torch-style rank environment derived from Slurm's.
#
#   tests/slurm/srun_bind.sh PATH_TO_GCSIM
#
# Brings up a private 2-node cluster with tools/slurm/local_slurm.sh (nodes n1, n2,
# each with all of this machine's CPUs) and checks
#   srun -N 1 -n 2 -w n1 : RANK=LOCAL_RANK=<task>, WORLD_SIZE=2, LOCAL_WORLD_SIZE=2,
#                          MASTER_ADDR=n1, MASTER_PORT numeric; with task/affinity
#                          also that the two tasks run on disjoint CPUs
#   srun -N 2 -n 2       : RANK=<task>, LOCAL_RANK=0, LOCAL_WORLD_SIZE=1,
#                          WORLD_SIZE=2, MASTER_ADDR=n1
# Exit 0 pass, 1 fail, 77 skip (no root / no Slurm packages / fewer than 2 CPUs).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
local_slurm="$here/../../tools/slurm/local_slurm.sh"
SRUN_TIMEOUT=30

if [[ $# -ne 1 ]]; then
    echo "usage: $0 PATH_TO_GCSIM" >&2
    exit 2
fi
gcsim=$(readlink -f "$1" 2>/dev/null || true)
if [[ -z "$gcsim" || ! -x "$gcsim" ]]; then
    echo "srun_bind: $1 is not an executable" >&2
    exit 1
fi

"$local_slurm" available
rc=$?
if [[ $rc -ne 0 ]]; then
    echo "srun_bind: SKIP (local Slurm not available)" >&2
    exit "$rc"
fi
if [[ $(nproc) -lt 2 ]]; then
    echo "srun_bind: SKIP (needs at least 2 CPUs, have $(nproc))" >&2
    exit 77
fi

tmp=$(mktemp -d /tmp/gcsim-srun-bind.XXXXXX)
srun_pid=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
    [[ -n $srun_pid ]] && kill -TERM "$srun_pid" 2>/dev/null
    "$local_slurm" stop "$tmp" || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# srun must not see an outer job's environment (e.g. when the test suite itself
# runs inside a Slurm allocation).
for v in $(compgen -e); do
    case "$v" in SLURM_*|SBATCH_*|SALLOC_*|SRUN_*|SQUEUE_*|SINFO_*) unset "$v" ;; esac
done

t_start=$SECONDS
if ! conf_line=$("$local_slurm" start "$tmp" --nodes 2 --cpus "$(nproc)"); then
    echo "srun_bind: FAIL: could not start the local Slurm" >&2
    exit 1
fi
export "${conf_line?}"            # SLURM_CONF=...
taskplugin=$(sed -n 's/^TaskPlugin=//p' "$SLURM_CONF")
cd "$tmp" || exit 1

failures=0
checks=0
fail() {
    echo "srun_bind: FAIL: $*" >&2
    failures=$((failures + 1))
}

run_srun() {   # run_srun NAME SRUN_ARGS... : stdout -> $tmp/NAME.out, stderr -> $tmp/NAME.err
    local name=$1
    shift
    # in the background + wait, so that INT/TERM run the cleanup trap at once
    timeout "$SRUN_TIMEOUT" srun --label "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    srun_pid=$!
    wait "$srun_pid"
    local rc=$?
    srun_pid=""
    if [[ $rc -ne 0 ]]; then
        fail "srun $* exited $rc (124 = timeout)"
        show "$name"
    fi
    return $rc
}

keys='RANK|LOCAL_RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT'
keys+='|SLURM_(PROCID|LOCALID|NTASKS|NODEID|JOB_NODELIST|JOB_ID|STEP_TASKS_PER_NODE|TASKS_PER_NODE|CPUS_PER_TASK|CPU_BIND)'
show() {   # show NAME: what came back (of an env dump, only the relevant variables)
    echo "---- stdout of $1 (by task; env filtered to the rank/Slurm variables) ----" >&2
    grep -E "^ *[0-9]+: (($keys)=|[^=]*\$)" "$tmp/$1.out" | sort -s -t: -k1,1n >&2
    echo "---- stderr of $1 ----" >&2
    cat "$tmp/$1.err" >&2
    echo "----" >&2
}

value_of() {   # value_of NAME TASK KEY -> value(s) of KEY= printed by TASK
    sed -n "s/^ *$2: $3=//p" "$tmp/$1.out"
}

expect() {   # expect NAME TASK KEY VALUE  (VALUE "#number" = any decimal number)
    local name=$1 task=$2 key=$3 want=$4 got
    checks=$((checks + 1))
    got=$(value_of "$name" "$task" "$key")
    if [[ $want == "#number" ]]; then
        [[ $got =~ ^[0-9]+$ ]] && return 0
        want="<a number>"
    else
        [[ "$got" == "$want" ]] && return 0
    fi
    fail "$name: task $task: expected $key=$want, got ${got:+$key=}${got:-nothing}"
    return 1
}

expand_cpus() {   # "0-2,5" -> "0 1 2 5"
    local part a b out=()
    IFS=, read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        if [[ $part == *-* ]]; then
            a=${part%-*}; b=${part#*-}
            for ((; a <= b; a++)); do out+=("$a"); done
        elif [[ -n $part ]]; then
            out+=("$part")
        fi
    done
    echo "${out[*]}"
}

# -- one node, two tasks ----------------------------------------------------------
if run_srun one_node -N 1 -n 2 -w n1 "$gcsim" real bind -- env; then
    bad=$failures
    for t in 0 1; do
        expect one_node $t RANK $t
        expect one_node $t LOCAL_RANK $t
        expect one_node $t WORLD_SIZE 2
        expect one_node $t LOCAL_WORLD_SIZE 2
        expect one_node $t MASTER_ADDR n1
        expect one_node $t MASTER_PORT "#number"
    done
    ((failures > bad)) && show one_node
fi

# -- two nodes, one task each -----------------------------------------------------
if run_srun two_nodes -N 2 -n 2 "$gcsim" real bind -- env; then
    bad=$failures
    for t in 0 1; do
        expect two_nodes $t RANK $t
        expect two_nodes $t LOCAL_RANK 0
        expect two_nodes $t WORLD_SIZE 2
        expect two_nodes $t LOCAL_WORLD_SIZE 1
        expect two_nodes $t MASTER_ADDR n1
        expect two_nodes $t MASTER_PORT "#number"
    done
    ((failures > bad)) && show two_nodes
fi

# -- CPU binding (only task/affinity binds) ---------------------------------------
affinity="not checked (TaskPlugin=$taskplugin)"
if [[ $taskplugin == task/affinity ]]; then
    if run_srun affinity -N 1 -n 2 -w n1 "$gcsim" real bind -- grep Cpus_allowed_list /proc/self/status; then
        checks=$((checks + 1))
        l0=$(sed -n 's/^ *0: Cpus_allowed_list:[[:space:]]*//p' "$tmp/affinity.out")
        l1=$(sed -n 's/^ *1: Cpus_allowed_list:[[:space:]]*//p' "$tmp/affinity.out")
        common=""
        for c in $(expand_cpus "$l0"); do
            [[ " $(expand_cpus "$l1") " == *" $c "* ]] && common+="$c "
        done
        if [[ -z $l0 || -z $l1 || -n $common ]]; then
            fail "affinity: expected two tasks on disjoint CPUs, got task 0: '${l0}', task 1: '${l1}'"
            show affinity
        else
            affinity="task 0 on CPUs $l0, task 1 on CPUs $l1"
        fi
    fi
fi

if ((failures)); then
    echo "srun_bind: FAILED ($failures problem(s); $checks checks)" >&2
    exit 1
fi
echo "srun_bind: PASS: $checks checks in $((SECONDS - t_start)) s ($taskplugin)"
echo "  srun -N 1 -n 2: RANK/LOCAL_RANK 0,1  WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=n1 MASTER_PORT=$(value_of one_node 0 MASTER_PORT)"
echo "  srun -N 2 -n 2: RANK 0,1 LOCAL_RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=1 MASTER_ADDR=n1"
echo "  binding: $affinity"
exit 0
