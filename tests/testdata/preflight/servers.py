"""Real server models as sysfs trees. Each cites where its facts come from
(README.md has the full list); what the sources do not give (the BDFs of
PCIe bridges, most endpoint BDFs, addresses) is modelled and said so. Each
layout is built from the published block structure (which devices share a
PCIe switch, which host bridge and NUMA node they hang off), and the unit
test classifies every GPU x NIC pair and compares it, cell by cell, with the
nvidia-smi topo -m matrix transcribed in published/<tree>.topo-m.txt.
"""
import os

from treelib import HERE, ZERO_COUNTERS, Tree, bridge, gpu, rdma_nic

PEX = dict(vendor=0x1000, device=0xC010)  # Broadcom PEX88096 (NCCL #1505's switch ids)
GEN4 = ("16.0", 16, "16.0", 16)
GEN5 = ("32.0", 16, "32.0", 16)


# --- DGX A100 ---------------------------------------------------------------
# Matrix: rapidsai/ucx-py#749 (published/dgx-a100.topo-m.txt): GPU pairs
# (0,1) (2,3) (4,5) (6,7) each PXB to two compute HCAs (mlx5_0/1, 2/3, 6/7,
# 8/9) and SYS to everything else; the storage HCAs mlx5_4/5 and mlx5_10/11
# SYS to every GPU. PCI facts from NVIDIA/nccl#1505 (a DGX A100 40GB's
# NCCL_TOPO_DUMP_FILE and nvidia-smi topo -m): GPU0 = 0000:07:00.0 (10de:20b0)
# and mlx5_0 = 0000:0c:00.0 (15b3:101b, ConnectX-6, 200 Gb/s), both
# 16.0 GT/s x16, behind PEX88096 bridges (1000:c010) at 16.0 GT/s x16,
# mlx5_0's own bridge 0000:0a:00.0; NUMA affinity of GPU0/1 = 3, GPU2/3 = 1,
# GPU4/5 = 7 (NPS4: eight NUMA nodes). Modelled: the other BDFs, GPU6/7's
# NUMA node 5, the storage HCAs' NUMA nodes (2 and 6, nodes without GPUs,
# as SYS to every GPU requires) and their Ethernet/RoCE setup.
DGX_A100_QUADS = [  # (host bridge, numa, (gpu bus, gpu bus), ((nic, bus), (nic, bus)))
    (0x00, 3, (0x07, 0x0F), (("mlx5_0", 0x0C), ("mlx5_1", 0x12))),
    (0x40, 1, (0x47, 0x4E), (("mlx5_2", 0x4B), ("mlx5_3", 0x54))),
    (0x80, 7, (0x87, 0x90), (("mlx5_6", 0x8D), ("mlx5_7", 0x94))),
    (0xB0, 5, (0xB7, 0xBD), (("mlx5_8", 0xBA), ("mlx5_9", 0xCC))),
]


def dgx_a100(software, name="dgx-a100", storage_link=GEN4, rail_link=GEN4):
    t = Tree(name)
    n_uverbs = 0
    for rc, numa, gpus, nics in DGX_A100_QUADS:
        # Root port -> PEX L1 switch -> one L2 switch per endpoint: every
        # GPU/GPU and GPU/NIC pair of the quadrant crosses three switches (PXB).
        rp = "/sys/devices/pci0000:%02x/0000:%02x:01.1" % (rc, rc)
        l1 = rp + "/0000:%02x:00.0" % (rc + 1)
        bridge(t, rp, numa, link=GEN4, vendor=0x1022, device=0x1483)
        bridge(t, l1, numa, link=GEN4, **PEX)
        ends = [("gpu", b, None) for b in gpus] + [("nic", b, n) for n, b in nics]
        for slot, (kind, bus, nic) in enumerate(ends):
            down = l1 + "/0000:%02x:%02x.0" % (rc + 2, slot * 4)
            l2 = down + "/0000:%02x:00.0" % (bus - 2)
            l2down = l2 + "/0000:%02x:00.0" % (bus - 1)
            for b in (down, l2, l2down):
                bridge(t, b, numa, link=GEN4, **PEX)
            if kind == "gpu":
                gpu(t, l2down + "/0000:%02x:00.0" % bus, numa, link=GEN4, device=0x20B0)
            else:
                rdma_nic(t, l2down + "/0000:%02x:00.0" % bus, nic, numa, device=0x101B,
                         fw="20.31.1014", rate="200 Gb/sec (4X HDR)", counters=ZERO_COUNTERS,
                         link=rail_link if nic == "mlx5_0" else GEN4)
                n_uverbs += 1
    # Storage: one dual-port ConnectX-6 per socket on its own root port.
    for rc, numa, bus, names, ips in ((0x50, 2, 0x61, ("mlx5_4", "mlx5_5"), ("10.10.0.21", None)),
                                      (0xD0, 6, 0xE1, ("mlx5_10", "mlx5_11"), ("10.10.1.21", None))):
        rp = "/sys/devices/pci0000:%02x/0000:%02x:01.1" % (rc, rc)
        bridge(t, rp, numa, link=GEN4, vendor=0x1022, device=0x1483)
        for fn, (nic, ip) in enumerate(zip(names, ips)):
            rdma_nic(t, rp + "/0000:%02x:00.%d" % (bus, fn), nic, numa, link_layer="Ethernet",
                     device=0x101B, fw="20.31.1014", netdev="enp%ds0f%d" % (bus, fn), ipv4=ip,
                     counters=ZERO_COUNTERS, link=storage_link)
            n_uverbs += 1
    software(t, n_uverbs=n_uverbs, hostname=name)


