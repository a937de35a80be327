#!/usr/bin/env python3
"""Builds the synthetic preflight trees under tests/testdata/preflight/.

Each tree is a filesystem root (sys/, proc/, etc/, dev/, ...) laid out as the
Linux kernel lays out sysfs and procfs, for `gdrbench-agent preflight
--fs-root DIR` and the unit tests. Trees come from published server layouts
(see README.md for the sources) or from one healthy single-GPU node with one
fault injected each. Re-run after editing:  python3 generate.py
The script removes and rewrites only the trees it owns (names in TREES).
"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = "570.133.20"
DRIVER_LINE = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  %s  "
               "Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Mar 11 2025\n"
               "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n" % DRIVER)
SECURE_BOOT_GUID = "8be4df61-93ca-11d2-aa0d-e0f9ae1d1a2d"


class Tree:
    def __init__(self, name):
        self.root = os.path.join(HERE, name)
        if os.path.exists(self.root):
            shutil.rmtree(self.root)
        os.makedirs(self.root)

    def write(self, path, content, mode="w"):
        full = self.root + path
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, mode) as f:
            f.write(content)

    def link(self, path, target):
        full = self.root + path
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if os.path.lexists(full):
            os.remove(full)
        os.symlink(target, full)

    def remove(self, path):
        full = self.root + path
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full)
        elif os.path.lexists(full):
            os.remove(full)


def config_space(acs_control=None):
    """4 KiB PCIe config space; with an ACS extended capability at 0x100 when
    acs_control is not None (capability 0x005f: SV RR CR UF EC DT)."""
    cfg = bytearray(4096)
    if acs_control is not None:
        struct.pack_into("<I", cfg, 0x100, 0x000D | (1 << 16))  # id ACS, v1, next 0
        struct.pack_into("<HH", cfg, 0x104, 0x005F, acs_control)
    return bytes(cfg)


def pci_device(t, chain, bdf_path, cls, vendor, device, numa, link=None, acs=None):
    """chain: '/sys/devices/pci0000:00/0000:00:01.0/...'; writes the
    attribute files and the /sys/bus/pci/devices symlink."""
    bdf = chain.rsplit("/", 1)[1]
    t.write(chain + "/class", "0x%06x\n" % cls)
    t.write(chain + "/vendor", "0x%04x\n" % vendor)
    t.write(chain + "/device", "0x%04x\n" % device)
    t.write(chain + "/numa_node", "%d\n" % numa)
    if link:
        cur_gts, cur_w, max_gts, max_w = link
        t.write(chain + "/current_link_speed", "%s GT/s PCIe\n" % cur_gts)
        t.write(chain + "/current_link_width", "%d\n" % cur_w)
        t.write(chain + "/max_link_speed", "%s GT/s PCIe\n" % max_gts)
        t.write(chain + "/max_link_width", "%d\n" % max_w)
    if acs is not None:  # bridges: the ACS check reads their extended config space
        t.write(chain + "/config", config_space(acs), "wb")
    t.link("/sys/bus/pci/devices/" + bdf, "../../.." + chain[len("/sys"):])
    return bdf


def bridge(t, chain, numa, acs=0):
    return pci_device(t, chain, None, 0x060400, 0x1000, 0xC030, numa, ("32.0", 16, "32.0", 16), acs)


def gpu(t, chain, numa, link=("32.0", 16, "32.0", 16)):
    return pci_device(t, chain, None, 0x030200, 0x10DE, 0x2330, numa, link)


def rdma_nic(t, chain, name, numa, link_layer="InfiniBand", state=4, phys=5,
             netdev=None, ipv4=None, mtu=9000, link=("32.0", 16, "32.0", 16)):
    cls = 0x020700 if link_layer == "InfiniBand" else 0x020000
    pci_device(t, chain, None, cls, 0x15B3, 0x1021, numa, link)
    ib = chain + "/infiniband/" + name
    t.write(ib + "/fw_ver", "28.39.1002\n")
    t.write(ib + "/node_guid", "a088:c203:0047:1a2c\n")
    t.write(ib + "/node_type", "1: CA\n")
    t.link(ib + "/device", "../../../" + chain.rsplit("/", 1)[1])
    t.link("/sys/class/infiniband/" + name, "../../devices" + ib[len("/sys/devices"):])
    port = ib + "/ports/1"
    states = {1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE"}
    phys_states = {2: "Polling", 3: "Disabled", 5: "LinkUp"}
    t.write(port + "/state", "%d: %s\n" % (state, states[state]))
    t.write(port + "/phys_state", "%d: %s\n" % (phys, phys_states[phys]))
    t.write(port + "/link_layer", link_layer + "\n")
    t.write(port + "/rate", ("400 Gb/sec (4X NDR)\n" if link_layer == "InfiniBand"
                             else "200 Gb/sec (4X HDR)\n"))
    gids = ["fe80:0000:0000:0000:a288:c2ff:fe47:1a2c"]
    types = ["IB/RoCE v1"]
    if link_layer == "Ethernet":
        gids = gids * 2
        types = ["IB/RoCE v1", "RoCE v2"]
        if ipv4:
            mapped = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(
                int(x) for x in ipv4.split("."))
            gids += [mapped, mapped]
            types += ["IB/RoCE v1", "RoCE v2"]
    for i in range(8):
        t.write(port + "/gids/%d" % i, (gids[i] if i < len(gids)
                                         else "0000:0000:0000:0000:0000:0000:0000:0000") + "\n")
        if i < len(gids):
            t.write(port + "/gid_attrs/types/%d" % i, types[i] + "\n")
            if netdev:
                t.write(port + "/gid_attrs/ndevs/%d" % i, netdev + "\n")
    if netdev:
        net = chain + "/net/" + netdev
        t.write(net + "/mtu", "%d\n" % mtu)
        t.write(net + "/operstate", "up\n")
        t.link("/sys/class/net/" + netdev, "../../devices" + net[len("/sys/devices"):])


def software(t, peermem_loaded=True, peermem_persisted=True, secure_boot=False,
             container=False, dev_infiniband=True, n_uverbs=1, iommu=None, memlock="unlimited"):
    t.write("/proc/driver/nvidia/version", DRIVER_LINE)
    t.write("/proc/sys/kernel/osrelease", "6.8.0-60-generic\n")
    t.write("/boot/config-6.8.0-60-generic", "CONFIG_DMA_SHARED_BUFFER=y\n")
    cmdline = "BOOT_IMAGE=/vmlinuz-6.8.0-60-generic root=/dev/nvme0n1p2 ro"
    if iommu:
        cmdline += " intel_iommu=on"
    t.write("/proc/cmdline", cmdline + "\n")
    t.write("/sys/module/nvidia/version", DRIVER + "\n")
    t.write("/sys/module/nvidia/initstate", "live\n")
    t.write("/sys/module/ib_uverbs/initstate", "live\n")
    if peermem_loaded:
        t.write("/sys/module/nvidia_peermem/version", DRIVER + "\n")
        t.write("/sys/module/nvidia_peermem/initstate", "live\n")
    t.write("/etc/modules", "# /etc/modules: kernel modules to load at boot time.\n")
    if peermem_persisted:
        t.write("/etc/modules-load.d/nvidia-peermem.conf", "nvidia-peermem\n")
    t.write("/etc/modules-load.d/modules.conf", "# nothing else\n")
    t.write("/usr/lib/x86_64-linux-gnu/libcuda.so." + DRIVER, "")
    t.link("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so." + DRIVER)
    t.write("/var/lib/dpkg/status",
            "Package: libibverbs1\nStatus: install ok installed\nVersion: 50.0-2ubuntu0.2\n\n"
            "Package: rdma-core\nStatus: install ok installed\nVersion: 50.0-2ubuntu0.2\n\n")
    efi = "/sys/firmware/efi/efivars/SecureBoot-" + SECURE_BOOT_GUID
    t.write(efi, b"\x06\x00\x00\x00" + (b"\x01" if secure_boot else b"\x00"), "wb")
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


# --- published layouts -----------------------------------------------------

# DGX H100: NIC names and PCI buses from the DGX H100 User Guide's network
# port table (OSFP port -> ConnectX -> GPU -> ibp<bus>s0 -> mlx5_N); GPU buses
# as DGX H100 systems report them. Each GPU shares a PCIe switch with its
# ConnectX-7; every switch hangs off its own host bridge (one per CPU IIO
# stack); GPUs 0-3 and their NICs on socket 0, 4-7 on socket 1.
DGX_H100 = [  # (gpu index, gpu bus, nic, nic bus, numa)
    (0, 0x1B, "mlx5_0", 0x18, 0), (1, 0x43, "mlx5_3", 0x40, 0),
    (2, 0x52, "mlx5_4", 0x4F, 0), (3, 0x61, "mlx5_5", 0x5E, 0),
    (4, 0x9D, "mlx5_6", 0x9A, 1), (5, 0xC3, "mlx5_9", 0xC0, 1),
    (6, 0xD1, "mlx5_10", 0xCE, 1), (7, 0xDF, "mlx5_11", 0xDC, 1),
]


def dgx_h100():
    t = Tree("dgx-h100")
    for _, gbus, nic, nbus, numa in DGX_H100:
        rc = nbus - 3  # host bridge bus: root port, switch up, switch down, endpoint
        rp = "/sys/devices/pci0000:%02x/0000:%02x:01.0" % (rc, rc)
        up = rp + "/0000:%02x:00.0" % (rc + 1)
        bridge(t, rp, numa)
        bridge(t, up, numa)
        bridge(t, up + "/0000:%02x:00.0" % (rc + 2), numa)
        bridge(t, up + "/0000:%02x:01.0" % (rc + 2), numa)
        rdma_nic(t, up + "/0000:%02x:00.0/0000:%02x:00.0" % (rc + 2, nbus), nic, numa)
        gpu(t, up + "/0000:%02x:01.0/0000:%02x:00.0" % (rc + 2, gbus), numa)
    software(t, n_uverbs=len(DGX_H100))
    # The published nvidia-smi topo -m cells for GPU x NIC (NIC order = name order).
    nics = sorted((n for _, _, n, _, _ in DGX_H100), key=lambda s: s)
    rows = []
    for gi, _, gnic, _, gnuma in DGX_H100:
        cells = []
        for n in nics:
            numa = [x for x in DGX_H100 if x[2] == n][0][4]
            cells.append("PIX" if n == gnic else ("NODE" if numa == gnuma else "SYS"))
        rows.append("GPU%d %s" % (gi, " ".join(cells)))
    with open(os.path.join(HERE, "dgx-h100.expected_topo"), "w") as f:
        f.write(
            "# GPU x NIC path types, nvidia-smi topo -m (NICs in name order: %s)\n%s\n"
                % (" ".join(nics), "\n".join(rows)))


def two_socket_sys():
    """A 2-socket server with the GPU in a CPU0 slot and the NIC in a CPU1
    slot: the pair crosses the socket interconnect (SYS)."""
    t = Tree("two-socket-sys")
    bridge(t, "/sys/devices/pci0000:00/0000:00:03.0", 0)
    gpu(t, "/sys/devices/pci0000:00/0000:00:03.0/0000:3b:00.0", 0)
    bridge(t, "/sys/devices/pci0000:80/0000:80:02.0", 1)
    rdma_nic(t, "/sys/devices/pci0000:80/0000:80:02.0/0000:86:00.0", "mlx5_0", 1,
             link_layer="Ethernet", netdev="ens6f0np0", ipv4="10.1.0.7")
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
    rp = "/sys/devices/pci0000:00/0000:00:01.0"
    up = rp + "/0000:01:00.0"
    bridge(t, rp, 0)
    bridge(t, up, 0)
    bridge(t, up + "/0000:02:00.0", 0, acs=acs)
    bridge(t, up + "/0000:02:01.0", 0, acs=acs)
    gpu(t, up + "/0000:02:00.0/0000:03:00.0", 0, link=gpu_link)
    rdma_nic(t, up + "/0000:02:01.0/0000:04:00.0", "mlx5_0", 0, link_layer="Ethernet",
             state=state, phys=phys, netdev="ens1f0np0", ipv4=ipv4, mtu=mtu, link=nic_link)
    iommu = kw.get("iommu")
    software(t, **kw)
    if iommu:
        for bdf, kind in (("0000:03:00.0", iommu), ("0000:04:00.0", iommu)):
            group = "/sys/kernel/iommu_groups/%d" % (3 if bdf.endswith("03:00.0") else 4)
            t.write(group + "/type", kind + "\n")
            dev = "/sys" + os.readlink(t.root + "/sys/bus/pci/devices/" + bdf)[len("../../.."):]
            t.link(dev + "/iommu_group", "../" * dev.count("/") + group[1:])
    return t


TREES = {
    "dgx-h100": dgx_h100,
    "two-socket-sys": two_socket_sys,
    "healthy": lambda: healthy_node("healthy"),
    "fault-peermem-not-persisted": lambda: healthy_node("fault-peermem-not-persisted",
                                                        peermem_persisted=False),
    "fault-secure-boot": lambda: healthy_node("fault-secure-boot", secure_boot=True),
    "fault-port-down": lambda: healthy_node("fault-port-down", state=1, phys=3),
    "fault-pcie-degraded": lambda: healthy_node("fault-pcie-degraded",
                                                nic_link=("16.0", 8, "32.0", 16)),
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
}

if __name__ == "__main__":
    for name, build in TREES.items():
        build()
        print("wrote", name)
