#!/usr/bin/env bash
# A real one-node Slurm cluster in this container, without systemd (docs/cluster.md):
# munged with a key generated for it, slurmctld and slurmd from Debian's packages, a minimal
# slurm.conf naming this host as the only node (no cgroups: proctrack/linuxproc, task/none),
# and every file (state, spool, logs, sockets, pid files) in one state directory.
#
#   scripts/slurm-local.sh start [STATE_DIR]   start it; prints the line to `eval` for clients
#   scripts/slurm-local.sh stop  [STATE_DIR]   stop the daemons it started and remove STATE_DIR
#   scripts/slurm-local.sh env   [STATE_DIR]   print `export SLURM_CONF=...` again
#
# STATE_DIR defaults to ${TMPDIR:-/tmp}/calbench-slurm. Clients find the cluster through
# SLURM_CONF=STATE_DIR/slurm.conf (which also names munged's socket, AuthInfo=socket=...), so
# nothing in /etc or /run is touched and a cluster already configured on the machine is left
# alone. Ports: CALBENCH_SLURM_PORT (slurmctld, default 6817) and the next one (slurmd).
# Runs as root (slurmd must, to start jobs); the daemons run as root too (SlurmUser=root).
# Installs slurmctld, slurmd, slurm-client and munge with apt-get when they are missing.
set -euo pipefail

command=${1:-}
state=${2:-${TMPDIR:-/tmp}/calbench-slurm}
port=${CALBENCH_SLURM_PORT:-6817}

die() {
  echo "slurm-local: $*" >&2
  exit 1
}

install_packages() {
  local missing=() p
  for p in slurmctld slurmd slurm-client munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "installing ${missing[*]} needs root"
  echo "slurm-local: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # The packages' postinst try to start the services; without systemd (or with a policy-rc.d
  # that refuses) that is skipped, which is what we want: this script starts the daemons.
  apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >&2
}

# pid from a pid file, if that process still runs.
live_pid() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

stop_daemon() {  # stop_daemon PIDFILE NAME: SIGTERM, then SIGKILL after 10 s
  local pid
  pid=$(live_pid "$1") || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  echo "slurm-local: $2 (pid $pid) did not stop on SIGTERM; killing it" >&2
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  [ -d "$state" ] || return 0
  [ -f "$state/slurm.conf" ] || die "$state is not a slurm-local state directory (no slurm.conf)"
  # Jobs still running are children of slurmd's slurmstepd processes; cancelling them first
  # lets slurmd end them, so nothing the cluster started outlives it.
  if live_pid "$state/slurmctld.pid" >/dev/null; then
    SLURM_CONF="$state/slurm.conf" scancel --quiet --user="$(id -un)" 2>/dev/null || true
  fi
  stop_daemon "$state/slurmd.pid" slurmd
  stop_daemon "$state/slurmctld.pid" slurmctld
  stop_daemon "$state/munge/munged.pid" munged
  rm -rf "$state"
}

start() {
  [ "$(id -u)" -eq 0 ] || die "needs root (slurmd starts jobs as their user)"
  install_packages
  if [ -f "$state/slurm.conf" ] && live_pid "$state/slurmctld.pid" >/dev/null; then
    die "a cluster already runs from $state (scripts/slurm-local.sh stop $state)"
  fi
  stop  # the leftovers of a cluster that was not stopped
  mkdir -p "$state"
  state=$(cd "$state" && pwd -P)
  # munged refuses a key or socket directory that others may write to.
  mkdir -m 0700 -p "$state/munge" "$state/ctld" "$state/spool"
  chmod 0755 "$state"
  dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
  chmod 0600 "$state/munge/munge.key"
  munged --force --key-file="$state/munge/munge.key" --socket="$state/munge/socket" \
    --pid-file="$state/munge/munged.pid" --log-file="$state/munge/munged.log" \
    --seed-file="$state/munge/munged.seed" ||
    die "munged did not start: $(tail -n 5 "$state/munge/munged.log" 2>/dev/null)"

  local host cpus memory
  host=$(hostname -s)
  cpus=$(nproc --all)
  memory=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
  cat >"$state/slurm.conf" <<EOF
# Written by scripts/slurm-local.sh: one node, this host, everything under $state.
ClusterName=calbench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge/socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerParameters=sched_interval=1
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$state/slurm.conf"
  slurmctld || die "slurmctld did not start: $(tail -n 5 "$state/slurmctld.log" 2>/dev/null)"
  slurmd -N "$host" || die "slurmd did not start: $(tail -n 5 "$state/slurmd.log" 2>/dev/null)"
  # Ready when the node is idle (slurmd registered and the controller accepts jobs).
  local node_state=""
  for _ in $(seq 1 300); do
    node_state=$(sinfo --noheader --nodes="$host" --format=%T 2>/dev/null || true)
    [ "$node_state" = idle ] && break
    sleep 0.1
  done
  [ "$node_state" = idle ] ||
    die "the node did not become idle (state '$node_state'); logs in $state: $(tail -n 3 "$state/slurmd.log" 2>/dev/null)"
  echo "export SLURM_CONF=$state/slurm.conf"
}

case "$command" in
  start) start ;;
  stop) stop ;;
  env) [ -f "$state/slurm.conf" ] && echo "export SLURM_CONF=$state/slurm.conf" ||
    die "no cluster in $state" ;;
  *) die "usage: slurm-local.sh start|stop|env [STATE_DIR]" ;;
esac