# --- 8x H200 with an in-band RoCE bond ----------------------------------------
# Matrix: weiziyang.wiki (published/h200-inband-bond.topo-m.txt): each GPU
# PIX to one ConnectX-7 (NIC legend mlx5_0, mlx5_3 ... mlx5_9), NODE to the
# other NICs of its socket, SYS across; mlx5_bond_0 NODE to GPU0-3 and SYS to
# GPU4-7; NUMA 0 for GPU0-3, 1 for GPU4-7. Modelled: every BDF (the DGX H100
# User Guide's buses, which this HGX board shares the layout of, are used as
# labels), the bond's card (a dual-port ConnectX-7, first function) on its
# own socket-0 host bridge, its netdev, address and MTU 1500.
H200_PAIRS = [  # (gpu bus, nic, nic bus, numa)
    (0x1B, "mlx5_0", 0x18, 0), (0x43, "mlx5_3", 0x40, 0), (0x52, "mlx5_4", 0x4F, 0),
    (0x61, "mlx5_5", 0x5E, 0), (0x9D, "mlx5_6", 0x9A, 1), (0xC3, "mlx5_7", 0xC0, 1),
    (0xD1, "mlx5_8", 0xCE, 1), (0xDF, "mlx5_9", 0xDC, 1),
]


def gpu_nic_switch(t, gbus, nic, nbus, numa, extra=(), gpu_device=0x2335):
    """One host bridge -> root port -> PCIe switch with the GPU and the NIC
    (and `extra` functions: (bus, fn, name, kwargs)) on its downstream ports."""
    rc = nbus - 3
    rp = "/sys/devices/pci0000:%02x/0000:%02x:01.0" % (rc, rc)
    up = rp + "/0000:%02x:00.0" % (rc + 1)
    bridge(t, rp, numa)
    bridge(t, up, numa)
    bridge(t, up + "/0000:%02x:00.0" % (rc + 2), numa)
    bridge(t, up + "/0000:%02x:01.0" % (rc + 2), numa)
    rdma_nic(t, up + "/0000:%02x:00.0/0000:%02x:00.0" % (rc + 2, nbus), nic, numa, counters=ZERO_COUNTERS)
    gpu(t, up + "/0000:%02x:01.0/0000:%02x:00.0" % (rc + 2, gbus), numa, device=gpu_device)
    for i, (bus, fn, name, kw) in enumerate(extra):
        down = up + "/0000:%02x:%02x.0" % (rc + 2, 2 + i)
        if fn == 0:
            bridge(t, down, numa)
        rdma_nic(t, down + "/0000:%02x:00.%d" % (bus, fn), name, numa, **kw)


def h200_inband_bond(software):
    t = Tree("h200-inband-bond")
    for gbus, nic, nbus, numa in H200_PAIRS:
        gpu_nic_switch(t, gbus, nic, nbus, numa)
    rp = "/sys/devices/pci0000:26/0000:26:01.0"
    bridge(t, rp, 0)
    rdma_nic(t, rp + "/0000:29:00.0", "mlx5_bond_0", 0, link_layer="Ethernet", netdev="bond0",
             ipv4="10.20.0.31", mtu=1500, counters=ZERO_COUNTERS, rate="200 Gb/sec (2X NDR)")
    software(t, n_uverbs=9, hostname="h200-inband-bond")


