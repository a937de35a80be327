// The dashboard's server side without a browser: sessions (cookie, the
// cross-site rule), the pages' HTML, blame subjects, and the data views over
// a real SQLite store holding runs of the controller's fake cluster.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"

#include "server/api/http_auth.h"
#include "server/history/export.h"
#include "server/web/blame_subject.h"
#include "server/web/pages.h"
#include "server/web/web_data.h"
#include "tests/unit/server/store/store_suite.h"
#include "tests/unit/server/testing/fake_run.h"

namespace gdrbench::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

api::Authorizer Tokens() {
  return *api::Authorizer::Parse("read r-0123456789abcdef dash\nwrite w-0123456789abcdef ci\n", "t");
}

// Issue 31 (low 11): the cookie was the bearer token itself, for 30 days,
// and still worked after logout. It carries a server-side session id now.
TEST(DashboardSession, CookieCarriesASessionIdAndWritesNeedTheHeader) {
  const auto a = Tokens();
  auto writer = a.Check("Bearer w-0123456789abcdef", api::Role::kWrite);
  ASSERT_TRUE(writer.ok());
  auto id = a.sessions().Open(*writer);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(id->size(), 64u);  // 256 random bits as hex
  const std::string set = api::SessionCookie(*id, true);
  EXPECT_THAT(set, HasSubstr("gdrbench_token=" + *id + "; Path=/; HttpOnly; SameSite=Strict; Secure; Max-Age=43200"));
  const std::string cookie = "other=1; gdrbench_token=" + *id;
  auto get = api::AuthenticateHttp(a, {"GET", "", cookie, ""}, api::Role::kRead);
  ASSERT_TRUE(get.ok()) << get.status();
  EXPECT_EQ(get->name, "ci");
  // A write by cookie alone is what a cross-site form would send: refused.
  auto forged = api::AuthenticateHttp(a, {"POST", "", cookie, ""}, api::Role::kWrite);
  EXPECT_EQ(forged.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(forged.status().message()), HasSubstr("X-Gdrbench-Request"));
  EXPECT_TRUE(api::AuthenticateHttp(a, {"POST", "", cookie, "1"}, api::Role::kWrite).ok());
  // A read session cannot write even with the header.
  auto reader = a.sessions().Open(*a.Check("Bearer r-0123456789abcdef", api::Role::kRead));
  ASSERT_TRUE(reader.ok());
  auto read = api::AuthenticateHttp(a, {"POST", "", "gdrbench_token=" + *reader, "1"}, api::Role::kWrite);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kPermissionDenied);
  // The token itself in the cookie is no session.
  EXPECT_EQ(api::AuthenticateHttp(a, {"GET", "", "gdrbench_token=w-0123456789abcdef", ""}, api::Role::kRead)
                .status()
                .code(),
            absl::StatusCode::kUnauthenticated);
  // The Authorization header wins and needs no marker (API clients).
  EXPECT_TRUE(api::AuthenticateHttp(a, {"POST", "Bearer w-0123456789abcdef", "", ""}, api::Role::kWrite).ok());
  EXPECT_EQ(api::AuthenticateHttp(a, {"GET", "", "", ""}, api::Role::kRead).status().code(),
            absl::StatusCode::kUnauthenticated);
  // Logout revokes the session: the old cookie no longer works.
  a.sessions().Revoke(*id);
  auto after = api::AuthenticateHttp(a, {"GET", "", cookie, ""}, api::Role::kRead);
  EXPECT_EQ(after.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(after.status().message()), HasSubstr("log in again"));
  EXPECT_THAT(api::ClearedSessionCookie(false), HasSubstr("Max-Age=0"));
}

TEST(DashboardSession, SessionsExpire) {
  auto now = api::SessionStore::Clock::now();
  api::SessionStore store([&] { return now; });
  auto id = store.Open(api::Principal{"ci", api::Role::kWrite});
  ASSERT_TRUE(id.ok());
  now += api::SessionStore::kLifetime - std::chrono::seconds(1);
  EXPECT_TRUE(store.Find(*id).has_value());
  now += std::chrono::seconds(1);
  EXPECT_FALSE(store.Find(*id).has_value());
  auto other = store.Open(api::Principal{"ci", api::Role::kWrite});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *id);
}

