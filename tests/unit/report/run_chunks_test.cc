// A whole run cut into upload chunks (report/run_chunks.h): the header
// without cells or pairs, each matrix's cells in chunks that name their
// matrix, then the pairs.
#include "report/run_chunks.h"

#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::report {
namespace {

v1::BandwidthMatrix Matrix(uint32_t rail, std::optional<uint32_t> dst_rail, int cells) {
  v1::BandwidthMatrix m;
  m.set_rail(rail);
  if (dst_rail) m.set_dst_rail(*dst_rail);
  m.set_size_bytes(65536);
  m.add_nodes("node1");
  m.add_nodes("node2");
  for (int i = 0; i < cells; ++i) {
    v1::MatrixCell* c = m.add_cells();
    c->set_src(i % 2);
    c->set_dst(1 - i % 2);
    c->set_bw_avg_gbps(90 + i);
  }
  return m;
}

// --mode cross-rail: rail 0's initiators have a matrix per target rail at
// the same size (controller.proto: MatrixCells.dst_rail, "Absent: rail").
// Each cell chunk names its lane, so a reader can tell the two apart.
TEST(RunChunks, EachCellChunkNamesItsMatrixsLaneTargetRailIncluded) {
  v1::Run run;
  run.set_run_id("r");
  *run.add_matrices() = Matrix(0, std::nullopt, 3);
  *run.add_matrices() = Matrix(0, 1, 2);
  run.add_pairs()->set_rail(0);
  std::vector<v1::RunChunk> chunks;
  ASSERT_TRUE(ForEachRunChunk(run, {2, 10}, [&](const v1::RunChunk& c) {
                chunks.push_back(c);
                return absl::OkStatus();
              }).ok());
  ASSERT_EQ(chunks.size(), 5u);  // header, 2 + 1 cells of the first, 2 of the second, the pairs
  EXPECT_TRUE(chunks[0].has_header());
  EXPECT_EQ(chunks[0].header().matrices(1).dst_rail(), 1u);
  EXPECT_EQ(chunks[0].header().matrices(0).cells_size(), 0);
  EXPECT_EQ(chunks[0].header().pairs_size(), 0);
  for (int i : {1, 2}) {
    EXPECT_EQ(chunks[i].cells().rail(), 0u);
    EXPECT_FALSE(chunks[i].cells().has_dst_rail()) << i;
  }
  EXPECT_EQ(chunks[1].cells().cells_size(), 2);
  EXPECT_EQ(chunks[2].cells().cells_size(), 1);
  ASSERT_TRUE(chunks[3].has_cells());
  EXPECT_TRUE(chunks[3].cells().has_dst_rail());
  EXPECT_EQ(chunks[3].cells().dst_rail(), 1u);
  EXPECT_EQ(chunks[3].cells().cells_size(), 2);
  EXPECT_EQ(chunks[4].pairs().pairs_size(), 1);
}

}  // namespace
}  // namespace gdrbench::report
