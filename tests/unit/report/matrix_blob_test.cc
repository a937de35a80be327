// The heatmap's binary matrix (report/matrix_blob.h): the layout
// heatmap.js decodes, byte for byte.
#include "report/matrix_blob.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::report {
namespace {

// Holds the blob it decoded: the sections point into it (a blob decoded from
// a temporary, as Decode(b.Finish()), was read after it was freed: make
// sanitize's ASan found it).
struct Decoded {
  std::string blob;
  google::protobuf::Struct head;
  std::vector<std::pair<std::string, size_t>> sections;  // name -> offset in blob
};

uint32_t U32(const std::string& b, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(b[at + i])} << (8 * i);
  return v;
}

Decoded Decode(std::string data) {
  Decoded d;
  d.blob = std::move(data);
  const std::string& blob = d.blob;
  EXPECT_EQ(blob.substr(0, 4), "GDRM");
  EXPECT_EQ(U32(blob, 4), 1u);
  const uint32_t len = U32(blob, 8);
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(blob.substr(12, len), &d.head).ok());
  const size_t n = static_cast<size_t>(d.head.fields().at("n").number_value());
  size_t off = (12 + len + 7) / 8 * 8;
  for (const auto& s : d.head.fields().at("sections").list_value().values()) {
    const auto& f = s.struct_value().fields();
    const std::string type = f.at("type").string_value();
    const size_t width = type == "f32" ? 4 : type == "u16" ? 2 : 1;
    d.sections.push_back({f.at("name").string_value(), off});
    off = (off + n * n * width + 7) / 8 * 8;
  }
  EXPECT_EQ(off, blob.size());
  return d;
}

const char* Section(const Decoded& d, const std::string& name) {
  for (const auto& [n, off] : d.sections) {
    if (n == name) return d.blob.data() + off;
  }
  return nullptr;
}

TEST(MatrixBlob, CellsLandAtRowSrcColumnDstWithCodesReasonsAndBaselines) {
  MatrixBlobBuilder b({"a", "b\"quoted\"", "c"}, 2, 1 << 20);
  b.Add(0, 1, v1::RESULT_STATUS_OK, 95.5, "pass", 100, 96, "");
  b.Add(1, 0, v1::RESULT_STATUS_OK, 30, "low", 100, 0, "below the fleet median");
  b.Add(2, 0, v1::RESULT_STATUS_ERROR, 0, "fail", 100, 0, "agent unreachable");
  b.Add(0, 2, v1::RESULT_STATUS_SKIPPED, 0, "", 100, 0, "agent unreachable");
  b.Add(7, 0, v1::RESULT_STATUS_OK, 1, "pass", 100, 0, "");  // out of range: ignored
  const Decoded d = Decode(b.Finish());
  const auto& f = d.head.fields();
  EXPECT_EQ(f.at("n").number_value(), 3);
  EXPECT_EQ(f.at("rail").number_value(), 2);
  EXPECT_EQ(f.at("sizeBytes").number_value(), 1 << 20);
  EXPECT_EQ(f.at("nodes").list_value().values(1).string_value(), "b\"quoted\"");
  EXPECT_EQ(f.at("expectedGbps").number_value(), 100);  // one rate: no expected section
  ASSERT_EQ(d.sections.size(), 4u);
  EXPECT_EQ(Section(d, "expected"), nullptr);
  float g[9];
  std::memcpy(g, Section(d, "gbps"), sizeof g);
  EXPECT_FLOAT_EQ(g[0 * 3 + 1], 95.5f);
  EXPECT_FLOAT_EQ(g[1 * 3 + 0], 30.0f);
  EXPECT_TRUE(std::isnan(g[0]));        // the diagonal: not tested
  EXPECT_TRUE(std::isnan(g[2 * 3 + 0]));  // not OK: no value
  const auto* code = reinterpret_cast<const uint8_t*>(Section(d, "code"));
  EXPECT_EQ(code[1], 1 | (1 << 3));   // ok, pass
  EXPECT_EQ(code[3], 1 | (2 << 3));   // ok, low
  EXPECT_EQ(code[6], 3 | (3 << 3));   // error, fail
  EXPECT_EQ(code[2], 4);              // skipped, no verdict
  EXPECT_EQ(code[0], 0);
  float base[9];
  std::memcpy(base, Section(d, "baseline"), sizeof base);
  EXPECT_FLOAT_EQ(base[1], 96.0f);
  EXPECT_FLOAT_EQ(base[3], 0.0f);
  uint16_t reason[9];
  std::memcpy(reason, Section(d, "reason"), sizeof reason);
  const auto& reasons = f.at("reasons").list_value();
  ASSERT_EQ(reasons.values_size(), 3);  // "", and two distinct texts
  EXPECT_EQ(reasons.values(reason[3]).string_value(), "below the fleet median");
  EXPECT_EQ(reason[6], reason[2]);  // the same text once
  EXPECT_EQ(reasons.values(reason[6]).string_value(), "agent unreachable");
  EXPECT_EQ(reason[1], 0);
}

