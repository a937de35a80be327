#!/usr/bin/env python3
"""Builds the synthetic preflight trees under tests/testdata/preflight/.

Each tree is a filesystem root (sys/, proc/, etc/, dev/, lib/, ...) laid out
as the Linux kernel lays out sysfs and procfs (treelib.py cites the format of
every file), for `gdrbench-agent preflight --fs-root DIR` and the unit tests.
Trees come from published server layouts (servers.py; README.md cites the
sources) or from one healthy single-GPU node with one fault injected each.
Re-run after editing:  python3 generate.py
The script removes and rewrites only the trees it owns (names in TREES).
"""
import os
import shutil
import sys

sys.dont_write_bytecode = True  # keep the testdata folder free of __pycache__
import servers  # noqa: E402
from treelib import (KERNEL, MODULE_SIG_STRING, TAINT_E, TAINT_O, TAINT_P, ZERO_COUNTERS,  # noqa: E402
                     Tree, bridge, efi_byte_variable, gpu, rdma_nic)

DRIVER = "570.133.20"
DRIVER_LINE = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  %s  "
               "Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Mar 11 2025\n"
               "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n" % DRIVER)
NVIDIA_MODULES = ("nvidia", "nvidia_uvm", "nvidia_modeset")
# Kernel log lines that every boot of such a node prints (benign), and the
# driver/OFED mismatch as public reports quote it (NVIDIA/gpu-operator#2868,
# Mellanox/nv_peer_memory#8): the module loader's own wording
# ("%s: disagrees about version of symbol %s", "%s: Unknown symbol %s (err %d)").
BOOT_LOG = ("[    0.000000] Linux version %s (buildd@lcy02-amd64-010) (x86_64-linux-gnu-gcc-12)\n"
            "[    4.812345] mlx5_core 0000:04:00.0: firmware version: 28.39.1002\n"
            "[    9.301234] nvidia-nvlink: Nvlink Core is being initialized, major device number 511\n"
            % KERNEL)
PEERMEM_MISMATCH = (
    "[   17.216020] nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client\n"
    "[   17.216024] nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)\n"
    "[   17.216031] nvidia_peermem: disagrees about version of symbol ib_unregister_peer_memory_client\n"
    "[   17.216033] nvidia_peermem: Unknown symbol ib_unregister_peer_memory_client (err -22)\n")