TEST(DashboardSession, CookieValuesArePercentEncoded) {
  const std::string set = api::SessionCookie("a;b c%d=", false);
  const std::string value = set.substr(std::strlen("gdrbench_token="), set.find(';') - std::strlen("gdrbench_token="));
  EXPECT_EQ(value, "a%3Bb%20c%25d=");
  EXPECT_EQ(api::CookieValue("x=1; gdrbench_token=" + value, "gdrbench_token"), "a;b c%d=");
  EXPECT_EQ(api::CookieValue("gdrbench_tokenx=1", "gdrbench_token"), "");
}

TEST(DashboardPages, ShellsEscapeTheUserAndListTheirScripts) {
  const web::Page* run = web::FindPage("runs/20261201-000000-ab12");
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->name, "run");
  EXPECT_EQ(web::FindPage("admin"), nullptr);
  const std::string html = web::RenderPage(*run, {"<ci>", api::Role::kWrite}, false);
  EXPECT_THAT(html, HasSubstr("data-page=\"run\" data-user=\"&lt;ci&gt;\" data-role=\"write\""));
  EXPECT_THAT(html, HasSubstr("<script src=\"/ui/assets/heatmap.js?v="));
  EXPECT_THAT(html, HasSubstr("action=\"/ui/logout\""));
  EXPECT_THAT(html, Not(HasSubstr("<script>")));  // no inline script (the CSP allows none)
  EXPECT_THAT(web::RenderPage(*run, {"anonymous", api::Role::kWrite}, true), Not(HasSubstr("logout")));
  const std::string login = web::RenderLogin("/ui/runs?cluster=a\"b", "That token is not known.");
  EXPECT_THAT(login, HasSubstr("value=\"/ui/runs?cluster=a&quot;b\""));
  EXPECT_THAT(login, HasSubstr("role=\"alert\">That token is not known.</p>"));
}

TEST(DashboardPages, LoginRedirectsOnlyToOurOwnPages) {
  EXPECT_EQ(web::SafeNext("/ui/runs/abc?x=1"), "/ui/runs/abc?x=1");
  for (const char* bad : {"https://evil.example/ui/", "//evil.example/ui/runs", "/ui//evil", "/api/v1/runs",
                          "/ui/login", "/ui/\\evil", "/ui/runs\r\nSet-Cookie: x", ""}) {
    EXPECT_EQ(web::SafeNext(bad), "/ui/runs") << bad;
  }
}

v1::Blame B(const std::string& kind, const std::string& subject) {
  v1::Blame b;
  b.set_kind(kind);
  b.set_subject(subject);
  return b;
}

TEST(BlameSubject, NodesNicsLinksAndRailsAgainstTheRunsNames) {
  const std::set<std::string> names = {"node1", "node2", "rack-7 a", "x->y"};
  auto node = web::ParseBlameSubject(B("node", "node1"), names);
  ASSERT_TRUE(node);
  EXPECT_EQ(node->nodes, std::vector<std::string>{"node1"});
  auto nic = web::ParseBlameSubject(B("nic", "rack-7 a rail 3"), names);
  ASSERT_TRUE(nic);
  EXPECT_EQ(nic->nodes, std::vector<std::string>{"rack-7 a"});
  EXPECT_EQ(*nic->rail, 3u);
  auto link = web::ParseBlameSubject(B("link", "node1<->node2 rail 1"), names);
  ASSERT_TRUE(link);
  EXPECT_EQ(link->nodes, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_TRUE(link->both_directions);
  EXPECT_EQ(*link->rail, 1u);
  auto odd = web::ParseBlameSubject(B("link", "x->y->node2"), names);  // a name with "->" in it
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->nodes, (std::vector<std::string>{"x->y", "node2"}));
  EXPECT_FALSE(odd->both_directions);
  EXPECT_FALSE(odd->rail);
  auto rail = web::ParseBlameSubject(B("rail", "rail 2"), names);
  ASSERT_TRUE(rail);
  EXPECT_EQ(*rail->rail, 2u);
  EXPECT_FALSE(web::ParseBlameSubject(B("node", "node9"), names));
  EXPECT_FALSE(web::ParseBlameSubject(B("link", "node1->node9"), names));
  EXPECT_FALSE(web::ParseBlameSubject(B("nic", "node1 rail x"), names));
}

class WebDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = testing::OpenTestStore("webdata");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    for (int k = 0; k < 3; ++k) {
      testing::FakeRunSpec spec;
      spec.nodes = 4;
      spec.rails = 2;
      spec.run_id = "w-" + std::to_string(k);
      spec.started_unix_s = 1767225600 + k * 86400;
      spec.preflight_fail = {2};
      // Run w-1 and w-2: node0 -> node3 on rail 1 at a third of the link rate.
      spec.model = [k](uint32_t s, uint32_t d, const std::string& nic) {
        if (k >= 1 && s == 0 && d == 3 && nic == "nic1") return 130.0;
        return testing::DefaultModel(s, d, nic);
      };
      auto st = history::StoreRun(*store_, testing::FakeRun(spec), {});
      ASSERT_TRUE(st.ok()) << st.status();
    }
  }
  store::RunRow Row(const std::string& id) { return **store_->FindRun(id); }
  std::unique_ptr<store::Store> store_;
};

TEST_F(WebDataTest, OverviewHasMatricesBlameFindingsButNoInventory) {
  auto o = web::RunOverview(*store_, Row("w-2"));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->summary().run_id(), "w-2");
  EXPECT_EQ(o->summary().verdict_cells(), 2u * 12);
  ASSERT_EQ(o->matrices_size(), 4);  // 2 rails x 2 sizes, by rail then size
  EXPECT_EQ(o->matrices(0).rail(), 0u);
  EXPECT_FALSE(o->matrices(0).verdict_size());
  EXPECT_TRUE(o->matrices(1).verdict_size());
  EXPECT_EQ(o->matrices(1).nodes(), 4u);
  EXPECT_EQ(o->nodes_size(), 4);
  // Blamed: the slow link. node2 is left out of the sweep by its preflight
  // FAIL: its cells are skipped, which blames nobody; the exclusion names it.
  std::vector<std::string> blamed;
  for (const auto& b : o->blame()) blamed.push_back(b.subject());
  EXPECT_THAT(blamed, ::testing::UnorderedElementsAre("node0->node3 rail 1"));
  ASSERT_EQ(o->excluded_nodes_size(), 1);
  EXPECT_THAT(o->excluded_nodes(0), ::testing::StartsWith("node2: "));
  // ... and said once, by its cause, with the remedy, as the sweep's last lines say it.
  ASSERT_EQ(o->left_out_size(), 1);
  EXPECT_THAT(
      o->left_out(0).line(),
      ::testing::StartsWith("1 of 4 nodes left out by the preflight (a check FAILed): node2; node2: "));
  EXPECT_THAT(o->left_out(0).remedy(), ::testing::HasSubstr("gdrbench preflight"));
  EXPECT_THAT(o->left_out(0).nodes(), ::testing::ElementsAre("node2"));
  ASSERT_EQ(o->preflight_size(), 1);
  EXPECT_EQ(o->preflight(0).node(), "node2");
  EXPECT_EQ(o->preflight(0).problems(0).remediation(), "modprobe nvidia-peermem");
  EXPECT_EQ(o->preflight_nodes(), 4u);
}

TEST_F(WebDataTest, MatrixBlobOfTheDefaultAndOfAChosenRailAndSize) {
  auto blob = web::MatrixBlob(*store_, Row("w-2"), std::nullopt, 0);
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_EQ(blob->substr(0, 4), "GDRM");
  EXPECT_THAT(*blob, HasSubstr("\"rail\":0"));
  EXPECT_THAT(*blob, HasSubstr("\"sizeBytes\":1048576"));
  auto r1 = web::MatrixBlob(*store_, Row("w-2"), 1, 65536);
  ASSERT_TRUE(r1.ok());
  EXPECT_THAT(*r1, HasSubstr("\"rail\":1"));
  EXPECT_THAT(*r1, HasSubstr("\"sizeBytes\":65536"));
  EXPECT_EQ(web::MatrixBlob(*store_, Row("w-2"), 5, 0).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(web::MatrixBlob(*store_, Row("w-2"), 0, 4096).status().code(), absl::StatusCode::kNotFound);
}

// A matrix blob (report/matrix_blob.h): its JSON head (the key
// order of a protobuf Struct is not fixed) and the cell sections' bytes.
struct Blob {
  google::protobuf::Struct head;
  std::string sections;
};
Blob Split(const std::string& blob) {
  Blob b;
  uint32_t len = 0;
  std::memcpy(&len, blob.data() + 8, 4);
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(blob.substr(12, len), &b.head).ok());
  b.sections = blob.substr(12 + len);
  return b;
}

