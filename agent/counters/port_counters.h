// The error and congestion counters of one RDMA port, read from sysfs through
// an FsRoot: /sys/class/infiniband/DEV/ports/N/counters/ (the InfiniBand PMA
// PortCounters, Documentation/ABI/stable/sysfs-class-infiniband) and
// .../hw_counters/ (the driver's own: mlx5's retransmission and RoCE
// congestion counters, drivers/infiniband/hw/mlx5/counters.c; rxe's,
// drivers/infiniband/sw/rxe/rxe_hw_counters.c). The preflight check
// link_error_counters and the per-test samples around every data path test
// read them here.
//
// A sample holds only the counters whose files exist and parse; Diff
// compares two samples of one port and says, never guesses, what it cannot
// compare: a counter that went back (cleared, or a driver that wrapped it), a
// PMA counter stuck at its maximum (they saturate, IBA PortCounters), one
// that vanished or appeared between the samples.
// Thread safety: free functions over values; FsRoot is thread-safe.
// PortFiles is thread-safe (one mutex per port).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/fs_root.h"

namespace gdrbench::agent::counters {

// What a counter tells about a test.
enum class Kind {
  kLink,        // physical/link errors and flaps: any growth is a fault
  kRetransmit,  // sequence errors, duplicates, timeouts: the link lost packets
  kCongestion,  // ECN marks and CNPs: the fabric is congested, not broken
  kPackets,     // packets sent and received: the denominator of fractions
  kData,        // data sent and received, in 4-byte words (port_xmit_data, port_rcv_data)
  kTransportError,  // completions in error, refused remote accesses (any QP on the port)
};

struct CounterDef {
  const char* file;   // relative to the port's directory: "counters/symbol_error"
  Kind kind;
  uint64_t max = 0;   // a PMA counter's saturation value (2^width - 1); 0: none known
};

// The counters sampled around a test: the PMA error counters, rxe's and
// mlx5's retransmission counters, the RoCE congestion counters, and the
// packet counters (each driver has some of them).
std::span<const CounterDef> TestCounters();
// The error counters the preflight's link_error_counters judges: a subset of
// TestCounters() (packet and congestion counters say nothing about a port at
// rest).
std::span<const CounterDef> LinkErrorCounters();
// The definition of `file`, nullptr when it is not one of TestCounters().
const CounterDef* FindCounter(const std::string& file);

// "/sys/class/infiniband/DEV/ports/N/"
std::string PortDir(const std::string& device, uint32_t port);

// The steady clock of Sample::taken_ns, in ns.
int64_t NowNs();

struct Sample {
  std::string device;
  uint32_t port = 0;
  std::map<std::string, uint64_t> values;  // "hw_counters/rcvd_seq_err" -> 812
  int64_t taken_ns = 0;                    // steady clock, for the interval
};

// Reads every file of `defs` that exists under the port's directory.
Sample ReadPort(const FsRoot& fs, const std::string& device, uint32_t port,
                std::span<const CounterDef> defs);

// One port's counter files kept open: a sample is one pread per file, not an
// open/read/close (in the emulated lab guest 0.14 ms against 5.2 ms for a
// port's 28 names). sysfs regenerates an attribute on every read at offset 0
// (fs/kernfs, seq_read_iter resets at position 0), so a kept descriptor reads
// the current value. The files present are found on the first Read; a read
// that fails (a sysfs attribute of a device that went away answers ENODEV)
// drops every descriptor, that sample is read by name (ReadPort: what is gone
// is absent), and the next Read opens again. Descriptors are kept on a live
// node; on a captured tree (tests) only when `keep_open` says so, since a
// file removed from a regular directory still reads through its descriptor.
// Kept paths in a tree are resolved inside the root (FsRoot::RealPath), and
// only regular files are kept.
class PortFiles {
 public:
  PortFiles(const FsRoot& fs, std::string device, uint32_t port, std::span<const CounterDef> defs,
            std::optional<bool> keep_open = std::nullopt);  // nullopt: fs.is_live()
  ~PortFiles();
  PortFiles(const PortFiles&) = delete;
  PortFiles& operator=(const PortFiles&) = delete;

  Sample Read();

 private:
  void OpenLocked();
  void CloseLocked();

  const FsRoot fs_;  // a copy: it is only the root path
  const std::string device_;
  const uint32_t port_;
  const std::span<const CounterDef> defs_;
  const bool keep_open_;
  std::mutex mu_;
  bool opened_ = false;
  std::vector<std::pair<const char*, int>> fds_;  // (file, descriptor) of those present
};

struct Change {
  std::string file;
  Kind kind = Kind::kLink;
  uint64_t before = 0, after = 0;
  uint64_t delta = 0;   // after - before; 0 when `note` says why it is unknown
  std::string note;     // empty: the delta is exact
};

struct Delta {
  std::string device;
  uint32_t port = 0;
  int64_t interval_ns = 0;
  size_t compared = 0;           // counters present in both samples
  std::vector<Change> changes;   // counters that grew or could not be compared, in file order
  uint64_t packets = 0;          // growth of the packet counters; 0 when the port has none
  // Non-empty when there was nothing to compare (no counter in either sample).
  std::string absent;
};

// `before` and `after` must be of one port.
Delta Diff(const Sample& before, const Sample& after);

}  // namespace gdrbench::agent::counters