def software(t, peermem_loaded=True, peermem_persisted=True, peermem_installed=True,
             peermem_signed=True, secure_boot=False, lockdown="none", module_taint="PO",
             container=False, dev_infiniband=True, n_uverbs=1, iommu=None, memlock="unlimited",
             dmesg=BOOT_LOG, hostname="node1", taint_source="sysfs"):
    t.write("/etc/hostname", hostname + "\n")
    t.write("/proc/driver/nvidia/version", DRIVER_LINE)
    t.write("/proc/sys/kernel/osrelease", KERNEL + "\n")
    t.write("/boot/config-%s" % KERNEL, "CONFIG_DMA_SHARED_BUFFER=y\n")
    cmdline = "BOOT_IMAGE=/vmlinuz-%s root=/dev/nvme0n1p2 ro" % KERNEL
    if iommu:
        cmdline += " intel_iommu=on"
    t.write("/proc/cmdline", cmdline + "\n")
    kernel_taint = 0
    loaded = NVIDIA_MODULES + (("nvidia_peermem",) if peermem_loaded else ())
    for m in loaded:
        t.write("/sys/module/%s/version" % m, DRIVER + "\n")
        t.write("/sys/module/%s/initstate" % m, "live\n")
        if taint_source == "sysfs":
            t.write("/sys/module/%s/taint" % m, module_taint + "\n")
        kernel_taint |= (TAINT_P if "P" in module_taint else 0) | (TAINT_O if "O" in module_taint else 0) | (
            TAINT_E if "E" in module_taint else 0)
    if taint_source != "none":
        t.write("/proc/sys/kernel/tainted", "%d\n" % kernel_taint)
    if taint_source == "proc":
        t.write("/proc/modules", proc_modules(loaded, module_taint))
    t.write("/sys/module/ib_uverbs/initstate", "live\n")
    # modules.dep as depmod writes it; DKMS installs into updates/dkms.
    dep = ("kernel/drivers/infiniband/core/ib_core.ko.zst:\n"
           "kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko.zst:\n"
           "updates/dkms/nvidia.ko:\n")
    if peermem_installed:
        dep += "updates/dkms/nvidia-peermem.ko: updates/dkms/nvidia.ko kernel/drivers/infiniband/core/ib_core.ko.zst\n"
        body = b"\x7fELF" + b"\0" * 60  # the module's tail is all that is kept (capture.h)
        t.write("/lib/modules/%s/updates/dkms/nvidia-peermem.ko" % KERNEL,
                body + (b"\0" * 16 + MODULE_SIG_STRING if peermem_signed else b""), "wb")
    t.write("/lib/modules/%s/modules.dep" % KERNEL, dep)
    t.write("/etc/modules", "# /etc/modules: kernel modules to load at boot time.\n")
    if peermem_persisted:
        t.write("/etc/modules-load.d/nvidia-peermem.conf", "nvidia-peermem\n")
    t.write("/etc/modules-load.d/modules.conf", "# nothing else\n")
    t.write("/usr/lib/x86_64-linux-gnu/libcuda.so." + DRIVER, "")
    t.link("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so." + DRIVER)
    t.write("/var/lib/dpkg/status",
            "Package: libibverbs1\nStatus: install ok installed\nVersion: 50.0-2ubuntu0.2\n\n"
            "Package: rdma-core\nStatus: install ok installed\nVersion: 50.0-2ubuntu0.2\n\n")
    efi_byte_variable(t, "SecureBoot", 1 if secure_boot else 0)
    efi_byte_variable(t, "SetupMode", 0)
    levels = ["none", "integrity", "confidentiality"]
    t.write("/sys/kernel/security/lockdown",
            " ".join("[%s]" % l if l == lockdown else l for l in levels) + "\n")
    t.write("/gdrbench-capture/dmesg", dmesg)
    t.write("/proc/self/limits",
            "Limit                     Soft Limit           Hard Limit           Units     \n"
            "Max locked memory         %-20s %-20s bytes     \n" % (memlock, memlock))
    t.write("/proc/self/status", "Name:\tgdrbench-agent\nCapEff:\t0000000000000000\n")
    t.write("/proc/1/cgroup", "0::/kubepods/pod1234/abcd\n" if container else "0::/init.scope\n")
    if container:
        t.write("/.dockerenv", "")
    if dev_infiniband:
        for i in range(n_uverbs):
            t.write("/dev/infiniband/uverbs%d" % i, "")
        t.write("/dev/infiniband/rdma_cm", "")
    for node in ("nvidiactl", "nvidia0", "nvidia-uvm"):
        t.write("/dev/" + node, "")
    if iommu:
        t.link("/sys/class/iommu/dmar0", "../../devices/virtual/iommu/dmar0")
        t.write("/sys/devices/virtual/iommu/dmar0/intel-iommu/version", "1:0\n")


