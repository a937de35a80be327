#!/usr/bin/env bash
# lab: nodes=4 timeout=120
# The lab boots N nodes, each with an rxe device on its own veth, its own address, an ACTIVE
# port (per ibv_devinfo) and the RoCE v2 IPv4 GID at index 1.
# shellcheck source=tests/lab/lib.sh
source "$(dirname "$0")/lib.sh"

((${#LAB_NODE_LIST[@]} == 4)) || lab_fail "expected 4 nodes, LAB_NODES='$LAB_NODES'"
((${#LAB_IP_LIST[@]} == 4 && ${#LAB_DEV_LIST[@]} == 4 && ${#LAB_NETDEV_LIST[@]} == 4)) ||
  lab_fail "LAB_NODE_IPS/DEVS/NETDEVS do not have one entry per node"

devinfo=$(ibv_devinfo) || lab_fail "ibv_devinfo failed"
for node in "${LAB_NODE_LIST[@]}"; do
  dev=$(lab_dev "$node") ip=$(lab_ip "$node") netdev=$(lab_netdev "$node")
  # ibv_devinfo: this device's block shows an active port.
  state=$(awk -v d="$dev" '$1 == "hca_id:" {cur = $2} cur == d && $1 == "state:" {print $2}' <<<"$devinfo")
  [[ "$state" == PORT_ACTIVE ]] || lab_fail "$node: ibv_devinfo shows $dev state '${state:-none}'"
  # The rxe device sits on the node's own interface, which holds the node's address.
  ndev=$(<"/sys/class/infiniband/$dev/ports/1/gid_attrs/ndevs/1")
  [[ "$ndev" == "$netdev" ]] || lab_fail "$node: $dev GID 1 is on '$ndev', expected $netdev"
  gid=$(<"/sys/class/infiniband/$dev/ports/1/gids/1")
  IFS=. read -r a b c d <<<"$ip"
  want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
  [[ "$gid" == "$want" ]] || lab_fail "$node: $dev GID 1 is $gid, expected $want ($ip)"
  type=$(<"/sys/class/infiniband/$dev/ports/1/gid_attrs/types/1")
  [[ "$type" == "RoCE v2" ]] || lab_fail "$node: $dev GID 1 type '$type', expected RoCE v2"
  addrs=$(ip -4 -o addr show dev "$netdev") || lab_fail "$node: no interface $netdev"
  [[ "$addrs" == *" $ip/24 "* ]] || lab_fail "$node: $netdev does not hold $ip/24: $addrs"
  echo "ok $node: $dev on $netdev, $ip, PORT_ACTIVE, GID[1] $gid"
done
# The host sees COMMAND's lines as they are written, not when it exits: a
# stdio program (tr) writing to the io share while it still runs.
io=/run/lab/io
[[ -f "$io/stdout" ]] || lab_fail "no $io/stdout: the lab's guest layout changed"
{ echo "forwarded line"; sleep 4; } | tr '[:lower:]' '[:upper:]' &
sleep 2
grep -q '^FORWARDED LINE$' "$io/stdout" ||
  lab_fail "a running program's line is not in $io/stdout after 2 s (stdout not line-buffered)"
wait
echo "ok: a running program's lines reach the host as written"
echo "PASS: ${#LAB_NODE_LIST[@]} nodes ready"
