#include "coordinator/etcd/etcd_client.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;

TEST(ParseEtcdTargetTest, ReadsEndpointsAndPrefix) {
  absl::StatusOr<EtcdTarget> target =
      ParseEtcdTarget("etcd://10.0.0.1:2379,etcd-1.etcd:2379,[::1]:2379/stoker", "--state");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_THAT(target->endpoints, ElementsAre("10.0.0.1:2379", "etcd-1.etcd:2379", "[::1]:2379"));
  EXPECT_EQ(target->prefix, "/stoker/");
}

TEST(ParseEtcdTargetTest, ATrailingSlashNamesTheSamePrefix) {
  absl::StatusOr<EtcdTarget> target = ParseEtcdTarget("etcd://h:1/a/b/", "--state");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->prefix, "/a/b/");
}

void ExpectTargetError(const std::string& spec, const std::string& message) {
  absl::StatusOr<EtcdTarget> target = ParseEtcdTarget(spec, "--state");
  EXPECT_EQ(target.status(), absl::InvalidArgumentError(message)) << spec;
}

TEST(ParseEtcdTargetTest, NamesTheFieldAndWhatIsWrong) {
  const std::string want = " (want etcd://HOST:PORT[,HOST:PORT...]/PREFIX)";
  ExpectTargetError("http://h:1/p", "--state: \"http://h:1/p\" is not an etcd:// address" + want);
  ExpectTargetError("etcd:///p", "--state: no etcd endpoint in \"etcd:///p\"" + want);
  ExpectTargetError("etcd://h/p", "--state: etcd endpoint \"h\" is not HOST:PORT" + want);
  ExpectTargetError("etcd://h:1,/p", "--state: etcd endpoint \"\" is not HOST:PORT" + want);
  ExpectTargetError("etcd://h:x/p", "--state: etcd endpoint \"h:x\" is not HOST:PORT" + want);
  ExpectTargetError("etcd://h:70000/p",
                    "--state: etcd endpoint \"h:70000\" is not HOST:PORT" + want);
  ExpectTargetError("etcd://:1/p", "--state: etcd endpoint \":1\" is not HOST:PORT" + want);
  ExpectTargetError("etcd://h:1", "--state: no key prefix in \"etcd://h:1\"" + want);
  ExpectTargetError("etcd://h:1//", "--state: no key prefix in \"etcd://h:1//\"" + want);
}

TEST(EtcdPrefixEndTest, IncrementsTheLastByteThatCan) {
  EXPECT_EQ(EtcdPrefixEnd("/stoker/"), "/stoker0");
  EXPECT_EQ(EtcdPrefixEnd(std::string("a\xff\xff", 3)), "b");
  EXPECT_EQ(EtcdPrefixEnd(std::string("\xff", 1)), std::string(1, '\0'));
  EXPECT_EQ(EtcdPrefixEnd(""), std::string(1, '\0'));
}

}  // namespace
}  // namespace stoker
