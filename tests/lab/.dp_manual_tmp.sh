#!/bin/bash
source tests/lab/lib.sh
source tests/lab/datapath_lib.sh
dp_start_agent node1
dp_start_agent node2
echo "agents: ${DP_ADDR[node1]} ${DP_ADDR[node2]}"
time dp_pair node2 node1 --sizes 2,64K --iterations 200 --verify; echo "rc=$?"
dp_show
dp_agent_logs node1 node2
