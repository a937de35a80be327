// v1.SweepSpec -> SweepConfig (controller/sweep/spec.h): the defaults are
// common/sweep_limits.h's, the deprecated string fields give the config the
// typed fields give, an old field beside its typed field and bad typed
// values are INVALID_ARGUMENT naming the field and the bound.
#include "controller/sweep/spec.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/str_cat.h"
#include "common/sweep_limits.h"

// The deprecated fields are what these tests feed in.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace gdrbench::controller::sweep {
namespace {

namespace limits = sweep_limits;
using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::string Refused(const std::function<void(v1::SweepSpec&)>& set, const FieldNames& names = kSpecFields) {
  v1::SweepSpec s;
  set(s);
  absl::StatusOr<SweepConfig> c = ConfigFromSpec(s, names);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << s.ShortDebugString();
  return std::string(c.status().message());
}

// What the request decides; the rest of a SweepConfig is the caller's.
void ExpectSameConfig(const SweepConfig& a, const SweepConfig& b) {
  EXPECT_EQ(a.schedule.mode, b.schedule.mode);
  EXPECT_EQ(a.schedule.bidirectional, b.schedule.bidirectional);
  EXPECT_EQ(a.schedule.quick_matchings, b.schedule.quick_matchings);
  EXPECT_EQ(a.schedule.max_concurrent, b.schedule.max_concurrent);
  EXPECT_EQ(a.schedule.fan_in, b.schedule.fan_in);
  EXPECT_TRUE(MessageDifferencer::Equals(a.params, b.params))
      << a.params.ShortDebugString() << "\nvs\n" << b.params.ShortDebugString();
  EXPECT_EQ(a.memory, b.memory);
  EXPECT_TRUE(MessageDifferencer::Equals(a.policy, b.policy))
      << a.policy.ShortDebugString() << "\nvs\n" << b.policy.ShortDebugString();
  EXPECT_EQ(a.retest_low, b.retest_low);
  EXPECT_EQ(a.parallel, b.parallel);
  EXPECT_EQ(a.preflight, b.preflight);
  EXPECT_EQ(a.force, b.force);
}

TEST(ConfigFromSpec, AnEmptySpecTakesTheDefaultsOfSweepLimits) {
  absl::StatusOr<SweepConfig> c = ConfigFromSpec(v1::SweepSpec());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->params.sizes_bytes(), ElementsAreArray(limits::kDefaultSweepSizes));
  EXPECT_EQ(c->params.iterations(), limits::kDefaultSweepIterations);
  EXPECT_EQ(c->params.duration_ns(), 0);
  EXPECT_EQ(c->params.qps(), limits::kDefaultQps);
  EXPECT_EQ(c->params.tx_depth(), limits::kDefaultTxDepth);
  EXPECT_EQ(c->params.post_list(), limits::kDefaultPostList);
  EXPECT_EQ(c->params.qp_timeout(), limits::kDefaultQpTimeout);
  EXPECT_EQ(c->params.seed(), limits::kDefaultPatternSeed);
  EXPECT_EQ(c->params.cm(), v1::CONNECTION_MODE_AUTO);
  EXPECT_EQ(c->schedule.mode, schedule::Mode::kAllPairs);
  EXPECT_EQ(std::string(schedule::ModeName(c->schedule.mode)), limits::kDefaultMode);
  EXPECT_EQ(c->schedule.quick_matchings, limits::kDefaultQuickRounds);
  EXPECT_EQ(c->retest_low, limits::kDefaultRetestLow);
  EXPECT_EQ(c->parallel, limits::kDefaultParallel);
  EXPECT_EQ(c->retries, limits::kDefaultRetries);
  EXPECT_DOUBLE_EQ(c->policy.min_fraction_of_link(), limits::kDefaultMinFractionOfLink);
  EXPECT_DOUBLE_EQ(c->policy.mad_k(), limits::kDefaultMadK);
  EXPECT_DOUBLE_EQ(c->policy.max_retransmit_fraction(), limits::kDefaultMaxRetransmitFraction);
  EXPECT_EQ(c->memory, "");  // the inventory's
  EXPECT_TRUE(c->preflight);
  EXPECT_TRUE(MessageDifferencer::Equals(c->params, SweepConfig::DefaultParams()));
}

