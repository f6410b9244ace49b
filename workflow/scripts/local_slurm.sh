#!/usr/bin/env bash
# A throwaway single-node SLURM cluster on localhost, for CI and for trying the
# workflow's SLURM profile (profiles/slurm) without a real cluster.
#
#   bash workflow/scripts/local_slurm.sh install   # apt-get slurmctld slurmd slurm-client munge
#   bash workflow/scripts/local_slurm.sh start     # munged + slurmctld + slurmd, wait for idle, srun check
#   bash workflow/scripts/local_slurm.sh status    # daemons and node state (exit 0 only if usable)
#   bash workflow/scripts/local_slurm.sh stop      # stop the daemons started by `start` (pid files)
#
# Needs root on Debian 12 (Slurm 22.05, munge 0.5); works without systemd: the
# daemons are started by hand. Every subcommand is idempotent. Without an
# accounting database `sacct` does not work: run Snakemake with
# `--slurm-status-command squeue` (the profile does), which needs MinJobAge
# >= 3 x slurm-init-seconds-before-status-checks; MinJobAge is 3600 s here so
# finished jobs stay visible to `squeue -t all` for an hour (the test uses them
# as proof that jobs went through sbatch).
#
# Environment overrides: LOCAL_SLURM_CPUS (default: nproc), LOCAL_SLURM_MEM_MB
# (default: free memory - 1024 MB), LOCAL_SLURM_TIMEOUT (seconds to wait for the
# node to become idle, default 60).
set -euo pipefail

PROG=local_slurm.sh
CONF_DIR=/etc/slurm
CONF=$CONF_DIR/slurm.conf
STATE_DIR=/var/lib/slurm/slurmctld
SPOOL_DIR=/var/lib/slurm/slurmd
LOG_DIR=/var/log/slurm
CTLD_PID=/run/slurmctld.pid
SLURMD_PID=/run/slurmd.pid
MUNGE_RUN=/run/munge
MUNGE_PID=$MUNGE_RUN/munged.pid
MUNGE_KEY=/etc/munge/munge.key
TIMEOUT=${LOCAL_SLURM_TIMEOUT:-60}

die() { echo "$PROG: error: $*" >&2; exit 1; }
info() { echo "$PROG: $*"; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (it installs packages and starts daemons)"; }
need_cmd() { command -v "$1" >/dev/null 2>&1 || die "'$1' not found: run '$PROG install' first"; }

# pid from a pid file if that process is alive and is the expected program, else nothing
live_pid() {  # $1 pid file, $2 program name
    local pid
    [ -s "$1" ] || return 1
    pid=$(tr -dc 0-9 <"$1")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$2" ] || return 1
    echo "$pid"
}

node_state() { sinfo -h -N -o %t 2>/dev/null | head -n1; }

cmd_install() {
    need_root
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null \
        && command -v sbatch >/dev/null && command -v munged >/dev/null; then
        info "slurmctld, slurmd, slurm-client and munge already installed"
        return 0
    fi
    command -v apt-get >/dev/null || die "apt-get not found: this script supports Debian/Ubuntu only"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q || die "apt-get update failed"
    apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge \
        || die "apt-get install of slurmctld slurmd slurm-client munge failed"
    info "installed $(slurmctld -V 2>/dev/null), munge $(munged -V 2>/dev/null | awk '{print $1}')"
}

start_munge() {
    if [ ! -s "$MUNGE_KEY" ]; then
        info "creating munge key"
        mkdir -p /etc/munge
        if command -v mungekey >/dev/null; then
            mungekey --create --keyfile="$MUNGE_KEY" || die "mungekey --create failed"
        else
            dd if=/dev/urandom bs=1 count=1024 of="$MUNGE_KEY" status=none
        fi
    fi
    chown munge:munge "$MUNGE_KEY" && chmod 0400 "$MUNGE_KEY"
    mkdir -p "$MUNGE_RUN" /var/lib/munge /var/log/munge
    chown munge:munge "$MUNGE_RUN" /var/lib/munge /var/log/munge
    chmod 0755 "$MUNGE_RUN"
    if live_pid "$MUNGE_PID" munged >/dev/null; then
        info "munged already running"
    else
        rm -f "$MUNGE_PID"
        runuser -u munge -- munged --pid-file="$MUNGE_PID" \
            || die "munged failed to start (see /var/log/munge/munged.log)"
    fi
    munge -n | unmunge >/dev/null || die "munge credential check failed (munge -n | unmunge)"
}

write_conf() {  # writes slurm.conf to $1
    local host cpus mem free_mb
    host=$(hostname -s)
    cpus=${LOCAL_SLURM_CPUS:-$(nproc)}
    free_mb=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
    mem=${LOCAL_SLURM_MEM_MB:-$((free_mb - 1024))}
    [ "$mem" -ge 256 ] || die "only ${free_mb} MB free memory: not enough for a local SLURM node"
    local addr=""
    getent hosts "$host" >/dev/null || addr=" NodeAddr=127.0.0.1"
    cat >"$1" <<EOF
# written by workflow/scripts/local_slurm.sh: single-node test cluster
ClusterName=ci
SlurmctldHost=$host${addr:+(127.0.0.1)}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
MinJobAge=3600
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
StateSaveLocation=$STATE_DIR
SlurmdSpoolDir=$SPOOL_DIR
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN$addr
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

wait_idle() {
    local t0 state resumed=0
    t0=$SECONDS
    while :; do
        state=$(node_state || true)
        case "$state" in
            idle|mix|mixed|alloc|allocated) return 0 ;;
            down*|drain*|drng*|fail*|inval*)
                if [ "$resumed" = 0 ]; then
                    scontrol update NodeName="$(hostname -s)" State=RESUME >/dev/null 2>&1 || true
                    resumed=1
                fi ;;
        esac
        if [ $((SECONDS - t0)) -ge "$TIMEOUT" ]; then
            sinfo -N -l >&2 || true
            tail -n 20 "$LOG_DIR/slurmctld.log" "$LOG_DIR/slurmd.log" >&2 2>/dev/null || true
            die "node not idle after ${TIMEOUT}s (state: '${state:-no answer}'); logs in $LOG_DIR"
        fi
        sleep 0.5
    done
}

