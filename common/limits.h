// Every limit that protects gdrbench from what others send it, in one place:
// files and trees it reads, captures it unpacks, the agent's listener and
// calls, preflight deadlines, signals. The data path's own request limits
// (sizes, iterations, QPs, tx depth, buffer bytes) are in
// common/sweep_limits.h and the target leases in
// agent/service/target_registry.h (TargetLimits); the controller's node,
// plan and answer bounds are here. A limit reached is an error
// with a sentence that names it, never a crash or a silent truncation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gdrbench::limits {

// --- Files (FsRoot::ReadFile, every flag that names a file) ---------------
// One file read whole: sysfs/procfs attributes, PEM files, inventories,
// module lists, a captured kernel log. Larger files are refused unread.
inline constexpr size_t kMaxFileBytes = 8u << 20;
// dpkg's package database (/var/lib/dpkg/status) on a large host.
inline constexpr size_t kMaxPackageDbBytes = 64u << 20;
// Entries listed from one directory (sysfs has thousands, never millions).
inline constexpr size_t kMaxDirEntries = 1u << 16;
// Symlinks followed while resolving one path (Linux's MAXSYMLINKS).
inline constexpr int kMaxSymlinkHops = 40;

// --- Capture tarballs (agent/preflight/capture, offline preflight) --------
// A capture of a real 8-GPU node is about 2 MB unpacked in ~3,000 entries;
// the caps leave room for 100x that and stop a tar bomb early.
inline constexpr size_t kMaxCaptureEntries = 200'000;
inline constexpr uint64_t kMaxCaptureBytes = 256ull << 20;   // all files, unpacked
inline constexpr uint64_t kMaxCaptureFileBytes = kMaxPackageDbBytes;
inline constexpr size_t kMaxCapturePathBytes = 1024;
inline constexpr size_t kMaxCaptureDepth = 32;

// --- The agent's gRPC listener and calls ---------------------------------
// File descriptors connections may hold: a new connection whose fd number
// reaches min(RLIMIT_NOFILE - kReservedFds, kMaxOpenFds) is closed at once
// (agent/service/listener.h), so accept() never meets EMFILE because of
// connections and files, verbs and CUDA always find an fd.
inline constexpr int kMaxOpenFds = 16'384;
inline constexpr int kReservedFds = 128;   // verbs, CUDA, files, logs
// Connections at once (about: counted by fd number above those open when the
// agent began serving). The unauthenticated ones have budgets of their own
// below; the rest is the room of connections that made a call.
inline constexpr int kMaxConnections = 512;
// --- Admission (agent/service/admission.h) --------------------------------
// A connection on which no call has arrived yet is "unauthenticated" (with
// mTLS a call implies a valid client certificate). It is closed when it has
// made no call this long after it was accepted (--handshake-deadline-s); the
// TLS/HTTP2 handshake gets the same bound in gRPC.
inline constexpr int kHandshakeDeadlineMs = 5'000;
// Unauthenticated connections one client (an IPv4 address, an IPv6 /64) and
// all clients together may hold (--unauthenticated-per-address,
// --unauthenticated-total); addresses in --controller-cidr have a second
// pool of the same size. A new connection past a budget drops the oldest
// unauthenticated one, never an authenticated one. A controller opens one
// or two connections per agent; each is unauthenticated for milliseconds.
inline constexpr int kUnauthenticatedPerAddress = 8;
inline constexpr int kUnauthenticatedTotal = 64;
// The plaintext --health-listen port (probes make one call and close): every
// connection there is unauthenticated, with these budgets.
inline constexpr int kHealthPerAddress = 4;
inline constexpr int kHealthTotal = 32;
// The unauthenticated budgets of both ports together may take at most this
// share of kMaxConnections (flags past it are refused at start).
inline constexpr int kMaxUnauthenticatedShareDivisor = 2;
// Connections refused or dropped are summed per client and reason, and
// logged at most once per this interval.
inline constexpr int kAdmissionLogIntervalMs = 10'000;
// A connection with no call for this long is closed (clients reconnect).
inline constexpr int kMaxConnectionIdleMs = 10 * 60'000;
// Concurrent calls (HTTP/2 streams) on one connection.
inline constexpr int kMaxConcurrentStreams = 128;
// A request larger than this is refused by gRPC (ours are < 64 KiB).
inline constexpr int kMaxRequestBytes = 1 << 20;
// Memory gRPC may use for connections and calls before it sheds load.
inline constexpr int64_t kGrpcMemoryBytes = 512ll << 20;
// An error message sent to a client is cut here: a request that echoes an
// 8 KiB string must not overflow the client's 8 KiB metadata limit.
inline constexpr size_t kMaxErrorMessageBytes = 1024;
// A string quoted from a request into an error (names, addresses).
inline constexpr size_t kMaxQuotedBytes = 64;

// --- Preflight ------------------------------------------------------------
// One check (a hung driver file blocks a read forever: the check is then
// reported as hung and its thread abandoned); one whole run.
inline constexpr int64_t kPreflightCheckDeadlineMs = 15'000;
inline constexpr int64_t kPreflightRunDeadlineMs = 60'000;
// Preflight runs at once on one agent, and abandoned checks still blocked
// in the kernel before new runs are refused.
inline constexpr int kMaxPreflightRuns = 2;
inline constexpr int kMaxStuckChecks = 8;

// --- The controller: what agents answer ---------------------------------
// A rate above the link's times this is impossible (bidirectional: twice);
// with the link rate unknown, above kMaxPlausibleGbps (2 x 800G NICs).
inline constexpr double kAnswerRateMargin = 1.25;
inline constexpr double kMaxPlausibleGbps = 1600;

// Nodes in one plan (inventory, --agents, --hostlist, all their elements
// together): the largest GPU clusters have ~12,500 8-GPU nodes.
inline constexpr size_t kMaxNodes = 32'768;
// Tests in one plan (node pairs x rails, every round of every mode): the
// schedule, the results and the journal (~110 B a test) grow with it.
// 1024 8-rail nodes all-pairs one way are 8.4 million; 32,768 nodes
// all-pairs would be 8.6 billion, refused before anything is allocated.
inline constexpr uint64_t kMaxPlanTests = 1ull << 24;

// --- Signals --------------------------------------------------------------
// SIGTERM/SIGINT: the time a long-running binary takes to drain (stop
// accepting, cancel work, free targets, flush) before it exits anyway.
inline constexpr int64_t kDrainDeadlineMs = 5'000;

}  // namespace gdrbench::limits
