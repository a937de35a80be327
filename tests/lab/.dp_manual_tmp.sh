#!/bin/bash
source tests/lab/lib.sh
source tests/lab/datapath_lib.sh
DP_LOG_LEVEL=debug
dp_start_agent node1
dp_start_agent node2
for i in 1 2; do
lab_log start
dp_pair node2 node1 --sizes 64K --iterations 100 --qps 2; echo "rc=$?"
lab_log end
done
dp_show
dp_agent_logs node1 node2
