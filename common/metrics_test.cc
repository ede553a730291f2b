#include "common/metrics.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "common/metric_family_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

class FixedCollectable : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    MetricFamilyBuilder builder;
    builder.Counter("stoker_test_events_total", "Events.", 3, {{"kind", "a"}});
    builder.Counter("stoker_test_events_total", "Events.", 4, {{"kind", "b"}});
    builder.Gauge("stoker_test_ratio", "A ratio.", 0.5);
    return builder.Take();
  }
};

// GET /metrics over a plain socket; the whole reply.
std::string HttpGet(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request = "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) reply.append(buffer, n);
    }
  }
  close(fd);
  return reply;
}

TEST(MetricFamilyBuilderTest, GroupsSamplesByName) {
  const std::vector<prometheus::MetricFamily> families = FixedCollectable().Collect();
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families[0].name, "stoker_test_events_total");
  EXPECT_EQ(families[0].type, prometheus::MetricType::Counter);
  ASSERT_EQ(families[0].metric.size(), 2u);
  EXPECT_EQ(families[0].metric[1].label[0].value, "b");
  EXPECT_EQ(families[0].metric[1].counter.value, 4);
  EXPECT_EQ(families[1].metric[0].gauge.value, 0.5);
}

TEST(MetricsServerTest, ServesRegisteredCollectablesOnLoopback) {
  auto server = MetricsServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.status();
  auto collectable = std::make_shared<FixedCollectable>();
  (*server)->Register(collectable);
  const std::string reply = HttpGet((*server)->port());
  EXPECT_THAT(reply, HasSubstr("stoker_test_events_total{kind=\"a\"} 3"));
  EXPECT_THAT(reply, HasSubstr("stoker_test_ratio 0.5"));
}

TEST(MetricsServerTest, BusyPortIsUnavailable) {
  auto first = MetricsServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = MetricsServer::Start("127.0.0.1", (*first)->port());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr(absl::StrCat("127.0.0.1:", (*first)->port())));
  EXPECT_EQ(MetricsServer::Start("127.0.0.1", 70000).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stoker
