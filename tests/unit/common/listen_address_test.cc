// The one listen-address rule (issue 32, Why 5): port 70000 is refused, not
// wrapped to 4464 as gRPC's parser does; the same rule as a CLI11 check.
#include "common/listen_address.h"

#include "common/cli_exit.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench {
namespace {

using testing::HasSubstr;

TEST(ListenAddress, AcceptsHostPortV6AndPortZero) {
  auto a = ParseListenAddress("--listen", "127.0.0.1:7070");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 7070);
  auto v6 = ParseListenAddress("--listen", "[::1]:0");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  EXPECT_TRUE(ParseListenAddress("--listen", "0.0.0.0:65535").ok());
}

TEST(ListenAddress, RefusesEachMistakeNamingTheFlag) {
  struct Case {
    const char* address;
    const char* why;
  };
  for (const Case& c : {Case{"127.0.0.1:70000", "port 70000 is outside 0..65535"},
                        Case{"127.0.0.1:65536", "port 65536 is outside 0..65535"},
                        Case{"127.0.0.1:99999999999", "outside 0..65535"},
                        Case{"127.0.0.1:-1", "port '-1' is not a number"},
                        Case{"127.0.0.1:http", "port 'http' is not a number"},
                        Case{"127.0.0.1:", "no port after ':'"}, Case{"127.0.0.1", "no ':PORT'"},
                        Case{":7070", "no host"}, Case{"::1:7070", "needs brackets"}}) {
    auto a = ParseListenAddress("--grpc-listen", c.address);
    ASSERT_FALSE(a.ok()) << c.address;
    EXPECT_TRUE(absl::IsInvalidArgument(a.status()));
    EXPECT_THAT(a.status().message(), HasSubstr(std::string("--grpc-listen '") + c.address + "' is not HOST:PORT"));
    EXPECT_THAT(a.status().message(), HasSubstr(c.why)) << c.address;
  }
}

TEST(ListenAddress, TheCli11CheckIsTheSameRule) {
  CLI::App app;
  std::string listen;
  app.add_option("--grpc-listen", listen)->check(ListenAddressCheck());
  EXPECT_NO_THROW(app.parse(std::vector<std::string>{"127.0.0.1:7071", "--grpc-listen"}));
  try {
    app.parse(std::vector<std::string>{"127.0.0.1:70000", "--grpc-listen"});  // CLI11 reads the vector backwards
    ADD_FAILURE() << "port 70000 accepted";
  } catch (const CLI::ValidationError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--grpc-listen"));
    EXPECT_THAT(e.what(), HasSubstr("port 70000 is outside 0..65535"));
  }
}

}  // namespace
}  // namespace gdrbench
