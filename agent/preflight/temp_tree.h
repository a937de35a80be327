// Private temporary trees (capture staging, unpacked captures): 0700,
// registered while they exist, and removed on every exit path: by their
// owner (RemoveTree), and on SIGINT/SIGTERM/SIGHUP in the one-shot tools
// that call RemoveTempTreesOnSignals() (SIGKILL cannot be caught: such a
// tree stays in $TMPDIR as gdrbench-tree-*).
//
// Thread safety: all functions may be called concurrently.
#pragma once

#include <string>

namespace gdrbench::agent::preflight {

// mkdtemp under $TMPDIR (default /tmp) named `prefix`XXXXXX, mode 0700,
// registered. Empty with errno set on failure.
std::string MakeTempTree(const char* prefix);

// rm -r of a tree made by MakeTempTree (or any directory this module made),
// unregistered. Logs, never fails.
void RemoveTree(const std::string& dir);

// Call first in main(), before any thread starts: blocks the stop signals
// and starts a thread that, on one, removes every registered tree, prints
// "<program>: interrupted by SIG...; removed N temporary trees" and exits
// 128 + the signal number.
void RemoveTempTreesOnSignals(const char* program);

// Held by whoever creates entries in a registered tree, one entry at a time
// (the capture extractor, the capture stager), and by RemoveTree. A stop
// signal waits for the holders of the moment; after it, a thread asking for
// a TreeWriter waits for the end of the process (the signal's thread removes
// the trees and exits), so nothing writes into a tree, removes it beside the
// signal's thread or ends the process before the trees are gone. CI saw the
// races this closes: an extractor recreating directories faster than a
// loaded host removed them, the owner's removal racing the signal's (both
// failed: "removed 0 temporary trees"), and an interrupted extraction's
// error exiting before the removal ended (the tree left behind).
class TreeWriter {
 public:
  TreeWriter();
  ~TreeWriter();
  TreeWriter(const TreeWriter&) = delete;
  TreeWriter& operator=(const TreeWriter&) = delete;
};

}  // namespace gdrbench::agent::preflight
