#include "controller/topology/load.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "controller/topology/ibnetdiscover.h"
#include "controller/topology/iblinkinfo.h"
#include "controller/topology/lldpctl.h"

namespace gdrbench::controller::topology {
namespace {

absl::StatusOr<std::string> Sniff(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return std::string("lldp");
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the topology file ", path));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view l = absl::StripAsciiWhitespace(line);
    if (l.empty() || l[0] == '#') continue;
    return std::string(absl::StartsWith(l, "0x") ? "iblinkinfo" : "ibnetdiscover");
  }
  return std::string("ibnetdiscover");  // empty: its reader says what is missing
}

}  // namespace

absl::StatusOr<Fabric> LoadTopology(const std::string& path, const std::string& format,
                                    const std::set<std::string>& hosts) {
  std::string f = format;
  if (f == "auto") {
    auto sniffed = Sniff(path);
    if (!sniffed.ok()) return sniffed.status();
    f = *sniffed;
  }
  if (f == "ibnetdiscover") return LoadIbnetdiscover(path);
  if (f == "iblinkinfo") return LoadIblinkinfo(path);
  if (f == "lldp") return LoadLldpDir(path, hosts);
  return absl::InvalidArgumentError(
      absl::StrCat("--topology-format ", format, ": expected auto, ibnetdiscover, iblinkinfo or lldp"));
}

}  // namespace gdrbench::controller::topology
