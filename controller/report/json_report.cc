// JSON through protobuf's json_util, and writing every report to a folder.
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "controller/report/report.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::controller::report {
namespace {

absl::Status WriteFile(const std::string& path, const std::string& data) {
  // Write to a temporary name and rename, so a reader never sees half a report.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return ErrnoToStatus(errno, absl::StrCat("report ", tmp));
    out << data;
    out.flush();
    if (!out) return ErrnoToStatus(errno, absl::StrCat("report ", tmp, ": write"));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("report ", path, ": rename: ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> RenderJson(const v1::Run& run) {
  std::string json;
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.preserve_proto_field_names = true;
  auto st = google::protobuf::util::MessageToJsonString(run, &json, o);
  if (!st.ok()) return absl::InternalError(absl::StrCat("run to JSON: ", st.message().as_string()));
  return json;
}

absl::StatusOr<v1::Run> LoadRunJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return ErrnoToStatus(errno, absl::StrCat("run file ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  v1::Run run;
  // Unknown fields are refused, as gdrbench-server's HTTP upload refuses them
  // (server/api/http_json.cc): a field this build does not know would be
  // dropped without a word, from a report or from the run the CLI uploads.
  google::protobuf::util::JsonParseOptions o;
  o.ignore_unknown_fields = false;
  auto st = google::protobuf::util::JsonStringToMessage(ss.str(), &run, o);
  if (!st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "run file ", path, ": not a gdrbench run JSON this build can read whole: ", st.message().as_string(),
        " (a field it does not know is refused, not dropped: written by a newer gdrbench?)"));
  }
  return run;
}

absl::StatusOr<std::vector<std::string>> WriteReports(const v1::Run& run, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("--out ", dir, ": ", ec.message()));
  GDR_ASSIGN_OR_RETURN(std::string json, RenderJson(run));
  const std::vector<std::pair<std::string, std::string>> files = {
      {"run.json", json},
      {"pairs.csv", RenderCsv(run)},
      {"summary.md", RenderMarkdown(run)},
      {"report.html", RenderHtml(run)},
      {"junit.xml", RenderJUnit(run)},
  };
  std::vector<std::string> written;
  for (const auto& [name, data] : files) {
    std::string path = (std::filesystem::path(dir) / name).string();
    GDR_RETURN_IF_ERROR(WriteFile(path, data));
    written.push_back(path);
  }
  return written;
}

}  // namespace gdrbench::controller::report