cmd_start() {
    need_root
    for c in munged slurmctld slurmd sinfo srun scontrol; do need_cmd "$c"; done
    local t0=$SECONDS
    start_munge
    mkdir -p "$CONF_DIR" "$STATE_DIR" "$SPOOL_DIR" "$LOG_DIR"
    local new
    new=$(mktemp)
    write_conf "$new"
    local ctld slurmd_pid
    ctld=$(live_pid "$CTLD_PID" slurmctld || true)
    slurmd_pid=$(live_pid "$SLURMD_PID" slurmd || true)
    # free memory drifts between calls: a RealMemory difference alone is no reason to restart
    if [ -n "$ctld" ] && [ -n "$slurmd_pid" ] && [ -f "$CONF" ] \
        && cmp -s <(sed 's/RealMemory=[0-9]*//' "$new") <(sed 's/RealMemory=[0-9]*//' "$CONF"); then
        rm -f "$new"
        info "slurmctld and slurmd already running with this configuration"
    else
        if [ -n "$ctld$slurmd_pid" ]; then
            info "configuration changed or a daemon is missing: restarting"
            stop_slurm
        fi
        install -m 0644 "$new" "$CONF"
        rm -f "$new"
        # -c: a fresh cluster, no jobs or node states left over from an earlier run
        slurmctld -c || die "slurmctld failed to start (see $LOG_DIR/slurmctld.log)"
        slurmd || die "slurmd failed to start (see $LOG_DIR/slurmd.log)"
    fi
    wait_idle
    local out
    out=$(timeout 60 srun -N1 -n1 hostname 2>&1) || die "'srun hostname' failed: $out"
    info "cluster up in $((SECONDS - t0)) s: node '$out' $(node_state), $CONF"
}

stop_one() {  # $1 pid file, $2 program name
    local pid i
    pid=$(live_pid "$1" "$2" || true)
    if [ -z "$pid" ]; then
        rm -f "$1"
        return 0
    fi
    kill "$pid"
    for i in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || { rm -f "$1"; info "stopped $2 (pid $pid)"; return 0; }
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$1"
    info "killed $2 (pid $pid) after 10 s"
}

stop_slurm() {
    stop_one "$SLURMD_PID" slurmd
    stop_one "$CTLD_PID" slurmctld
}

cmd_stop() {
    need_root
    stop_slurm
    stop_one "$MUNGE_PID" munged
    info "stopped"
}

cmd_status() {
    local ok=0 pid name file
    for pair in "munged:$MUNGE_PID" "slurmctld:$CTLD_PID" "slurmd:$SLURMD_PID"; do
        name=${pair%%:*}
        file=${pair#*:}
        if pid=$(live_pid "$file" "$name"); then
            echo "$name: running (pid $pid)"
        else
            echo "$name: not running"
            ok=1
        fi
    done
    if command -v sinfo >/dev/null; then
        local state
        state=$(node_state || true)
        echo "node: ${state:-no answer}"
        case "$state" in idle|mix|mixed|alloc|allocated) ;; *) ok=1 ;; esac
    else
        echo "node: slurm-client not installed"
        ok=1
    fi
    return $ok
}

case "${1:-}" in
    install) cmd_install ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    *) echo "usage: $PROG install|start|stop|status" >&2; exit 2 ;;
esac
