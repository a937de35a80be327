# shellcheck shell=bash
# A real Slurm cluster inside the lab guest, one slurmd per lab node, sourced after lib.sh:
# Debian's munge, slurmctld and slurmd (slurm-wlm 22.05). The guest shares the host's root
# read-only, so the key, configs, spool and logs live under $SL_DIR (guest tmpfs). Several
# slurmd on one kernel: each has its own NodeName (slurmd -N) and Port; NodeAddr is the lab
# node's address, so slurmctld reaches node K's slurmd at 10.0.0.K (slurm.conf(5):
# NodeName, NodeHostname, NodeAddr, Port). Everything runs as root; every wait is bounded.
SL_DIR=$(mktemp -d /tmp/slurm.XXXXXX)
# Other users traverse it, as they read /etc/slurm on a real cluster: slurm.conf (0644) and
# munged's socket are theirs to use; the munge key is 0600.
chmod 711 "$SL_DIR"
export SLURM_CONF=$SL_DIR/slurm.conf

sl_stop() {
  local f pid
  for f in "$SL_DIR"/slurmd-*.pid "$SL_DIR"/slurmctld.pid "$SL_DIR"/munged.pid; do
    [[ -s "$f" ]] || continue
    read -r pid <"$f" && kill "$pid" 2>/dev/null
  done
}

sl_logs() {
  local f
  for f in "$SL_DIR"/*.log; do tail -n 8 "$f" | sed "s|^|  $(basename "$f"): |" >&2; done
}

# sl_start NODE...: munged, slurmctld and a slurmd per NODE; waits until sinfo shows them idle.
sl_start() {
  local host n k ip i
  host=$(hostname)
  if [[ -z "$host" || "$host" == "(none)" ]]; then
    hostname slurm-lab
    host=slurm-lab
  fi
  head -c 1024 /dev/urandom >"$SL_DIR/munge.key"
  chmod 600 "$SL_DIR/munge.key"
  munged --force -S "$SL_DIR/munge.sock" --key-file="$SL_DIR/munge.key" \
    --log-file="$SL_DIR/munged.log" --pid-file="$SL_DIR/munged.pid" \
    --seed-file="$SL_DIR/munged.seed" || lab_fail "munged did not start"
  {
    cat <<CONF
ClusterName=gdrlab
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
AuthType=auth/munge
AuthInfo=socket=$SL_DIR/munge.sock
StateSaveLocation=$SL_DIR/ctld
SlurmdSpoolDir=$SL_DIR/slurmd-%n
SlurmctldPidFile=$SL_DIR/slurmctld.pid
SlurmdPidFile=$SL_DIR/slurmd-%n.pid
SlurmctldLogFile=$SL_DIR/slurmctld.log
SlurmdLogFile=$SL_DIR/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/linear
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
MinJobAge=4
CONF
    k=0
    for n in "$@"; do
      ip=$(lab_ip "$n")
      echo "NodeName=$n NodeHostname=$host NodeAddr=$ip Port=$((16900 + k)) CPUs=1 State=UNKNOWN"
      k=$((k + 1))
    done
    echo "PartitionName=lab Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$SLURM_CONF"
  # MinJobAge=4: sbatch --wait polls the job (slurm's src/sbatch/sbatch.c, _job_wait) after
  # 2 s, then multiplies its sleep by 4 up to 32 s while the sleep is under MinJobAge/2 (/3 in
  # older releases): with the default 300 it slept 2, 8, 32, 32 ... and returned up to 32 s
  # (measured 46 s) after the job ended. Under 4 the poll stays at 2 s; a finished job's record
  # lives 4 s (slurm.conf(5), MinJobAge), longer than one poll.
  # No systemd in the guest: slurmd makes its cgroup scope itself (cgroup.conf(5)).
  printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n' >"$SL_DIR/cgroup.conf"
  mkdir -p "$SL_DIR/ctld"
  for n in "$@"; do mkdir -p "$SL_DIR/slurmd-$n"; done
  # slurmd 22.05 loads its cgroup plugin even with proctrack/pgid and task/none; the guest
  # mounts no cgroup filesystem of its own.
  if ! grep -q ' /sys/fs/cgroup ' /proc/mounts; then
    mount -t cgroup2 none /sys/fs/cgroup || lab_fail "cannot mount cgroup2 on /sys/fs/cgroup"
  fi
  # Where systemd would have put slurmstepd's scope (IgnoreSystemd: slurmd makes it itself).
  mkdir -p /sys/fs/cgroup/system.slice
  local c
  for c in $(</sys/fs/cgroup/cgroup.controllers); do
    echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
    echo "+$c" >/sys/fs/cgroup/system.slice/cgroup.subtree_control 2>/dev/null
  done
  slurmctld -f "$SLURM_CONF" || { sl_logs; lab_fail "slurmctld did not start"; }
  for n in "$@"; do
    slurmd -f "$SLURM_CONF" -N "$n" || { sl_logs; lab_fail "slurmd -N $n did not start"; }
  done
  for ((i = 0; i < 60; i++)); do
    [[ "$(sinfo -h -t idle -o %D 2>/dev/null)" == "$#" ]] && return 0
    sleep 1
  done
  sinfo >&2
  sl_logs
  lab_fail "Slurm nodes not idle after 60 s"
}

# sl_state NODE: "STATE|REASON" as sinfo prints them.
sl_state() { sinfo -h -N -n "$1" -o '%T|%E'; }
# sl_idle NODE: idle and not drained. A trailing '*' (slurmd has not answered slurmctld's last
# ping: a loaded host's guest, seen in CI right after a resume) is not what drain or resume
# decide, so it counts as idle.
sl_idle() {
  local st
  st=$(sl_state "$1")
  [[ "$st" == idle\|* || "$st" == idle\*\|* ]]
}