def proc_modules(loaded, module_taint):
    """/proc/modules as kernel/module/procfs.c m_show() prints it (with
    CONFIG_MODULE_UNLOAD): "name size refcount users, state 0xaddress", then
    " (LETTERS)" only when the module has taints (module_flags()); "-" when no
    module uses it. Taint letters: Documentation/admin-guide/tainted-kernels.rst
    (P proprietary, O out-of-tree, E unsigned). ib_uverbs is in-tree: untainted."""
    users = {"nvidia": [m for m in ("nvidia_uvm", "nvidia_modeset", "nvidia_peermem") if m in loaded]}
    lines, addr = [], 0xffffffffc0400000
    for m, size in (("nvidia", 14299136), ("nvidia_uvm", 2088960), ("nvidia_modeset", 1720320),
                    ("nvidia_peermem", 16384)):
        if m not in loaded:
            continue
        u = users.get(m, [])
        lines.append("%s %d %d %s Live 0x%x (%s)" % (m, size, len(u), "".join(x + "," for x in u) or "-",
                                                     addr, module_taint))
        addr += 0x1000000
    lines.append("ib_uverbs 200704 0 - Live 0x%x" % addr)
    return "\n".join(lines) + "\n"


def two_socket_sys():
    """A 2-socket server with the GPU in a CPU0 slot and its only NIC in a
    CPU1 slot: the pair crosses the socket interconnect (SYS)."""
    t = Tree("two-socket-sys")
    bridge(t, "/sys/devices/pci0000:00/0000:00:03.0", 0)
    gpu(t, "/sys/devices/pci0000:00/0000:00:03.0/0000:3b:00.0", 0)
    bridge(t, "/sys/devices/pci0000:80/0000:80:02.0", 1)
    rdma_nic(t, "/sys/devices/pci0000:80/0000:80:02.0/0000:86:00.0", "mlx5_0", 1,
             link_layer="Ethernet", netdev="ens6f0np0", ipv4="10.1.0.7", counters=ZERO_COUNTERS)
    software(t)


# --- one healthy node, one fault each ----------------------------------------

def healthy_node(name, **kw):
    """GPU and a RoCE ConnectX under one PCIe switch on socket 0."""
    t = Tree(name)
    nic_link = kw.pop("nic_link", ("32.0", 16, "32.0", 16))
    gpu_link = kw.pop("gpu_link", ("32.0", 16, "32.0", 16))
    acs = kw.pop("acs", 0)
    state = kw.pop("state", 4)
    phys = kw.pop("phys", 5)
    ipv4 = kw.pop("ipv4", "10.0.0.11")
    mtu = kw.pop("mtu", 9000)
    counters = kw.pop("counters", ZERO_COUNTERS)
    rp = "/sys/devices/pci0000:00/0000:00:01.0"
    up = rp + "/0000:01:00.0"
    bridge(t, rp, 0)
    bridge(t, up, 0)
    bridge(t, up + "/0000:02:00.0", 0, acs=acs)
    bridge(t, up + "/0000:02:01.0", 0, acs=acs)
    gpu(t, up + "/0000:02:00.0/0000:03:00.0", 0, link=gpu_link)
    rdma_nic(t, up + "/0000:02:01.0/0000:04:00.0", "mlx5_0", 0, link_layer="Ethernet",
             state=state, phys=phys, netdev="ens1f0np0", ipv4=ipv4, mtu=mtu, link=nic_link,
             counters=counters)
    iommu = kw.get("iommu")
    software(t, **kw)
    if iommu:
        for bdf, kind in (("0000:03:00.0", iommu), ("0000:04:00.0", iommu)):
            group = "/sys/kernel/iommu_groups/%d" % (3 if bdf.endswith("03:00.0") else 4)
            t.write(group + "/type", kind + "\n")
            dev = "/sys" + os.readlink(t.root + "/sys/bus/pci/devices/" + bdf)[len("../../.."):]
            t.link(dev + "/iommu_group", "../" * dev.count("/") + group[1:])
    return t


def wrong_guid_secure_boot():
    """Secure Boot on, but written under the GUID the first preflight looked
    for (e0f9ae1d1a2d is not EFI_GLOBAL_VARIABLE): no kernel writes that
    file, so a correct reader sees no SecureBoot variable."""
    t = healthy_node("secure-boot-wrong-guid")
    t.remove("/sys/firmware/efi/efivars")
    efi_byte_variable(t, "SecureBoot", 1, guid="8be4df61-93ca-11d2-aa0d-e0f9ae1d1a2d")


