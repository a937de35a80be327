"""Helpers that lay out sysfs/procfs trees the way the Linux kernel does, for
generate.py (single-node trees) and servers.py (real server models).

Formats, and where each comes from (never from gdrbench's own code):
  - /sys/bus/pci/devices/<BDF> -> ../../../devices/pci<dom>:<bus>/<root port>/...
    and the class/vendor/device/numa_node/*_link_* attributes:
    Documentation/ABI/testing/sysfs-bus-pci (torvalds/linux).
  - /sys/class/infiniband/<dev>/{fw_ver,node_guid,node_type}, ports/<n>/{state,
    phys_state,link_layer,rate,gids/,gid_attrs/,counters/}:
    Documentation/ABI/stable/sysfs-class-infiniband (torvalds/linux, commit
    031616c434db05ce766f76c62865f55698e0924f). state/phys_state print
    "<code>: <NAME>" (drivers/infiniband/core/sysfs.c).
  - efivarfs: a variable file is its 32-bit attributes, little-endian, then
    the value (fs/efivarfs/file.c efivarfs_file_read, torvalds/linux commit
    101cfc9f787d8ca22866a178f2c1684fb10f8c7a). SecureBoot and SetupMode are
    1-byte variables of vendor EFI_GLOBAL_VARIABLE
    {0x8BE4DF61,0x93CA,0x11D2,{0xAA,0x0D,0x00,0xE0,0x98,0x03,0x2B,0x8C}}
    (UEFI Specification, "Globally Defined Variables": attributes BS, RT;
    include/linux/efi.h EFI_GLOBAL_VARIABLE_GUID, torvalds/linux commit
    348324c5b10bcba8d9daabdfb85a6927311be34f). mokutil --sb-state prints
    "SecureBoot enabled" for value 1 (lcp/mokutil src/mokutil.c sb_state(),
    commit 012d82be0468e876a10691fbabab2ed11b7a4954).
  - /sys/kernel/security/lockdown: the levels, the current one in brackets
    (security/lockdown/lockdown.c lockdown_read).
  - /sys/module/<m>/taint letters and /proc/sys/kernel/tainted bits:
    Documentation/admin-guide/tainted-kernels.rst (torvalds/linux commit
    14e77332e74603efab8347c89d3cda447c3b97c9): P=bit 0, O=bit 12, E=bit 13.
  - /lib/modules/<release>/modules.dep: "path: deps" per module (depmod(8)).
  - a signed module file ends with "~Module signature appended~\\n"
    (include/linux/module_signature.h MODULE_SIG_STRING).
"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# UEFI: EFI_GLOBAL_VARIABLE, printed as efivarfs names it (lower-case,
# dash-separated, the first three fields in their numeric order).
EFI_GLOBAL_VARIABLE = "8be4df61-93ca-11d2-aa0d-00e098032b8c"
EFI_VARIABLE_NON_VOLATILE = 0x1
EFI_VARIABLE_BOOTSERVICE_ACCESS = 0x2
EFI_VARIABLE_RUNTIME_ACCESS = 0x4
MODULE_SIG_STRING = b"~Module signature appended~\n"
TAINT_P, TAINT_O, TAINT_E = 1 << 0, 1 << 12, 1 << 13
KERNEL = "6.8.0-60-generic"


class Tree:
    def __init__(self, name):
        self.name = name
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


def efi_byte_variable(t, name, value, attributes=EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS,
                      guid=EFI_GLOBAL_VARIABLE):
    t.write("/sys/firmware/efi/efivars/%s-%s" % (name, guid),
            struct.pack("<I", attributes) + bytes([value]), "wb")


def config_space(acs_control=None):
    """4 KiB PCIe config space; with an ACS extended capability at 0x100 when
    acs_control is not None (capability 0x005f: SV RR CR UF EC DT). Layout:
    PCIe Base Specification, extended capability header (ID 0x000D = ACS)."""
    cfg = bytearray(4096)
    if acs_control is not None:
        struct.pack_into("<I", cfg, 0x100, 0x000D | (1 << 16))  # id ACS, v1, next 0
        struct.pack_into("<HH", cfg, 0x104, 0x005F, acs_control)
    return bytes(cfg)


def pci_device(t, chain, cls, vendor, device, numa, link=None, acs=None):
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


def bridge(t, chain, numa, acs=0, link=("32.0", 16, "32.0", 16), vendor=0x1000, device=0xC030):
    return pci_device(t, chain, 0x060400, vendor, device, numa, link, acs)


def gpu(t, chain, numa, link=("32.0", 16, "32.0", 16), device=0x2330):
    return pci_device(t, chain, 0x030200, 0x10DE, device, numa, link)


STATES = {1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE"}
PHYS_STATES = {2: "Polling", 3: "Disabled", 5: "LinkUp"}


def rdma_nic(t, chain, name, numa, link_layer="InfiniBand", state=4, phys=5,
             netdev=None, ipv4=None, mtu=9000, link=("32.0", 16, "32.0", 16),
             device=0x1021, fw="28.39.1002", rate=None, counters=None, guid="a088:c203:0047:1a2c",
             pci=True):
    """An RDMA device on PCI function `chain` (pci=False: a further device on
    a function already written, e.g. a bond's). counters: {name: value} for
    ports/1/counters (None: no counters directory)."""
    cls = 0x020700 if link_layer == "InfiniBand" else 0x020000
    if pci:
        pci_device(t, chain, cls, 0x15B3, device, numa, link)
    ib = chain + "/infiniband/" + name
    t.write(ib + "/fw_ver", fw + "\n")
    t.write(ib + "/node_guid", guid + "\n")
    t.write(ib + "/node_type", "1: CA\n")
    t.link(ib + "/device", "../../../" + chain.rsplit("/", 1)[1])
    t.link("/sys/class/infiniband/" + name, "../../devices" + ib[len("/sys/devices"):])
    port = ib + "/ports/1"
    t.write(port + "/state", "%d: %s\n" % (state, STATES[state]))
    t.write(port + "/phys_state", "%d: %s\n" % (phys, PHYS_STATES[phys]))
    t.write(port + "/link_layer", link_layer + "\n")
    if rate is None:
        rate = "400 Gb/sec (4X NDR)" if link_layer == "InfiniBand" else "200 Gb/sec (4X HDR)"
    t.write(port + "/rate", rate + "\n")
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
    if counters is not None:
        for c, v in counters.items():
            t.write(port + "/counters/" + c, "%d\n" % v)
    if netdev:
        net = chain + "/net/" + netdev
        t.write(net + "/mtu", "%d\n" % mtu)
        t.write(net + "/operstate", "up\n")
        t.link("/sys/class/net/" + netdev, "../../devices" + net[len("/sys/devices"):])


# The InfiniBand PortCounters error counters (sysfs-class-infiniband), all
# zero: a healthy port's.
ZERO_COUNTERS = {c: 0 for c in ("symbol_error", "link_downed", "link_error_recovery",
                                "port_rcv_errors", "excessive_buffer_overrun_errors",
                                "port_xmit_discards")}
