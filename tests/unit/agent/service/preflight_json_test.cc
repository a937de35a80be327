// gdrbench-preflight --json (agent/preflight/report_json.h, no protobuf)
// prints the document `gdrbench-agent preflight --json` prints (protobuf's
// JSON mapping of v1.PreflightReport, agent/service/preflight_offline.cc):
// both are read back as JSON and compared, for reports of real captured
// trees (tests/testdata/preflight, sources cited in its README) and for a
// report with every field at its default and one with bytes that are not
// UTF-8.
#include <string>

#include "agent/preflight/preflight.h"
#include "agent/preflight/report_json.h"
#include "agent/service/preflight_proto.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace gdrbench::agent {
namespace {

std::string ProtoJson(const preflight::Report& r) {
  google::protobuf::util::JsonPrintOptions jo;
  jo.add_whitespace = true;
  jo.preserve_proto_field_names = true;  // as preflight_offline.cc
  std::string out;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(service::ToProto(r), &out, jo).ok());
  return out;
}

void ExpectSameDocument(const preflight::Report& r) {
  const auto ours = nlohmann::json::parse(preflight::ReportJson(r));
  const auto theirs = nlohmann::json::parse(ProtoJson(r));
  EXPECT_EQ(ours, theirs) << "ours:\n" << ours.dump(2) << "\nprotobuf's:\n" << theirs.dump(2);
}

TEST(PreflightJson, RealTreesPrintAsTheAgentPrintsThem) {
  for (const char* tree : {"dgx-h100", "dgx-a100", "captured-lab-guest", "fault-acs"}) {
    SCOPED_TRACE(tree);
    auto r =
        preflight::RunPreflightAt(std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/preflight/" + tree, {});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_FALSE(r->checks.empty());
    ExpectSameDocument(*r);
  }
}

TEST(PreflightJson, DefaultsAreLeftOutAsProtobufLeavesThemOut) {
  preflight::Report r;  // no hostname, no checks, overall PASS, 0 ns
  ExpectSameDocument(r);
  preflight::CheckResult c;
  c.id = "x";
  c.status = preflight::Status::kSkip;
  r.checks.push_back(c);
  r.duration_ns = -5;
  ExpectSameDocument(r);
}

TEST(PreflightJson, EvidenceThatIsNotUtf8IsPrintedNotThrown) {
  preflight::Report r;
  preflight::CheckResult c;
  c.id = "secure_boot";
  c.status = preflight::Status::kWarn;
  c.Saw("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
        std::string("\x06\0\0\0\xff", 5));
  r.checks.push_back(c);
  const std::string out = preflight::ReportJson(r);
  const auto doc = nlohmann::json::parse(out);
  EXPECT_EQ(doc["checks"][0]["status"], "CHECK_STATUS_WARN");
  EXPECT_FALSE(doc["checks"][0]["evidence"][0]["observed"].get<std::string>().empty());
}

}  // namespace
}  // namespace gdrbench::agent
