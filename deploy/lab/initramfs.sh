# shellcheck shell=bash
# Sourced by deploy/lab/lab. Builds the lab's initramfs from packages already on the machine:
# busybox-static, the kernel's own modules needed to reach the host root over virtio 9p
# (resolved with `modprobe --show-depends`), and deploy/lab/guest/init as /init.
# Nothing is downloaded. Takes well under a second.

# lab_initramfs_modules KVER: prints the .ko paths to load, dependencies first, each once.
lab_initramfs_modules() {
  local kver=$1 m line
  local -A seen=()
  for m in virtio_pci 9pnet_virtio 9p; do
    while read -r line; do
      case "$line" in
        insmod\ *) line=${line#insmod }; line=${line%% *} ;;
        builtin\ *) continue ;;
        *) continue ;;
      esac
      [[ -n "${seen[$line]:-}" ]] && continue
      seen[$line]=1
      echo "$line"
    done < <(modprobe -S "$kver" --show-depends "$m" 2>/dev/null) || return 1
  done
}

# lab_build_initramfs KVER INIT OUT: writes a newc cpio archive to OUT. Returns non-zero with
# one line on stderr naming the cause.
lab_build_initramfs() {
  local kver=$1 init=$2 out=$3
  local root mods ko base
  root=$(mktemp -d "${out}.root.XXXXXX") || return 1
  mkdir -p "$root"/{bin,dev,proc,sys,modules,newroot,io}
  cp /bin/busybox "$root/bin/busybox"
  cp "$init" "$root/init"
  chmod 755 "$root/init" "$root/bin/busybox"
  mods=$(lab_initramfs_modules "$kver")
  if [[ -z "$mods" ]]; then
    echo "cannot resolve the virtio/9p modules of kernel $kver (modprobe --show-depends)" >&2
    rm -rf "$root"; return 1
  fi
  : >"$root/modules.order"
  while read -r ko; do
    base=$(basename "$ko")
    case "$ko" in
      *.ko) cp "$ko" "$root/modules/$base" ;;
      *.ko.xz) base=${base%.xz}; xz -dc "$ko" >"$root/modules/$base" ;;
      *.ko.zst) base=${base%.zst}; zstd -qdc "$ko" >"$root/modules/$base" ;;
      *.ko.gz) base=${base%.gz}; gzip -dc "$ko" >"$root/modules/$base" ;;
      *) echo "unsupported module file $ko" >&2; rm -rf "$root"; return 1 ;;
    esac || { echo "cannot copy module $ko" >&2; rm -rf "$root"; return 1; }
    echo "$base" >>"$root/modules.order"
  done <<<"$mods"
  (cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) >"$out" || {
    echo "cpio failed building the initramfs" >&2; rm -rf "$root"; return 1; }
  rm -rf "$root"
}
