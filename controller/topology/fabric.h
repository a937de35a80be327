// The fabric as a graph: host rail ports, switches, and the cables between
// them with their rates, each cable placed in a tier by its distance from
// the hosts (host<->leaf, leaf<->spine, spine<->core). Built from a topology
// dump (ibnetdiscover here) and matched to the inventory's nodes; what does
// not match is kept and reported, never guessed.
//
// Pure data and functions, no I/O beyond the file a parser is handed.
// Thread safety: a Fabric is a value; const use from many threads is safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gdrbench::controller::topology {

enum class DeviceKind { kHost, kSwitch };

// One device of the dump: a switch, or a host channel adapter (one per NIC).
struct Device {
  std::string id;           // "S-0ff08c43215bae48" / "H-0ff08c4321664e96" (ibnetdiscover's node id)
  DeviceKind kind = DeviceKind::kSwitch;
  std::string description;  // node description: "RMD701091901003 ibp11s0f0", "MF0;...:MQM8700/U1"
  std::string guid;         // "0x0ff08c43215bae48": node GUID (switchguid / caguid), NormalizeGuid's form;
                            // in iblinkinfo --line, the GUID the line names it by (a switch's port 0 GUID)
  std::string port_guid;    // a host's CA port GUID where the dump gives it ("0x0ff08c4321664e96")
  std::map<int, std::string> port_names;  // ports a dump names instead of numbering (LLDP: "Ethernet4")
  std::string where;        // "FILE:LINE" of its record; empty when only seen as a peer
  bool recorded() const { return !where.empty(); }
  int tier = -1;            // hosts 0, leaves 1, spines 2, ...; -1: not connected to any host
};

struct PortRef {
  std::string device;  // Device::id
  int port = 0;
  bool operator<(const PortRef& o) const { return device != o.device ? device < o.device : port < o.port; }
  bool operator==(const PortRef& o) const { return device == o.device && port == o.port; }
};

// A cable, once, whichever end's record listed it first; `lower` is the end
// nearer the hosts (lower tier), `upper` the other.
struct Cable {
  PortRef lower, upper;
  double gbps = 0;         // the link's data rate: width x lane rate ("4xHDR": 4 x 50)
  std::string link;        // as the dump wrote it: "4xHDR"
  std::string where;       // "FILE:LINE" of the first record that listed it
  int tier = -1;           // the lower end's tier: 0 host<->leaf, 1 leaf<->spine, 2 spine<->core;
                           // -1 when an end has no record of its own (Fabric::unrecorded_peers)
};

struct Fabric {
  std::map<std::string, Device> devices;  // by id
  std::vector<Cable> cables;
  // Ports a record named whose peer never had a record of its own (e.g. an
  // SHArP aggregation node inside a switch): the cable is kept, its device
  // is named here.
  std::vector<std::string> unrecorded_peers;

  size_t CountDevices(DeviceKind kind) const;
  // Cables per tier: [0] host<->leaf, [1] leaf<->spine, ...
  std::vector<size_t> CablesPerTier() const;
};

// A GUID as "0x" and 16 lower-case hex digits ("ff08c4321664e96",
// "0xFF08C4321664E96" -> "0x0ff08c4321664e96"); "" when `text` is not 1..16
// hex digits with or without "0x".
std::string NormalizeGuid(const std::string& text);

// The nominal data rate of an IB link as ibnetdiscover prints it ("4xHDR",
// "1xNDR", "2xHDR"): width x the lane's nominal rate as the IBTA and vendors
// quote it (SDR 2.5, DDR 5, QDR 10, FDR10 10, FDR 14, EDR 25, HDR 50,
// NDR 100, XDR 200 Gb/s: 4xHDR = 200). 0 for a form it does not know.
double LinkGbps(const std::string& link);

// Places every device in its tier: hosts with a record of their own 0, then
// breadth-first up through the switches (a switch's tier is one more than its
// lowest neighbour's), and every cable between two recorded devices in the
// tier of its lower end, with `lower`/`upper` ordered.
void AssignTiers(Fabric& fabric);

}  // namespace gdrbench::controller::topology
