#include "worker/advertise_address.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

// The route lookup of a pod whose IP is 10.1.2.3, remembering what it was asked.
struct FakeRoute {
  std::string asked;
  absl::StatusOr<std::string> operator()(const std::string& host) {
    asked = host;
    return std::string("10.1.2.3");
  }
};

absl::StatusOr<std::string> Resolve(const std::string& advertise, const std::string& listen,
                                    const std::string& coordinator, FakeRoute* route,
                                    bool local_client_only = false) {
  return ResolveAdvertiseAddress({advertise, listen, coordinator, local_client_only}, 7071,
                                 [route](const std::string& host) { return (*route)(host); });
}

TEST(AdvertiseAddressTest, GivenAddressWinsAndGetsTheBoundPort) {
  FakeRoute route;
  EXPECT_EQ(*Resolve("10.9.9.9", "0.0.0.0:0", "coord:7070", &route), "10.9.9.9:7071");
  EXPECT_EQ(*Resolve("10.9.9.9:9000", "0.0.0.0:0", "coord:7070", &route), "10.9.9.9:9000");
  EXPECT_EQ(*Resolve("fd00::5", "[::]:0", "coord:7070", &route), "[fd00::5]:7071");
  EXPECT_EQ(*Resolve("[fd00::5]:9000", "[::]:0", "coord:7070", &route), "[fd00::5]:9000");
  EXPECT_EQ(*Resolve("worker-0.stoker", "0.0.0.0:0", "coord:7070", &route), "worker-0.stoker:7071");
  EXPECT_EQ(route.asked, "");  // No route lookup when the address is given.
}

TEST(AdvertiseAddressTest, SpecificListenHostIsUsed) {
  FakeRoute route;
  EXPECT_EQ(*Resolve("", "127.0.0.1:0", "127.0.0.1:7070", &route), "127.0.0.1:7071");
  EXPECT_EQ(*Resolve("", "10.0.0.7:0", "coord:7070", &route), "10.0.0.7:7071");
  EXPECT_EQ(route.asked, "");
}

TEST(AdvertiseAddressTest, WildcardListenUsesTheRouteToTheCoordinator) {
  FakeRoute route;
  EXPECT_EQ(*Resolve("", "0.0.0.0:0", "stoker-coordinator:7070", &route), "10.1.2.3:7071");
  EXPECT_EQ(route.asked, "stoker-coordinator");
  EXPECT_EQ(*Resolve("", "[::]:0", "[fd00::1]:7070", &route), "10.1.2.3:7071");
  EXPECT_EQ(route.asked, "fd00::1");
}

TEST(AdvertiseAddressTest, NeverAWildcardOrLoopbackForARemoteCoordinator) {
  FakeRoute route;
  EXPECT_THAT(Resolve("0.0.0.0", "0.0.0.0:0", "coord:7070", &route).status().message(),
              HasSubstr("advertise_address: '0.0.0.0' is not an address a client can dial"));
  EXPECT_THAT(Resolve("[::]:80", "0.0.0.0:0", "coord:7070", &route).status().message(),
              HasSubstr("advertise_address"));
  EXPECT_THAT(Resolve("127.0.0.1", "0.0.0.0:0", "10.0.0.1:7070", &route).status().message(),
              HasSubstr("advertise_address: '127.0.0.1' is loopback"));
  EXPECT_THAT(Resolve("", "127.0.0.1:0", "coord:7070", &route).status().message(),
              HasSubstr("listen_address: '127.0.0.1:0' is loopback"));
  EXPECT_THAT(Resolve("", "localhost:0", "10.0.0.1:7070", &route).status().code(),
              absl::StatusCode::kInvalidArgument);
  // A worker private to a client on its own host (hybrid mode) listens on loopback.
  EXPECT_EQ(*Resolve("", "127.0.0.1:0", "10.0.0.1:7070", &route, /*local_client_only=*/true),
            "127.0.0.1:7071");
  // Loopback to a loopback coordinator is a single-host setup: fine.
  EXPECT_EQ(*Resolve("localhost", "0.0.0.0:0", "localhost:7070", &route), "localhost:7071");
  // A route lookup that lands on a wildcard is refused too.
  EXPECT_EQ(ResolveAdvertiseAddress({"", "0.0.0.0:0", "coord:7070"}, 1,
                                    [](const std::string&) { return std::string("0.0.0.0"); })
                .status()
                .code(),
            absl::StatusCode::kUnavailable);
}

TEST(AdvertiseAddressTest, RealRouteToLoopbackIsLoopback) {
  EXPECT_EQ(*LocalAddressToward("127.0.0.1"), "127.0.0.1");
  EXPECT_THAT(LocalAddressToward("no-such-host.invalid").status().message(),
              HasSubstr("cannot resolve coordinator host 'no-such-host.invalid'"));
}

TEST(AdvertiseAddressTest, SplitsHosts) {
  EXPECT_EQ(HostOfAddress("a:1"), "a");
  EXPECT_EQ(HostOfAddress("[::1]:1"), "::1");
  EXPECT_TRUE(IsWildcardHost("[::]"));
  EXPECT_TRUE(IsLoopbackHost("127.0.0.5"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
}

}  // namespace
}  // namespace stoker
