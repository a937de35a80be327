#include "agent/preflight/kernel_modules.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gdrbench::agent::preflight {
namespace {

// The fields of `name`'s line in /proc/modules' text ("name size refcount
// deps state address [(taints)]"); empty when it is not listed.
std::vector<absl::string_view> ProcModulesFields(absl::string_view mods, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(mods, '\n')) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (!fields.empty() && fields[0] == name) return fields;
  }
  return {};
}

std::string Observed(const std::string& letters) { return letters.empty() ? "(none)" : letters; }

}  // namespace

bool ModuleLoaded(const FsRoot& fs, const std::string& name) {
  if (fs.Exists(absl::StrCat("/sys/module/", name, "/initstate")) ||
      fs.Exists(absl::StrCat("/sys/module/", name, "/version"))) {
    return true;
  }
  auto mods = fs.ReadFile("/proc/modules");
  return mods.ok() && !ProcModulesFields(*mods, name).empty();
}

ModuleTaintReading ReadModuleTaint(const FsRoot& fs, const std::string& name) {
  ModuleTaintReading r;
  std::string sys = absl::StrCat("/sys/module/", name, "/taint");
  if (auto t = fs.ReadFile(sys); t.ok()) {
    r.letters = std::string(absl::StripAsciiWhitespace(*t));
    r.source = sys;
    r.observed = Observed(*r.letters);
    return r;
  }
  r.source = "/proc/modules";
  auto mods = fs.ReadFile(r.source);
  if (!mods.ok()) {
    r.source = sys;
    r.observed = "not readable, nor is /proc/modules";
    return r;
  }
  // "name size refcount deps state address [(taints)]": the taint field is
  // the only one in parentheses, last, and only there when there are taints;
  // '+' and '-' inside it mark a module being loaded or unloaded.
  const std::vector<absl::string_view> fields = ProcModulesFields(*mods, name);
  if (fields.empty()) {
    r.observed = absl::StrCat("does not list ", name, " (and ", sys, " is not readable)");
    return r;
  }
  const std::string line = absl::StrJoin(fields, " ");
  std::string letters;
  if (fields.size() >= 7 && absl::StartsWith(fields.back(), "(") && absl::EndsWith(fields.back(), ")")) {
    for (char c : fields.back().substr(1, fields.back().size() - 2)) {
      if (c != '+' && c != '-') letters.push_back(c);
    }
  } else if (fields.size() < 6) {
    r.observed = absl::StrCat("its line has ", fields.size(), " fields, not 6 or 7: '", line, "'");
    return r;
  }
  r.letters = letters;
  r.observed = absl::StrCat(Observed(letters), " ('", line, "')");
  return r;
}

std::optional<uint64_t> KernelTaint(const FsRoot& fs) {
  auto t = fs.ReadLine("/proc/sys/kernel/tainted");
  uint64_t v = 0;
  if (!t.ok() || !absl::SimpleAtoi(*t, &v)) return std::nullopt;
  return v;
}

ModuleFile FindModuleFile(const FsRoot& fs, const std::string& file_stem) {
  ModuleFile m;
  if (auto rel = fs.ReadLine("/proc/sys/kernel/osrelease"); rel.ok()) m.release = *rel;
  if (m.release.empty()) return m;
  std::string dir = absl::StrCat("/lib/modules/", m.release);
  m.dep_file = dir + "/modules.dep";
  auto dep = fs.ReadFile(m.dep_file);
  if (!dep.ok()) return m;
  m.dep_readable = true;
  std::string underscored = absl::StrReplaceAll(file_stem, {{"-", "_"}});
  for (absl::string_view line : absl::StrSplit(*dep, '\n')) {
    absl::string_view path = line.substr(0, line.find(':'));
    absl::string_view base = path.substr(path.rfind('/') + 1);
    for (const std::string& stem : {file_stem, underscored}) {
      if (absl::StartsWith(base, stem + ".ko")) {
        m.path = absl::StrCat(dir, "/", path);
        return m;
      }
    }
  }
  return m;
}

std::optional<bool> ModuleFileSigned(const FsRoot& fs, const std::string& path) {
  if (!absl::EndsWith(path, ".ko")) return std::nullopt;  // compressed: the marker is inside
  auto content = fs.ReadFile(path);
  if (!content.ok()) return std::nullopt;
  return absl::EndsWith(*content, "~Module signature appended~\n");
}

}  // namespace gdrbench::agent::preflight
