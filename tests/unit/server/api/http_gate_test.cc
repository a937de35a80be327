// The HTTP gate's decisions, made from a request's line and headers before
// its body is read (server/api/http_gate.h). The framing rules are RFC 9112's
// (https://www.rfc-editor.org/rfc/rfc9112#section-6.3).
#include "server/api/http_gate.h"

#include "gtest/gtest.h"

namespace gdrbench::server::api {
namespace {

constexpr uint64_t kRunLimit = 256u << 20;
constexpr char kWrite[] = "Bearer w-0123456789abcdef";
constexpr char kRead[] = "Bearer r-0123456789abcdef";

class Gate : public ::testing::Test {
 protected:
  Gate() : routes_(ApiBodyRoutes(kRunLimit)) {
    routes_.push_back({"POST", "/ui/login", std::nullopt, 8 << 10});
    auto a = Authorizer::Parse("read r-0123456789abcdef dash\nwrite w-0123456789abcdef ci\n", "t");
    EXPECT_TRUE(a.ok());
    auth_ = *a;
  }
  std::variant<Admission, Refusal> Run(std::string_view method, std::string_view path,
                                       std::vector<std::string_view> cl, std::vector<std::string_view> te,
                                       std::string_view authorization = kWrite) {
    GateRequest r{method, path, std::move(cl), std::move(te), authorization, "", ""};
    return Admit(r, routes_, auth_);
  }
  static Refusal Refused(const std::variant<Admission, Refusal>& d) {
    EXPECT_TRUE(std::holds_alternative<Refusal>(d));
    return std::holds_alternative<Refusal>(d) ? std::get<Refusal>(d) : Refusal{0, {}, "admitted", false};
  }
  std::vector<BodyRoute> routes_;
  Authorizer auth_ = Authorizer::AllowAll();
};

TEST(PathMatches, StarIsOneNonEmptySegment) {
  EXPECT_TRUE(PathMatches("/api/v1/clusters/*/baseline", "/api/v1/clusters/lab/baseline"));
  EXPECT_FALSE(PathMatches("/api/v1/clusters/*/baseline", "/api/v1/clusters//baseline"));
  EXPECT_FALSE(PathMatches("/api/v1/clusters/*/baseline", "/api/v1/clusters/a/b/baseline"));
  EXPECT_FALSE(PathMatches("/api/v1/runs", "/api/v1/runs/"));
  EXPECT_TRUE(PathMatches("/api/v1/runs", "/api/v1/runs"));
}

TEST_F(Gate, AnUnauthenticatedBodyIsRefusedBeforeItIsRead) {
  Refusal r = Refused(Run("POST", "/api/v1/runs", {}, {"chunked"}, ""));
  EXPECT_EQ(r.status, 401);
  EXPECT_TRUE(r.unauthenticated);
  r = Refused(Run("POST", "/api/v1/runs", {"262144000"}, {}, ""));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Refused(Run("POST", "/api/v1/runs", {"10"}, {}, kRead)).status, 403);
  EXPECT_EQ(Refused(Run("PUT", "/api/v1/clusters/lab/baseline", {"10"}, {}, "Bearer nope-0123456789abcdef")).status, 401);
}

TEST_F(Gate, ARouteWithoutABodyRefusesOne) {
  Refusal r = Refused(Run("GET", "/healthz", {}, {"chunked"}, ""));
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.message, "GET /healthz takes no request body");
  EXPECT_EQ(Refused(Run("GET", "/api/v1/runs", {"5"}, {})).status, 413);
  EXPECT_EQ(Refused(Run("POST", "/api/v1/nothing", {"5"}, {})).status, 413);
  // No body announced: the route answers as usual (404, 401 ...).
  EXPECT_TRUE(std::holds_alternative<Admission>(Run("GET", "/healthz", {}, {}, "")));
  EXPECT_TRUE(std::holds_alternative<Admission>(Run("GET", "/healthz", {"0"}, {}, "")));
}

