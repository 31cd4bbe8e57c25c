#!/usr/bin/env bash
# local_slurm.sh: a throw-away, real Slurm cluster on this one machine, for tests.
#
#   local_slurm.sh start DIR [--nodes N] [--cpus C]   bring it up under DIR (N=1, C=$(nproc))
#   local_slurm.sh stop DIR                           stop what `start DIR` started (idempotent)
#   local_slurm.sh available                          exit 0 if this machine can run it, else 77
#
# Tests use it to run the real `srun` / `sbatch --array` against gcsim without a
# site cluster.  Everything talks over 127.0.0.1 on free ports taken from a
# private range, and every file lives under DIR:
#   DIR/etc/slurm.conf   DIR/env.sh (export SLURM_CONF=...)   DIR/state (slurmctld)
#   DIR/spool/<node>     DIR/log/*.log   DIR/run/*.pid        DIR/bin (argv[0] symlinks)
#
# It follows Slurm's "multiple slurmd" recipe: one slurmctld, and one slurmd per
# emulated node, each started as `slurmd -N <node>`, each with its own Port= and
# with %n in SlurmdSpoolDir / SlurmdPidFile / SlurmdLogFile so they do not collide.
# The nodes share the machine's CPUs (SlurmdParameters=config_overrides makes
# slurmd accept a node description that does not match the hardware).
#
# It needs root (SlurmUser=root, auth/none) and the Debian packages slurmctld,
# slurmd and slurm-client (Slurm 22.05); it never installs anything.  On success
# `start` prints exactly one line on stdout, SLURM_CONF=DIR/etc/slurm.conf; all
# progress and diagnostics go to stderr.  `stop` cancels every job, then signals
# only the PIDs that `start` recorded (SIGTERM, SIGKILL after 10 s), then kills any
# leftover job process that carries this cluster's SLURM_CONF or marker in its
# environment.  No pkill/killall.
set -euo pipefail

PORT_LO=24000          # private port range searched for a free block
PORT_HI=31000          # (below the kernel's default ephemeral range, 32768+)
IDLE_WAIT_S=60
STOP_WAIT_S=10

say() { echo "local_slurm: $*" >&2; }
die() { say "error: $*"; exit 1; }