// The run page's first request: the verdict size's matrix is encoded at
// ingest and read back as one blob, byte for byte what the cells give
// (baseline values from the cluster's baseline run included); other sizes
// are built from the cells.
TEST(WebMatrixBlob, StoredAtIngestIsWhatTheCellsGive) {
  auto s = testing::OpenTestStore("webblob");
  ASSERT_TRUE(s.ok()) << s.status();
  auto& store = **s;
  for (int k = 0; k < 2; ++k) {
    testing::FakeRunSpec spec;
    spec.nodes = 5;
    spec.run_id = "b-" + std::to_string(k);
    spec.started_unix_s = 1767225600 + k * 86400;
    spec.preflight_fail = {4};
    spec.model = [k](uint32_t s, uint32_t d, const std::string& nic) {
      return k == 1 && s == 1 && d == 2 ? 200.0 : testing::DefaultModel(s, d, nic);
    };
    ASSERT_TRUE(history::StoreRun(store, testing::FakeRun(spec), {}).ok());
    if (k == 0) {
      ASSERT_TRUE(store.SetBaseline("lab", (*store.FindRun("b-0"))->key, "test").ok());
    }
  }
  const store::RunRow run = **store.FindRun("b-1");
  auto stored = store.ReadMatrixBlob(run.key, 0, 1 << 20);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_TRUE(stored->has_value()) << "the verdict size's matrix is stored at ingest";
  EXPECT_FALSE(store.ReadMatrixBlob(run.key, 0, 65536)->has_value()) << "only the verdict size";
  auto served = web::MatrixBlob(store, run, std::nullopt, 0);
  auto cells = web::MatrixBlobFromCells(store, run, std::nullopt, 0);
  ASSERT_TRUE(served.ok() && cells.ok()) << served.status() << cells.status();
  EXPECT_EQ(*served, **stored);
  const Blob a = Split(*served), b = Split(*cells);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a.head, b.head))
      << a.head.DebugString() << " vs " << b.head.DebugString();
  EXPECT_TRUE(a.sections == b.sections) << "the stored cells differ from the ones the store's cells give";
  std::vector<std::string> sections;
  for (const auto& v : a.head.fields().at("sections").list_value().values()) {
    sections.push_back(v.struct_value().fields().at("name").string_value());
  }
  EXPECT_EQ(sections, (std::vector<std::string>{"gbps", "code", "baseline", "reason"}));
  auto small = web::MatrixBlob(store, run, 0, 65536);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_TRUE(Split(*small).sections == Split(*web::MatrixBlobFromCells(store, run, 0, 65536)).sections);
  // Retention takes the blob with its run.
  ASSERT_TRUE(store.DeleteRunsBefore(1767225600 * int64_t{1000000} + 2 * 86400 * int64_t{1000000}).ok());
  EXPECT_FALSE(store.FindRun("b-1")->has_value());
  EXPECT_FALSE(store.ReadMatrixBlob(run.key, 0, 1 << 20)->has_value());
}

TEST_F(WebDataTest, NodeAndLinkHistoriesSayWhenFirstBlamed) {
  web::HistoryQuery link;
  link.cluster = "lab";
  link.src = "node3";  // either direction
  link.dst = "node0";
  auto h = web::History(*store_, link);
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->runs_size(), 3);
  EXPECT_EQ(h->runs(0).run_id(), "w-2");  // newest first
  EXPECT_EQ(h->runs_blamed(), 2u);
  EXPECT_EQ(h->first_blamed_run_id(), "w-1");
  EXPECT_EQ(h->blamed_since_run_id(), "w-1");
  EXPECT_EQ(h->runs(2).blame_size(), 0);
  link.rail = 0;  // the other rail: never blamed
  EXPECT_EQ(web::History(*store_, link)->runs_blamed(), 0u);

  web::HistoryQuery node;
  node.cluster = "lab";
  node.node = "node2";
  auto n = web::History(*store_, node);
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(n->runs(0).preflight_ran());
  EXPECT_EQ(n->runs(0).preflight().overall(), v1::CHECK_STATUS_FAIL);
  EXPECT_EQ(n->runs_blamed(), 3u);  // left out of every sweep by that FAIL
  EXPECT_EQ(n->first_blamed_run_id(), "w-0");
  node.last = 0;
  EXPECT_EQ(web::History(*store_, node).status().code(), absl::StatusCode::kInvalidArgument);
  web::HistoryQuery neither;
  neither.cluster = "lab";
  EXPECT_EQ(web::History(*store_, neither).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gdrbench::server