# --- 8x H200 with ConnectX-6 Dx Ethernet ports -------------------------------
# Matrix: kvcache-ai/Mooncake#2039 (published/h200-ethernet-storage.topo-m.txt):
# each GPU PIX to its ConnectX-7; GPU0's switch also holds mlx5_1/mlx5_2 and
# GPU4's mlx5_7/mlx5_8 (PIX), NODE within a socket, SYS across. ibstat in the
# same post: mlx5_0/3/4/5/6/9/10/11 MT4129 (ConnectX-7), firmware
# 28.41.1000, InfiniBand, Active/LinkUp, rate 400; mlx5_1/2 MT4125
# (ConnectX-6 Dx), firmware 22.38.1002, Ethernet, Down/Disabled, rate 40;
# mlx5_7/8 MT4125, 22.38.1002, Ethernet, Active/LinkUp, rate 100; mlx5_1/2
# and mlx5_7/8 share a system image GUID each (one dual-port card). Modelled:
# BDFs (as above), the Ethernet ports' netdevs and addresses.
def h200_ethernet_storage(software):
    t = Tree("h200-ethernet-storage")
    cx6 = dict(link_layer="Ethernet", device=0x101D, fw="22.38.1002", link=GEN4, counters=ZERO_COUNTERS)
    down = dict(cx6, state=1, phys=3, rate="40 Gb/sec (4X QDR)", netdev=None)
    up = dict(cx6, rate="100 Gb/sec (4X EDR)")
    extra = {
        "mlx5_0": [(0x19, 0, "mlx5_1", dict(down, netdev="ens19f0np0")),
                   (0x19, 1, "mlx5_2", dict(down, netdev="ens19f1np1"))],
        "mlx5_6": [(0x9B, 0, "mlx5_7", dict(up, netdev="ens155f0np0", ipv4="10.30.0.41")),
                   (0x9B, 1, "mlx5_8", dict(up, netdev="ens155f1np1", ipv4="10.30.1.41"))],
    }
    names = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
    for (gbus, _, nbus, numa), nic in zip(H200_PAIRS, names):
        gpu_nic_switch(t, gbus, nic, nbus, numa, extra.get(nic, ()))
    for nic in names:
        t.write("/sys/class/infiniband/%s/fw_ver" % nic, "28.41.1000\n")
    software(t, n_uverbs=12, hostname="h200-ethernet-storage")


# --- DGX H100 (compute HCAs only) ---------------------------------------------
# NIC names and PCI buses from the NVIDIA DGX H100 User Guide, "Network
# Modules" table (OSFP port -> ConnectX -> GPU -> ibp<bus>s0 -> mlx5_N: GPU0
# mlx5_0 bus 0x18, GPU1 mlx5_3 0x40, GPU2 mlx5_4 0x4f, GPU3 mlx5_5 0x5e, GPU4
# mlx5_6 0x9a, GPU5 mlx5_9 0xc0, GPU6 mlx5_10 0xce, GPU7 mlx5_11 0xdc); GPU
# buses 1b 43 52 61 9d c3 d1 df as DGX H100 systems report them.
DGX_H100 = [  # (gpu index, gpu bus, nic, nic bus, numa)
    (0, 0x1B, "mlx5_0", 0x18, 0), (1, 0x43, "mlx5_3", 0x40, 0),
    (2, 0x52, "mlx5_4", 0x4F, 0), (3, 0x61, "mlx5_5", 0x5E, 0),
    (4, 0x9D, "mlx5_6", 0x9A, 1), (5, 0xC3, "mlx5_9", 0xC0, 1),
    (6, 0xD1, "mlx5_10", 0xCE, 1), (7, 0xDF, "mlx5_11", 0xDC, 1),
]


def dgx_h100(software):
    t = Tree("dgx-h100")
    for _, gbus, nic, nbus, numa in DGX_H100:
        gpu_nic_switch(t, gbus, nic, nbus, numa, gpu_device=0x2330)  # H100 SXM5
    software(t, n_uverbs=len(DGX_H100), hostname="dgx-h100")
    # The GPU x NIC cells of that layout (NIC order = name order).
    nics = sorted(n for _, _, n, _, _ in DGX_H100)
    rows = []
    for gi, _, gnic, _, gnuma in DGX_H100:
        cells = []
        for n in nics:
            numa = [x for x in DGX_H100 if x[2] == n][0][4]
            cells.append("PIX" if n == gnic else ("NODE" if numa == gnuma else "SYS"))
        rows.append("GPU%d %s" % (gi, " ".join(cells)))
    with open(os.path.join(HERE, "dgx-h100.expected_topo"), "w") as f:
        f.write("# GPU x NIC path types, nvidia-smi topo -m (NICs in name order: %s)\n%s\n"
                % (" ".join(nics), "\n".join(rows)))


def trees(software):
    return {
        "dgx-h100": lambda: dgx_h100(software),
        "dgx-a100": lambda: dgx_a100(software),
        "dgx-a100-storage-x4": lambda: dgx_a100(software, "dgx-a100-storage-x4",
                                                storage_link=("16.0", 4, "16.0", 16)),
        "dgx-a100-rail-x8": lambda: dgx_a100(software, "dgx-a100-rail-x8", rail_link=("16.0", 8, "16.0", 16)),
        "h200-inband-bond": lambda: h200_inband_bond(software),
        "h200-ethernet-storage": lambda: h200_ethernet_storage(software),
    }