usage() {
    sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# -- binaries -------------------------------------------------------------------
# Debian installs slurmctld-wlm etc. plus alternatives symlinks without the suffix.
find_sbin() {   # find_sbin NAME -> the real file behind NAME or NAME-wlm
    local n="$1" c
    for c in "/usr/sbin/$n" "/usr/sbin/$n-wlm" "$(command -v "$n" 2>/dev/null || true)"; do
        if [[ -n "$c" && -x "$c" ]]; then
            readlink -f "$c"
            return 0
        fi
    done
    return 1
}

check_available() {   # prints reasons on stderr; returns 0 or 77
    local bad=0 b
    if [[ $(id -u) -ne 0 ]]; then
        say "not running as root (the local cluster uses SlurmUser=root)"
        bad=1
    fi
    for b in slurmctld slurmd slurmstepd; do
        find_sbin "$b" >/dev/null || { say "missing $b (Debian package slurmctld/slurmd)"; bad=1; }
    done
    for b in srun sbatch sinfo scontrol scancel squeue; do
        command -v "$b" >/dev/null 2>&1 || { say "missing $b (Debian package slurm-client)"; bad=1; }
    done
    for b in hostname timeout setsid; do
        command -v "$b" >/dev/null 2>&1 || { say "missing $b"; bad=1; }
    done
    if ! command -v python3 >/dev/null 2>&1 && ! command -v ss >/dev/null 2>&1; then
        say "need python3 or ss to find free ports"
        bad=1
    fi
    [[ $bad -eq 0 ]] && return 0
    return 77
}

# -- ports ----------------------------------------------------------------------
block_is_free() {   # block_is_free BASE COUNT
    local base=$1 count=$2
    if command -v python3 >/dev/null 2>&1; then
        python3 - "$base" "$count" <<'EOF'
import socket, sys
base, count = int(sys.argv[1]), int(sys.argv[2])
held = []
try:
    for p in range(base, base + count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        held.append(s)
        s.bind(("0.0.0.0", p))      # slurmctld / slurmd bind INADDR_ANY
except OSError:
    sys.exit(1)
finally:
    for s in held:
        s.close()
EOF
        return $?
    fi
    local used p
    used=$(ss -Htan 2>/dev/null | awk '{n=split($4,a,":"); print a[n]}' | sort -u)
    for ((p = base; p < base + count; p++)); do
        grep -qx "$p" <<<"$used" && return 1
    done
    return 0
}

pick_ports() {   # pick_ports COUNT -> first port of a free block of COUNT ports
    local count=$1 base
    for _ in $(seq 1 50); do
        base=$((PORT_LO + RANDOM % (PORT_HI - PORT_LO - count)))
        if block_is_free "$base" "$count"; then
            echo "$base"
            return 0
        fi
    done
    die "no block of $count free ports in $PORT_LO-$PORT_HI"
}

# -- environment ----------------------------------------------------------------
# The daemons and client commands must not see a caller's Slurm job environment
# (SLURM_JOB_ID etc. would make srun think it runs inside an outer job).
clean_env() {
    local v
    for v in $(compgen -e); do
        case "$v" in
            SLURM_*|SBATCH_*|SALLOC_*|SRUN_*|SQUEUE_*|SINFO_*|SCONTROL_*|SACCT_*) unset "$v" ;;
        esac
    done
    export SLURM_CONF="$CONF"
}

set_dir() {   # set_dir DIR: absolute paths used everywhere below
    [[ -n "${1:-}" ]] || usage
    mkdir -p "$1"
    DIR=$(cd "$1" && pwd -P)
    CONF="$DIR/etc/slurm.conf"
    PIDS="$DIR/run/started.pids"    # "name pid" per daemon we launched
    MARKER="LOCAL_SLURM_DIR=$DIR"   # in the daemons' (and slurmstepd's) environment
}

pid_is_ours() {   # pid_is_ours PID: alive and started with -f $CONF
    local pid=$1
    { tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qxF "$CONF"
}

tail_logs() {
    local f
    for f in "$DIR"/log/*; do
        [[ -f "$f" ]] || continue
        echo "----- $f (last 25 lines) -----" >&2
        tail -n 25 "$f" >&2 || true
    done
}

# -- start ----------------------------------------------------------------------
write_conf() {   # write_conf NODES CPUS BASEPORT TASKPLUGIN
    local nodes=$1 cpus=$2 base=$3 taskplugin=$4 host i
    host=$(hostname -s 2>/dev/null || hostname)
    {
        echo "# generated by tools/slurm/local_slurm.sh: a private loopback test cluster"
        echo "ClusterName=gcsimlocal"
        echo "SlurmctldHost=${host}(127.0.0.1)"
        echo "SlurmctldPort=$base"
        echo "AuthType=auth/none"
        echo "CredType=cred/none"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "ProctrackType=proctrack/pgid"
        if [[ $taskplugin == task/affinity ]]; then
            echo "# task/affinity: srun binds each task to its allocated CPUs (sched_setaffinity)"
        else
            echo "# task/none: with task/affinity the nodes did not come up or could not launch a task here"
        fi
        echo "TaskPlugin=$taskplugin"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "SchedulerType=sched/backfill"
        # schedule new batch jobs (e.g. array tasks) on the next 1 s tick instead of
        # the default 3 s batch_sched_delay: a 4-task array on 2 CPUs takes 2 s, not 6 s
        echo "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "AccountingStorageType=accounting_storage/none"
        echo "JobCompType=jobcomp/none"
        echo "MpiDefault=none"
        echo "ReturnToService=2"
        echo "SlurmdParameters=config_overrides"
        echo "MailProg=/bin/true"
        echo "StateSaveLocation=$DIR/state"
        echo "SlurmdSpoolDir=$DIR/spool/%n"
        echo "SlurmctldPidFile=$DIR/run/slurmctld.pid"
        echo "SlurmdPidFile=$DIR/run/slurmd-%n.pid"
        echo "SlurmctldLogFile=$DIR/log/slurmctld.log"
        echo "SlurmdLogFile=$DIR/log/slurmd-%n.log"
        echo "SlurmctldDebug=info"
        echo "SlurmdDebug=info"
        # short timers: a test cluster should notice dead daemons / finished jobs fast
        echo "SlurmctldTimeout=30"
        echo "SlurmdTimeout=30"
        echo "MinJobAge=30"
        echo "KillWait=5"
        for ((i = 1; i <= nodes; i++)); do
            echo "NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base + i))" \
                 "CPUs=$cpus Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN"
        done
        echo "PartitionName=debug Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP"
    } >"$CONF"
}

launch() {   # launch NAME LOGFILE ARGV... : start one daemon in the foreground mode, record its pid
    local name=$1 out=$2
    shift 2
    # -D + setsid: the daemon leaves our process group and terminal; stdin/stdout/
    # stderr must not be inherited or a caller reading our stdout would never see EOF.
    # setsid does not fork here (a background job of a script is no group leader),
    # so $! is the daemon itself.
    env "$MARKER" setsid "$@" </dev/null >>"$out" 2>&1 &
    echo "$name $!" >>"$PIDS"
}

# (pid_is_ours, not kill -0: a daemon that died may linger as a zombie when
# nobody reaps it, and a zombie still answers kill -0)
wait_ctld() {   # until `scontrol ping` answers, or DEADLINE
    local pid
    pid=$(awk '$1=="slurmctld"{print $2}' "$PIDS")
    while ! scontrol ping 2>/dev/null | grep -q 'is UP'; do
        pid_is_ours "$pid" || { say "slurmctld exited"; return 1; }
        ((SECONDS < DEADLINE)) || { say "slurmctld does not answer"; return 1; }
        sleep 0.2
    done
}

wait_idle() {   # wait_idle NODES: until every node is idle, or DEADLINE
    local nodes=$1 states n_idle name pid
    while :; do
        states=$(sinfo -h -N -o '%N %T' 2>/dev/null || true)
        n_idle=$(awk '$2=="idle"' <<<"$states" | wc -l)
        ((n_idle == nodes)) && return 0
        while read -r name pid; do
            pid_is_ours "$pid" || { say "$name (pid $pid) exited"; return 1; }
        done <"$PIDS"
        if ((SECONDS >= DEADLINE)); then
            say "nodes not idle after ${IDLE_WAIT_S}s: $(tr '\n' ' ' <<<"$states")"
            return 1
        fi
        sleep 0.2
    done
}

bring_up() {   # bring_up NODES CPUS TASKPLUGIN -> 0 when all nodes are idle
    local nodes=$1 cpus=$2 taskplugin=$3 base i
    base=$(pick_ports $((nodes + 1))) || return 1
    write_conf "$nodes" "$cpus" "$base" "$taskplugin"
    : >"$PIDS"
    DEADLINE=$((SECONDS + IDLE_WAIT_S))
    say "slurmctld on 127.0.0.1:$base, $nodes node(s) n[1-$nodes] x $cpus CPUs, $taskplugin"
    launch slurmctld "$DIR/log/slurmctld.out" \
        "$DIR/bin/slurmctld" -D -c -i -f "$CONF"
    wait_ctld || return 1
    for ((i = 1; i <= nodes; i++)); do
        launch "slurmd-n$i" "$DIR/log/slurmd-n$i.out" \
            "$DIR/bin/slurmd" -D -N "n$i" -f "$CONF" -d "$STEPD"
    done
    wait_idle "$nodes" || return 1
    # a node can register fine and still fail at task launch (e.g. when the
    # task plugin may not set CPU affinity here): launch one task per node
    if ! timeout 30 srun -N "$nodes" --ntasks-per-node=1 -t 1 /bin/true </dev/null >&2; then
        say "a test step (srun -N $nodes /bin/true) failed"
        return 1
    fi
}

cmd_start() {
    local nodes=1 cpus tp
    cpus=$(nproc)
    set_dir "${1:-}"
    shift
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --nodes) nodes=${2:?}; shift 2 ;;
            --nodes=*) nodes=${1#*=}; shift ;;
            --cpus) cpus=${2:?}; shift 2 ;;
            --cpus=*) cpus=${1#*=}; shift ;;
            *) usage ;;
        esac
    done
    [[ $nodes =~ ^[1-9][0-9]*$ && $cpus =~ ^[1-9][0-9]*$ ]] || die "--nodes/--cpus must be positive integers"
    check_available || exit $?
    # slurmstepd listens on a unix socket DIR/spool/nN/nN_<job>.<step>, and such a
    # path may not exceed 107 bytes: a long DIR fails only at the first task launch
    local node="n$nodes" max
    max=$((107 - ${#node} * 2 - 8 - 16))      # "/spool/" "/" "_" + room for <job>.<step>
    ((${#DIR} <= max)) || die "DIR path too long (${#DIR} > $max chars): slurmstepd's socket path would exceed the unix socket limit; use a shorter DIR, e.g. mktemp -d /tmp/slurm.XXXXXX"
    if [[ -s $DIR/run/started.pids ]]; then
        local name pid
        while read -r name pid; do
            pid_is_ours "$pid" && die "$DIR already has a running $name (pid $pid); stop it first"
        done <"$DIR/run/started.pids"
    fi
    mkdir -p "$DIR"/{etc,state,spool,log,run,bin}
    rm -rf "$DIR"/state/* "$DIR"/spool/* "$DIR"/log/*
    chmod 755 "$DIR"
    local ctld slurmd
    ctld=$(find_sbin slurmctld)
    slurmd=$(find_sbin slurmd)
    STEPD=$(find_sbin slurmstepd)
    # argv[0] must be exactly "slurmctld" / "slurmd": Slurm derives behaviour from
    # it (e.g. GRES are dropped when slurmd is started as "slurmd-wlm").
    ln -sfn "$ctld" "$DIR/bin/slurmctld"
    ln -sfn "$slurmd" "$DIR/bin/slurmd"
    for ((i = 1; i <= nodes; i++)); do mkdir -p "$DIR/spool/n$i"; done
    echo "export SLURM_CONF=$CONF" >"$DIR/env.sh"
    clean_env

    local t0=$SECONDS
    # task/affinity first (it is what makes srun bind tasks); task/none if the
    # nodes do not come up with it on this machine.
    for tp in task/affinity task/none; do
        if bring_up "$nodes" "$cpus" "$tp"; then
            say "cluster up in $((SECONDS - t0)) s ($tp)"
            echo "SLURM_CONF=$CONF"
            return 0
        fi
        say "bring-up with $tp failed"
        tail_logs
        stop_daemons
        [[ $tp == task/affinity ]] && say "retrying with TaskPlugin=task/none"
    done
    die "could not start the local cluster under $DIR"
}

# -- stop -----------------------------------------------------------------------
ancestors() {   # this shell and every ancestor pid, one a line
    local p=$$
    while [[ -n "$p" && "$p" != 0 ]]; do
        echo "$p"
        p=$(awk '/^PPid:/{print $2}' "/proc/$p/status" 2>/dev/null || true)
    done
}

leftovers() {   # pids (not us or our ancestors) started by this cluster's daemons
    local anc d pid
    anc=" $(ancestors | tr '\n' ' ') "
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        [[ $anc == *" $pid "* ]] && continue
        # slurmstepd inherits the daemons' marker; job tasks carry the job's
        # SLURM_CONF together with a SLURM_JOB_ID
        if grep -qzxF -e "$MARKER" "$d/environ" 2>/dev/null ||
           { grep -qzxF -e "SLURM_CONF=$CONF" "$d/environ" 2>/dev/null &&
             grep -qz '^SLURM_JOB_ID=' "$d/environ" 2>/dev/null; }; then
            echo "$pid"
        fi
    done
}

stop_daemons() {   # TERM, wait, KILL the recorded daemons (slurmds first)
    [[ -f $PIDS ]] || return 0
    local live=() name pid t_end
    while read -r name pid; do
        [[ -n "$pid" ]] && pid_is_ours "$pid" && live+=("$pid")
    done < <(tac "$PIDS")
    if ((${#live[@]})); then
        kill -TERM "${live[@]}" 2>/dev/null || true
        t_end=$((SECONDS + STOP_WAIT_S))
        while ((SECONDS < t_end)); do
            local still=()
            for pid in "${live[@]}"; do pid_is_ours "$pid" && still+=("$pid"); done
            ((${#still[@]})) || break
            sleep 0.2
        done
        for pid in "${live[@]}"; do
            if pid_is_ours "$pid"; then
                say "pid $pid ignored SIGTERM; SIGKILL"
                kill -KILL "$pid" 2>/dev/null || true
            fi
        done
    fi
    : >"$PIDS"
}

cmd_stop() {
    [[ -n "${1:-}" ]] || usage
    [[ -d "$1" ]] || return 0          # nothing was ever started there
    set_dir "$1"
    clean_env
    local ctld_pid="" t_end pids
    [[ -f $PIDS ]] && ctld_pid=$(awk '$1=="slurmctld"{print $2}' "$PIDS")
    if [[ -n "$ctld_pid" ]] && pid_is_ours "$ctld_pid"; then
        # cancel every job first so slurmd/slurmstepd reap their tasks
        timeout 10 scancel --user root >/dev/null 2>&1 || true
        t_end=$((SECONDS + 10))
        while ((SECONDS < t_end)) &&
              [[ -n "$(timeout 5 squeue -h -o %i 2>/dev/null)" ]]; do
            sleep 0.3
        done
    fi
    stop_daemons
    local pid
    for _ in 1 2 3; do
        pids=$(leftovers)
        [[ -z "$pids" ]] && break
        for pid in $pids; do
            say "killing leftover pid $pid ($({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | cut -c1-60))"
            kill -KILL "$pid" 2>/dev/null || true
        done
        sleep 0.3
    done
    return 0
}

# -- main -----------------------------------------------------------------------
case "${1:-}" in
    start) shift; cmd_start "$@" ;;
    stop) shift; cmd_stop "$@" ;;
    available) check_available || exit $? ;;
    *) usage ;;
esac
