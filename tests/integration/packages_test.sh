#!/usr/bin/env bash
# shellcheck disable=SC2016  # dpkg-query formats are single-quoted on purpose
# The .debs (CPack) installed with apt into a clean Debian 12 root, and the container image
# made from that root, for real: deploy/container/build-image unpacks the cached clean root
# (deploy/packaging/debian12-root, made by install-deps from the Debian archive), runs
# `apt-get install ./gdrbench-agent_*.deb ./gdrbench_*.deb ./gdrbench-server_*.deb` in it (offline:
# the dependencies come from the root's apt cache), packs it and imports it with podman.
# This machine cannot run containers (crun's setrlimit is refused), so the image's binaries
# run through chroot into its root filesystem: --version, the units and the conffiles that
# dpkg registered, what the maintainer scripts did (the system user gdrbench, the agent and
# server units enabled as dh_installsystemd does, the sweep timer not), `systemd-analyze verify`
# of every installed unit with nothing filtered (the units as installed, their ExecStart
# pointed into the root, the user present there), and a packaged agent serving the packaged
# CLI on loopback.
# Usage: packages_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=${1:?build dir} src=${2:?source dir}
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "[$((SECONDS))s] $*"; }

[[ $(id -u) == 0 ]] || fail "needs root (chroot, mount)"
base=$("$src/deploy/packaging/debian12-root" --print-path) || fail "no cached clean root"
work=$(mktemp -d)
agent_pid=""
cleanup() {
  [[ -n "$agent_pid" ]] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
  for m in proc dev; do mountpoint -q "$work/root/$m" && umount -l "$work/root/$m"; done
  [[ -d "$work/podman" ]] && podman --root "$work/podman" --runroot "$work/podman-run" \
    --storage-driver vfs rmi -a -f >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

step "cpack: the .debs"
cpack --config "$build/CPackConfig.cmake" -B "$work/debs" >"$work/cpack.log" 2>&1 ||
  { tail -n 20 "$work/cpack.log"; fail "cpack failed"; }
rm -rf "$work/debs/_CPack_Packages"
ls "$work/debs"
for d in "$work"/debs/*.deb; do echo "  $(basename "$d"): Depends: $(dpkg-deb -f "$d" Depends)"; done

step "build-image: clean root from $base, apt-get install the .debs offline, podman import"
export PODMAN_ARGS="--root $work/podman --runroot $work/podman-run --storage-driver vfs"
"$src/deploy/container/build-image" --debs "$work/debs" --base "$base" --out "$work/image.tar" \
  --keep-root "$work/root" --import --tag localhost/gdrbench:test || fail "build-image failed"
r=$work/root

step "the installed packages, via chroot"
for p in gdrbench-agent gdrbench gdrbench-server; do
  st=$(chroot "$r" dpkg-query -W -f='${Status} ${Version}' "$p") || fail "$p is not installed"
  echo "  $p: $st"
  [[ "$st" == "install ok installed "* ]] || fail "$p: $st"
done
want=$("$build/bin/gdrbench" --version)
for b in gdrbench gdrbench-agent gdrbench-server; do
  v=$(chroot "$r" "/usr/bin/$b" --version) || fail "chroot $b --version failed"
  echo "  chroot $b --version: $v"
  [[ "$v" == "$want" ]] || fail "$b --version says '$v', the build says '$want'"
done
unit=$r/lib/systemd/system/gdrbench-agent.service
[[ -f "$unit" ]] || fail "no /lib/systemd/system/gdrbench-agent.service"
grep -qx 'ExecStart=/usr/bin/gdrbench-agent --config /etc/gdrbench/agent.conf' "$unit" ||
  fail "the unit's ExecStart: $(grep ExecStart "$unit")"
conf=$(chroot "$r" dpkg-query -W -f='${Conffiles}' gdrbench-agent)
echo "  conffiles: $conf"
[[ "$conf" == *"/etc/gdrbench/agent.conf "* ]] || fail "agent.conf is not a conffile"
[[ -x "$r/usr/share/gdrbench/slurm/gdrbench-sweep.sbatch" ]] || fail "no Slurm sbatch script"
sunit=$r/lib/systemd/system/gdrbench-server.service
grep -qx 'ExecStart=/usr/bin/gdrbench-server --config /etc/gdrbench/server.conf' "$sunit" ||
  fail "gdrbench-server.service: $(grep ExecStart "$sunit" 2>&1)"
sconf=$(chroot "$r" dpkg-query -W -f='${Conffiles}' gdrbench-server)
[[ "$sconf" == *"/etc/gdrbench/server.conf "* ]] || fail "server.conf is not a conffile"

step "maintainer scripts: the gdrbench user, enabled units"
for d in "$work"/debs/*.deb; do
  scripts=$(dpkg-deb -I "$d" | grep -oE '\b(postinst|prerm|postrm)\b' | sort -u | tr '\n' ' ')
  echo "  $(basename "$d"): $scripts"
  [[ "$scripts" == "postinst postrm prerm " ]] || fail "$(basename "$d") lacks maintainer scripts: '$scripts'"
done
pw=$(chroot "$r" getent passwd gdrbench) || fail "no user gdrbench in the root"
echo "  passwd: $pw"
[[ "$pw" == *":/nonexistent:/usr/sbin/nologin" ]] || fail "gdrbench is not a system user without home and shell: $pw"
chroot "$r" getent group gdrbench >/dev/null || fail "no group gdrbench"
for u in multi-user.target.wants/gdrbench-agent.service multi-user.target.wants/gdrbench-server.service; do
  [[ -L "$r/etc/systemd/system/$u" ]] || fail "postinst did not enable $u"
done
[[ ! -e "$r/etc/systemd/system/timers.target.wants/gdrbench-sweep.timer" ]] || fail "the sweep timer was enabled"
conf=$(chroot "$r" dpkg-query -W -f='${Conffiles}' gdrbench)
[[ "$conf" == *"/etc/gdrbench/sweep.conf "* ]] || fail "sweep.conf is not a conffile of gdrbench"

step "systemd-analyze verify: the installed units, nothing filtered"
mkdir -p "$work/units"
for u in gdrbench-agent.service gdrbench-server.service gdrbench-sweep.service gdrbench-sweep.timer; do
  [[ -f "$r/lib/systemd/system/$u" ]] || fail "no /lib/systemd/system/$u"
  # The binaries are the root's: ExecStart names them inside it.
  sed "s#^ExecStart=/usr/bin/#ExecStart=$r/usr/bin/#" "$r/lib/systemd/system/$u" >"$work/units/$u"
done
grep -qx "User=gdrbench" "$work/units/gdrbench-sweep.service" || fail "the sweep unit does not run as gdrbench"
out=$(systemd-analyze verify --man=no "$work"/units/* 2>&1) || fail "systemd-analyze verify: $out"
[[ -z "$out" ]] || fail "systemd-analyze verify said: $out"
echo "  ok: 4 units"

step "the packaged agent serves the packaged CLI (chroot, loopback)"
{ mount -t proc proc "$r/proc" && mount --bind /dev "$r/dev"; } || fail "cannot mount /proc, /dev in the root"
chroot "$r" /usr/bin/gdrbench-agent --insecure --listen 127.0.0.1:0 --port-file /tmp/port \
  >"$work/agent.log" 2>&1 &
agent_pid=$!
for _ in $(seq 1 100); do [[ -s "$r/tmp/port" ]] && break; sleep 0.1; done
[[ -s "$r/tmp/port" ]] || { cat "$work/agent.log"; fail "the packaged agent did not start"; }
info=$(chroot "$r" /usr/bin/gdrbench node-info --insecure --agent "127.0.0.1:$(<"$r/tmp/port")") ||
  fail "gdrbench node-info against the packaged agent failed"
echo "$info" | head -n 3 | sed 's/^/  /'
[[ "$info" == *"Node "* ]] || fail "node-info printed no node report"
kill "$agent_pid" && wait "$agent_pid"
agent_pid=""

step "the image in podman's store"
# shellcheck disable=SC2086
ep=$(podman $PODMAN_ARGS image inspect --format '{{json .Config.Entrypoint}} {{json .Config.Cmd}}' \
  localhost/gdrbench:test) || fail "podman image inspect failed"
echo "  entrypoint, cmd: $ep"
[[ "$ep" == '["/usr/bin/gdrbench-agent"] ["--config","/etc/gdrbench/agent.conf"]' ]] ||
  fail "image config: $ep"
echo "image: built from the cached Debian 12 root and the .debs, imported with podman;" \
  "binaries run through chroot into its root filesystem (containers cannot run here)"
echo "1 passed, 0 failed"
