// The kernel log, read two ways:
//   - live, /dev/kmsg (Documentation/ABI/testing/dev-kmsg): one record per
//     read(2), "prio,seq,usec,flags;message\n" then optional " KEY=value"
//     dictionary lines; read non-blocking until EAGAIN (the end);
//   - offline, the capture's copy at kCapturedDmesg: one message per line,
//     as /dev/kmsg records or as `dmesg` prints them ("[   12.345678] msg",
//     "[Tue Sep  8 17:16:02 2026] msg" with -T).
// Thread safety: the readers hold no state between calls.
#pragma once

#include <memory>
#include <string>

#include "agent/preflight/hardware.h"
#include "common/fs_root.h"

namespace gdrbench::agent::preflight {

// Where `gdrbench-agent capture` stores the kernel log inside the tarball.
inline constexpr char kCapturedDmesg[] = "/gdrbench-capture/dmesg";

std::unique_ptr<KernelLog> MakeDevKmsgLog();
std::unique_ptr<KernelLog> MakeCapturedKernelLog(const FsRoot& fs);

// The message of one log line in any of the forms above: the text after a
// /dev/kmsg "prio,seq,usec,flags;" header or a "[...] " dmesg timestamp;
// the line itself otherwise (DevKmsgLog keeps only a record's first line, so
// its " KEY=value" dictionary lines never get here).
std::string LogMessage(const std::string& line);

}  // namespace gdrbench::agent::preflight