TEST_F(Gate, ContentLengthMustBeOneDecimalNumber) {
  EXPECT_EQ(Refused(Run("POST", "/api/v1/runs", {"5", "6"}, {})).message,
            "the request has two different Content-Length values");
  EXPECT_EQ(Refused(Run("POST", "/api/v1/runs", {"5, 6"}, {})).status, 400);
  EXPECT_EQ(Refused(Run("POST", "/api/v1/runs", {"-1"}, {})).message,
            "Content-Length '-1' is not a decimal number of at most 18 digits");
  EXPECT_EQ(Refused(Run("POST", "/api/v1/runs", {"+5"}, {})).status, 400);
  EXPECT_EQ(Refused(Run("POST", "/api/v1/runs", {"0x10"}, {})).status, 400);
  EXPECT_EQ(Refused(Run("POST", "/api/v1/runs", {"99999999999999999999"}, {})).status, 400);
  EXPECT_EQ(Refused(Run("POST", "/api/v1/runs", {""}, {})).status, 400);
  // The same value twice, or a list of one value, is one length.
  auto same = Run("POST", "/api/v1/runs", {"5", "5, 5"}, {});
  ASSERT_TRUE(std::holds_alternative<Admission>(same));
  EXPECT_EQ(std::get<Admission>(same).length, 5u);
}

TEST_F(Gate, LengthAndChunkedTogetherOrAnotherCodingAreRefused) {
  EXPECT_EQ(Refused(Run("POST", "/api/v1/runs", {"5"}, {"chunked"})).status, 400);
  EXPECT_EQ(Refused(Run("POST", "/api/v1/runs", {}, {"gzip, chunked"})).status, 501);
  EXPECT_EQ(Refused(Run("POST", "/api/v1/runs", {}, {"chunked", "chunked"})).status, 501);
}

TEST_F(Gate, ALengthOverTheRouteLimitIsRefusedUnread) {
  Refusal r = Refused(Run("POST", "/api/v1/runs", {"1073741824"}, {}));
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.code, absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(r.message, "POST /api/v1/runs: a body of 1073741824 bytes is over the limit of 268435456 bytes");
  EXPECT_EQ(Refused(Run("POST", "/api/v1/sweeps", {"2000000"}, {})).status, 413);
  EXPECT_EQ(Refused(Run("POST", "/ui/login", {"9000"}, {}, "")).status, 413);
}

TEST_F(Gate, AdmittedBodiesCarryTheirFramingAndLimit) {
  auto a = Run("POST", "/api/v1/runs", {}, {"Chunked"});
  ASSERT_TRUE(std::holds_alternative<Admission>(a));
  EXPECT_EQ(std::get<Admission>(a).framing, Admission::Framing::kChunked);
  EXPECT_EQ(std::get<Admission>(a).max_bytes, kRunLimit);
  a = Run("PUT", "/api/v1/clusters/lab/baseline", {"120"}, {});
  ASSERT_TRUE(std::holds_alternative<Admission>(a));
  EXPECT_EQ(std::get<Admission>(a).framing, Admission::Framing::kLength);
  EXPECT_EQ(std::get<Admission>(a).length, 120u);
  // The login form needs no token.
  EXPECT_TRUE(std::holds_alternative<Admission>(Run("POST", "/ui/login", {"40"}, {}, "")));
}

TEST(BodyDeadline, ABaseTimePlusTheSizeAtTheMinimumRate) {
  HttpLimits l;
  l.body_timeout = std::chrono::seconds(30);
  l.body_min_bytes_per_second = 1 << 20;
  EXPECT_EQ(BodyDeadline(l, 0), std::chrono::seconds(30));
  EXPECT_EQ(BodyDeadline(l, 256u << 20), std::chrono::seconds(30 + 256));
  EXPECT_EQ(BodyDeadline(l, 1 << 19), std::chrono::milliseconds(30'500));
}

}  // namespace
}  // namespace gdrbench::server::api