// A cross-rail lane names its targets' rail for the heatmap's labels; a
// same-rail matrix (dst_rail absent or equal) carries none.
TEST(MatrixBlob, ACrossRailLaneCarriesItsTargetsRail) {
  v1::BandwidthMatrix m;
  m.set_rail(1);
  m.set_dst_rail(0);
  m.set_size_bytes(65536);
  m.add_nodes("a");
  m.add_nodes("b");
  const Decoded d = Decode(EncodeMatrix(m));
  EXPECT_EQ(d.head.fields().at("rail").number_value(), 1);
  ASSERT_EQ(d.head.fields().count("dstRail"), 1u);
  EXPECT_EQ(d.head.fields().at("dstRail").number_value(), 0);
  m.set_dst_rail(1);
  EXPECT_EQ(Decode(EncodeMatrix(m)).head.fields().count("dstRail"), 0u);
  m.clear_dst_rail();
  EXPECT_EQ(Decode(EncodeMatrix(m)).head.fields().count("dstRail"), 0u);
}

TEST(MatrixBlob, DifferingLinkRatesGetTheirOwnSection) {
  MatrixBlobBuilder b({"a", "b"}, 0, 65536);
  b.Add(0, 1, v1::RESULT_STATUS_OK, 180, "pass", 200, 0, "");
  b.Add(1, 0, v1::RESULT_STATUS_OK, 380, "pass", 400, 0, "");
  const Decoded d = Decode(b.Finish());
  ASSERT_NE(Section(d, "expected"), nullptr);
  EXPECT_EQ(Section(d, "baseline"), nullptr);
  EXPECT_EQ(Section(d, "reason"), nullptr);
  float e[4];
  std::memcpy(e, Section(d, "expected"), sizeof e);
  EXPECT_FLOAT_EQ(e[1], 200.0f);
  EXPECT_FLOAT_EQ(e[2], 400.0f);
  EXPECT_EQ(d.head.fields().at("expectedGbps").number_value(), 0);
}

TEST(MatrixBlob, AThousandNodesAreFiveBytesPerCell) {
  std::vector<std::string> names;
  for (int i = 0; i < 1024; ++i) names.push_back("node" + std::to_string(i));
  MatrixBlobBuilder b(names, 0, 1 << 20);
  for (uint32_t s = 0; s < 1024; ++s) {
    for (uint32_t t = 0; t < 1024; ++t) {
      if (s != t) b.Add(s, t, v1::RESULT_STATUS_OK, 390, "pass", 400, 0, "");
    }
  }
  const std::string blob = b.Finish();
  EXPECT_LT(blob.size(), 1024u * 1024u * 5u + 20000u);
  EXPECT_GT(blob.size(), 1024u * 1024u * 5u);
}

}  // namespace
}  // namespace gdrbench::report
