#!/usr/bin/env python3
"""Writes the hostile capture tarballs of issue 12 (item 2) into DIR, with
Python's tarfile (an implementation of POSIX.1-2001 ustar/pax independent of
ours and of libarchive). Device numbers are Linux's (Documentation/admin-guide/
devices.txt: 1,5 is /dev/zero)."""
import io
import sys
import tarfile

out = sys.argv[1]
slow = "--slow" in sys.argv[2:]


def add(t, name, kind=tarfile.REGTYPE, data=b"", mode=0o644, **kw):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = mode
    ti.uid, ti.gid, ti.uname, ti.gname = 0, 0, "root", "root"
    for k, v in kw.items():
        setattr(ti, k, v)
    if kind == tarfile.REGTYPE:
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    else:
        t.addfile(ti)


def capture(name, entries):
    with tarfile.open(f"{out}/{name}.tar.gz", "w:gz", format=tarfile.PAX_FORMAT) as t:
        add(t, "./etc", tarfile.DIRTYPE, mode=0o755)
        add(t, "./etc/hostname", data=b"node-a\n")
        for e in entries:
            add(t, **e)


if slow:
    # Many small files: seconds to unpack, for the signal test.
    capture("slow", [dict(name=f"./sys/d{i // 1000}/f{i}", data=b"1\n") for i in range(20_000)])
    sys.exit(0)

capture("good", [dict(name="./sys/class/infiniband", kind=tarfile.DIRTYPE, mode=0o755),
                 dict(name="./sys/devices/mlx5_0", kind=tarfile.DIRTYPE, mode=0o755),
                 dict(name="./sys/devices/mlx5_0/fw_ver", data=b"28.39.1002\n"),
                 dict(name="./sys/class/infiniband/mlx5_0", kind=tarfile.SYMTYPE,
                      linkname="../../devices/mlx5_0"),
                 dict(name="./usr/bin/tool", data=b"#!/bin/sh\n", mode=0o4755)])
capture("chardev", [dict(name="./sys/zero", kind=tarfile.CHRTYPE, devmajor=1, devminor=5)])
capture("fifo", [dict(name="./sys/fifo", kind=tarfile.FIFOTYPE)])
capture("hardlink", [dict(name="./etc/shadow-link", kind=tarfile.LNKTYPE, linkname="/etc/shadow")])
# A symlink to a directory outside, then a file written "through" it.
capture("through_symlink", [dict(name="./escape", kind=tarfile.SYMTYPE, linkname="/tmp"),
                            dict(name="./escape/gdrbench-owned", data=b"x")])
# Many entries, and one file larger than the caps the test sets.
capture("many", [dict(name=f"./sys/f{i}", data=b"1") for i in range(50)])
capture("big", [dict(name="./var/big", data=b"\0" * (3 << 20))])
with open(f"{out}/not-a-tarball.tar.gz", "wb") as f:
    f.write(b"this is not gzip\n")