ERRORS = dict(ZERO_COUNTERS, symbol_error=112, link_error_recovery=3)

TREES = {
    "two-socket-sys": two_socket_sys,
    "healthy": lambda: healthy_node("healthy"),
    "fault-peermem-not-persisted": lambda: healthy_node("fault-peermem-not-persisted",
                                                        peermem_persisted=False),
    "fault-peermem-not-loaded": lambda: healthy_node("fault-peermem-not-loaded", peermem_loaded=False),
    "fault-peermem-not-installed": lambda: healthy_node("fault-peermem-not-installed",
                                                        peermem_loaded=False, peermem_installed=False),
    "fault-peermem-symbol-mismatch": lambda: healthy_node(
        "fault-peermem-symbol-mismatch", peermem_loaded=False, dmesg=BOOT_LOG + PEERMEM_MISMATCH),
    "secure-boot-signed": lambda: healthy_node("secure-boot-signed", secure_boot=True,
                                               lockdown="integrity", module_taint="PO"),
    "fault-secure-boot-unsigned": lambda: healthy_node(
        "fault-secure-boot-unsigned", secure_boot=True, lockdown="none", module_taint="POE",
        peermem_loaded=False, peermem_signed=False),
    "secure-boot-wrong-guid": wrong_guid_secure_boot,
    # A partial capture (an older agent's): no /sys/module/*/taint files; the
    # taint letters are only in /proc/modules, or nowhere.
    "secure-boot-taint-in-proc-modules": lambda: healthy_node(
        "secure-boot-taint-in-proc-modules", secure_boot=True, lockdown="integrity", module_taint="PO",
        taint_source="proc"),
    "fault-secure-boot-unsigned-in-proc-modules": lambda: healthy_node(
        "fault-secure-boot-unsigned-in-proc-modules", secure_boot=True, lockdown="none", module_taint="POE",
        taint_source="proc"),
    "secure-boot-taint-unreadable": lambda: healthy_node(
        "secure-boot-taint-unreadable", secure_boot=True, lockdown="integrity", module_taint="PO",
        taint_source="none"),
    "fault-port-down": lambda: healthy_node("fault-port-down", state=1, phys=3),
    "fault-nic-x8": lambda: healthy_node("fault-nic-x8", nic_link=("32.0", 8, "32.0", 16)),
    "fault-nic-gen-low": lambda: healthy_node("fault-nic-gen-low", nic_link=("16.0", 16, "32.0", 16)),
    "fault-container-no-infiniband": lambda: healthy_node("fault-container-no-infiniband",
                                                          container=True, dev_infiniband=False),
    "gpu-idle-link-speed": lambda: healthy_node("gpu-idle-link-speed",
                                                gpu_link=("2.5", 16, "32.0", 16)),
    "fault-gpu-link-width": lambda: healthy_node("fault-gpu-link-width",
                                                 gpu_link=("32.0", 8, "32.0", 16)),
    "fault-acs": lambda: healthy_node("fault-acs", acs=0x001D),
    "fault-no-roce-v2-gid": lambda: healthy_node("fault-no-roce-v2-gid", ipv4=None),
    "fault-mtu-1500": lambda: healthy_node("fault-mtu-1500", mtu=1500),
    "fault-iommu-dma": lambda: healthy_node("fault-iommu-dma", iommu="DMA-FQ"),
    "fault-memlock": lambda: healthy_node("fault-memlock", memlock="65536"),
    "fault-link-errors": lambda: healthy_node("fault-link-errors", counters=ERRORS),
}
TREES.update(servers.trees(software))

if __name__ == "__main__":
    for old in ("fault-pcie-degraded", "fault-secure-boot"):  # renamed trees
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), old)
        if os.path.isdir(path):
            shutil.rmtree(path)
    for name, build in TREES.items():
        build()
        print("wrote", name)