TEST(ConfigFromSpec, OldStringFieldsGiveTheConfigOfTheTypedFields) {
  v1::SweepSpec old_spec;
  old_spec.set_mode("quick");
  old_spec.set_quick_rounds(5);
  old_spec.set_sizes("2-8M");
  old_spec.set_iterations(200);
  old_spec.set_qps(4);
  old_spec.set_bidirectional(true);
  old_spec.set_verify(true);
  old_spec.set_memory("host,gpu");
  old_spec.set_cm("oob");
  old_spec.set_min_link_fraction(0.8);
  old_spec.set_mad_k(4);
  old_spec.set_fleet_min_drop(0.2);
  old_spec.set_retest_low(0);

  v1::SweepSpec typed;
  typed.set_sweep_mode(v1::SWEEP_MODE_QUICK);
  typed.set_quick_rounds(5);
  v1::SweepParams& p = *typed.mutable_params();
  p = SweepConfig::DefaultParams();
  p.clear_sizes_bytes();
  for (uint64_t s = 2; s <= (8u << 20); s <<= 1) p.add_sizes_bytes(s);
  p.set_iterations(200);
  p.set_qps(4);
  p.set_bidirectional(true);
  p.set_verify(true);
  p.set_cm(v1::CONNECTION_MODE_OOB);
  typed.add_memory_kinds(v1::MEMORY_KIND_HOST);
  typed.add_memory_kinds(v1::MEMORY_KIND_GPU);
  v1::VerdictPolicy& pol = *typed.mutable_policy();
  pol = SweepConfig::DefaultPolicy();
  pol.set_min_fraction_of_link(0.8);
  pol.set_mad_k(4);
  pol.set_fleet_min_drop(0.2);
  typed.set_retest_low(0);

  absl::StatusOr<SweepConfig> a = ConfigFromSpec(old_spec);
  absl::StatusOr<SweepConfig> b = ConfigFromSpec(typed);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ExpectSameConfig(*a, *b);
  EXPECT_EQ(a->params.sizes_bytes_size(), 23);
  EXPECT_EQ(a->memory, "host,gpu");
  EXPECT_TRUE(a->schedule.bidirectional);
}

TEST(ConfigFromSpec, AnOldIncastWithADurationIsTheTypedOne) {
  v1::SweepSpec old_spec;
  old_spec.set_mode("incast");
  old_spec.set_fan_in(2);
  old_spec.set_duration_s(2.5);
  old_spec.set_cm("rdma_cm");
  old_spec.set_memory("gpu-staged");

  v1::SweepSpec typed;
  typed.set_sweep_mode(v1::SWEEP_MODE_INCAST);
  typed.set_fan_in(2);
  *typed.mutable_params() = SweepConfig::DefaultParams();
  typed.mutable_params()->set_iterations(0);
  typed.mutable_params()->set_duration_ns(2'500'000'000);
  typed.mutable_params()->set_cm(v1::CONNECTION_MODE_RDMA_CM);
  typed.add_memory_kinds(v1::MEMORY_KIND_GPU_STAGED);

  absl::StatusOr<SweepConfig> a = ConfigFromSpec(old_spec);
  absl::StatusOr<SweepConfig> b = ConfigFromSpec(typed);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ExpectSameConfig(*a, *b);
  EXPECT_EQ(b->schedule.fan_in, 2u);
}

TEST(ConfigFromSpec, ATypedRequestInJsonIsMapped) {
  v1::SweepSpec s;
  auto st = google::protobuf::util::JsonStringToMessage(
      R"({"sweepMode": "SWEEP_MODE_RING", "memoryKinds": ["MEMORY_KIND_HUGEPAGE"],
          "params": {"sizesBytes": ["4096", "65536"], "iterations": "100", "qps": 2, "txDepth": 64,
                     "postList": 1, "qpTimeout": 14, "cm": "CONNECTION_MODE_OOB"},
          "parallel": 8})",
      &s);
  ASSERT_TRUE(st.ok()) << st.ToString();
  absl::StatusOr<SweepConfig> c = ConfigFromSpec(s);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->schedule.mode, schedule::Mode::kRing);
  EXPECT_THAT(c->params.sizes_bytes(), ::testing::ElementsAre(4096u, 65536u));
  EXPECT_EQ(c->params.iterations(), 100u);
  EXPECT_EQ(c->params.qps(), 2u);
  EXPECT_EQ(c->params.tx_depth(), 64u);
  EXPECT_EQ(c->params.cm(), v1::CONNECTION_MODE_OOB);
  EXPECT_EQ(c->memory, "hugepage");
  EXPECT_EQ(c->parallel, 8u);
}

