#!/usr/bin/env bash
# GDRBENCH_AGENT_WRAPPER for the Slurm lab test: in the lab every node shares one kernel, so
# the agent a Slurm task starts on node K must own only node K's rxe device.
source "$(dirname "$0")/lib.sh"
dev=$(lab_dev "$SLURMD_NODENAME") || exit 1
exec "$@" --devices "$dev"