TEST(ConfigFromSpec, AnOldFieldBesideItsTypedFieldIsRefused) {
  auto with_params = [](v1::SweepSpec& s) { *s.mutable_params() = SweepConfig::DefaultParams(); };
  EXPECT_THAT(Refused([](v1::SweepSpec& s) { s.set_mode("ring"); s.set_sweep_mode(v1::SWEEP_MODE_RING); }),
              HasSubstr("mode 'ring' (deprecated) and sweep_mode both given"));
  EXPECT_THAT(Refused([&](v1::SweepSpec& s) { with_params(s); s.set_sizes("64K"); }),
              HasSubstr("params and the deprecated sizes both given: give params only"));
  EXPECT_THAT(Refused([&](v1::SweepSpec& s) { with_params(s); s.set_qps(2); s.set_cm("oob"); }),
              HasSubstr("params and the deprecated qps, cm both given"));
  EXPECT_THAT(Refused([&](v1::SweepSpec& s) { with_params(s); s.set_bidirectional(true); }),
              HasSubstr("deprecated bidirectional"));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) {
                s.set_memory("host");
                s.add_memory_kinds(v1::MEMORY_KIND_HOST);
              }),
              HasSubstr("memory 'host' (deprecated) and memory_kinds both given"));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) {
                s.set_mad_k(2);
                *s.mutable_policy() = SweepConfig::DefaultPolicy();
              }),
              HasSubstr("policy and the deprecated min_link_fraction, mad_k or fleet_min_drop both given"));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) { s.set_iterations(5); s.set_duration_s(1); }),
              HasSubstr("iterations and duration_s exclude each other"));
}

TEST(ConfigFromSpec, BadTypedValuesNameTheFieldAndTheBound) {
  auto params = [](const std::function<void(v1::SweepParams&)>& set) {
    return [set](v1::SweepSpec& s) {
      *s.mutable_params() = SweepConfig::DefaultParams();
      set(*s.mutable_params());
    };
  };
  const std::string sizes_bound = absl::StrCat(": give ", limits::kMinSizeBytes, " .. ", limits::kMaxSizeBytes, " bytes");
  EXPECT_THAT(Refused(params([](v1::SweepParams& p) { p.set_sizes_bytes(0, 0); })),
              HasSubstr(absl::StrCat("params.sizes_bytes 0", sizes_bound)));
  EXPECT_THAT(Refused(params([](v1::SweepParams& p) { p.set_sizes_bytes(1, limits::kMaxSizeBytes + 1); })),
              HasSubstr(absl::StrCat("params.sizes_bytes ", limits::kMaxSizeBytes + 1, sizes_bound)));
  EXPECT_THAT(Refused(params([](v1::SweepParams& p) { p.clear_sizes_bytes(); })),
              HasSubstr(absl::StrCat("params.sizes_bytes: 0 sizes given; give 1 .. ", limits::kMaxSizes)));
  EXPECT_THAT(Refused(params([](v1::SweepParams& p) { p.add_sizes_bytes(4096); })),
              HasSubstr("params.sizes_bytes: ascending and without duplicates"));
  const std::string qps_bound = absl::StrCat(": give 1 .. ", limits::kMaxQps);
  EXPECT_THAT(Refused(params([](v1::SweepParams& p) { p.set_qps(0); })), HasSubstr("params.qps 0" + qps_bound));
  EXPECT_THAT(Refused(params([](v1::SweepParams& p) { p.set_qps(limits::kMaxQps + 1); })),
              HasSubstr(absl::StrCat("params.qps ", limits::kMaxQps + 1, qps_bound)));
  EXPECT_THAT(Refused(params([](v1::SweepParams& p) { p.set_iterations(0); })),
              HasSubstr("params.iterations 0 and params.duration_ns 0: give one"));
  EXPECT_THAT(Refused(params([](v1::SweepParams& p) { p.set_iterations(limits::kMaxIterations + 1); })),
              HasSubstr(absl::StrCat(": at most ", limits::kMaxIterations)));
  EXPECT_THAT(Refused(params([](v1::SweepParams& p) { p.set_cm(static_cast<v1::ConnectionMode>(7)); })),
              HasSubstr("params.cm 7: give CONNECTION_MODE_AUTO"));
  EXPECT_THAT(Refused(params([](v1::SweepParams& p) { p.set_test(v1::TEST_KIND_WRITE_LAT); })),
              HasSubstr("params.test TEST_KIND_WRITE_LAT: a sweep measures write_bw"));
  EXPECT_THAT(Refused(params([](v1::SweepParams& p) { p.set_memory("gpu:0"); })),
              HasSubstr("params.memory 'gpu:0': give memory_kinds"));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) { s.set_sweep_mode(static_cast<v1::SweepMode>(99)); }),
              HasSubstr("sweep_mode 99: give SWEEP_MODE_ALL_PAIRS"));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) { s.add_memory_kinds(v1::MEMORY_KIND_UNSPECIFIED); }),
              HasSubstr("memory_kinds 0: give MEMORY_KIND_HOST"));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) { s.add_memory_kinds(static_cast<v1::MemoryKind>(17)); }),
              HasSubstr("memory_kinds 17: give MEMORY_KIND_HOST"));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) {
                s.add_memory_kinds(v1::MEMORY_KIND_GPU);
                s.add_memory_kinds(v1::MEMORY_KIND_GPU);
              }),
              HasSubstr("memory_kinds: gpu is named twice"));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) {
                *s.mutable_policy() = SweepConfig::DefaultPolicy();
                s.mutable_policy()->set_mad_k(limits::kMaxMadK + 1);
              }),
              HasSubstr(absl::StrCat("policy.mad_k must be 0 to ", limits::kMaxMadK)));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) {
                *s.mutable_policy() = SweepConfig::DefaultPolicy();
                s.mutable_policy()->set_min_gpu_host_ratio(1.5);
              }),
              HasSubstr("policy.min_gpu_host_ratio must be 0 to 1, got 1.5"));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) { s.set_retest_low(limits::kMaxRetestLow + 1); }),
              HasSubstr(absl::StrCat("retest_low must be at most ", limits::kMaxRetestLow)));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) { s.set_parallel(limits::kMaxParallel + 1); }),
              HasSubstr(absl::StrCat("parallel must be 1 to ", limits::kMaxParallel)));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) { s.set_quick_rounds(limits::kMaxQuickRounds + 1); }),
              HasSubstr(absl::StrCat("quick_rounds ", limits::kMaxQuickRounds + 1, ": give 1 .. ",
                                     limits::kMaxQuickRounds)));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) { s.set_sweep_mode(v1::SWEEP_MODE_INCAST); }),
              HasSubstr("sweep_mode incast needs fan_in K"));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) { s.set_sweep_mode(v1::SWEEP_MODE_RING); s.set_fan_in(2); }),
              HasSubstr("fan_in is only for sweep_mode incast, not ring"));
}

TEST(ConfigFromSpec, TheCliNamesItsFlags) {
  auto qps0 = [](v1::SweepSpec& s) {
    *s.mutable_params() = SweepConfig::DefaultParams();
    s.mutable_params()->set_qps(0);
  };
  EXPECT_THAT(Refused(qps0, kFlagNames), HasSubstr(absl::StrCat("--qps 0: give 1 .. ", limits::kMaxQps)));
  EXPECT_THAT(Refused([](v1::SweepSpec& s) { s.set_sweep_mode(v1::SWEEP_MODE_INCAST); }, kFlagNames),
              HasSubstr("--mode incast needs --fan-in K"));
}

TEST(SweepParamsText, SizesAndMemoryKinds) {
  EXPECT_EQ(FormatSizes({65536, 1 << 20, 2, 3072, 1ull << 30}), "64K,1M,2,3K,1G");
  absl::StatusOr<std::vector<uint64_t>> back = ParseSizes(FormatSizes(limits::kDefaultSweepSizes));
  ASSERT_TRUE(back.ok());
  EXPECT_THAT(*back, ElementsAreArray(limits::kDefaultSweepSizes));
  absl::StatusOr<std::vector<v1::MemoryKind>> kinds = ParseMemoryKinds("host, gpu-staged");
  ASSERT_TRUE(kinds.ok()) << kinds.status();
  EXPECT_THAT(*kinds, ::testing::ElementsAre(v1::MEMORY_KIND_HOST, v1::MEMORY_KIND_GPU_STAGED));
  EXPECT_THAT(std::string(ParseMemoryKinds("floppy").status().message()),
              HasSubstr("expected host, hugepage, gpu or gpu-staged"));
  EXPECT_THAT(std::string(ParseMemoryKinds("gpu,gpu").status().message()), HasSubstr("named twice"));
  EXPECT_THAT(std::string(ParseConnectionMode("ipoib", "cm").status().message()),
              HasSubstr("cm 'ipoib': give auto, rdma_cm or oob"));
}

}  // namespace
}  // namespace gdrbench::controller::sweep
