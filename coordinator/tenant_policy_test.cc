#include "coordinator/tenant_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

TEST(TenantPolicyTest, ParsesTenantsAndDefaults) {
  absl::StatusOr<TenantPolicy> policy =
      ParseTenantPolicy("f", R"({"tenants": {"vision": {"weight": 3, "max_jobs": 8},
                           "default": {"max_ranks": "64"}},
               "defaults": {"weight": 0.5, "max_prefetch_bytes_per_worker": "1048576",
                            "max_trace_windows": 1, "max_bearer_tokens": 2}})");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ(policy->For("vision").weight, 3);
  EXPECT_EQ(policy->For("vision").max_jobs, 8u);
  EXPECT_EQ(policy->For("vision").max_prefetch_bytes_per_worker, 0u);  // own entry: unlimited
  EXPECT_EQ(policy->For("default").max_ranks, 64u);
  EXPECT_EQ(policy->For("default").weight, 1);  // unset weight: 1
  EXPECT_EQ(policy->For("nlp").weight, 0.5);
  EXPECT_EQ(policy->For("nlp").max_prefetch_bytes_per_worker, 1u << 20);
  EXPECT_EQ(policy->For("nlp").max_trace_windows, 1u);
  EXPECT_EQ(policy->For("nlp").max_bearer_tokens, 2u);
  EXPECT_EQ(TenantPolicy().For("any").weight, 1);
}

TEST(TenantPolicyTest, NamesWhatIsWrong) {
  const struct {
    const char* json;
    const char* message;
  } bad[] = {
      {R"({"tenants": {"Team_A": {}}})", "f: tenants.Team_A: a tenant name has only"},
      {R"({"tenants": {"a": {"weight": 0}}})", "f: tenants.a.weight: 0 is not in (0, 1000]"},
      {R"({"tenants": {"a": {"weight": -1}}})", "f: tenants.a.weight: -1 is not in"},
      {R"({"defaults": {"weight": 1001}})", "f: defaults.weight: 1001 is not in"},
      {R"({"tenants": {"a": {"max_jobz": 1}}})", "f: "},
      {R"({"tenants": [})", "f: "},
  };
  for (const auto& [json, message] : bad) {
    const absl::Status status = ParseTenantPolicy("f", json).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << json;
    EXPECT_THAT(status.message(), HasSubstr(message)) << json;
  }
  EXPECT_THAT(ParseTenantPolicy("f", R"({"tenants": {"a": {"max_jobz": 1}}})").status().message(),
              HasSubstr("max_jobz"));
}

TEST(TenantPolicyTest, TheFileIsReReadWhenItChangesAndABrokenVersionKeepsThePolicy) {
  char dir[] = "/tmp/stoker-tenant-policy-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/policy.json";
  auto write = [&](const std::string& text) {
    const std::string next = path + ".next";
    std::ofstream(next) << text;
    ASSERT_EQ(rename(next.c_str(), path.c_str()), 0);  // as a ConfigMap is updated
  };
  write(R"({"tenants": {"a": {"weight": 2}}})");
  TenantPolicyFile file("tenant_policy_path", path);
  std::optional<TenantPolicy> first = file.Refresh();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->For("a").weight, 2);
  EXPECT_FALSE(file.Refresh().has_value());  // unchanged
  write(R"({"tenants": {"a": {"weight": "two"}}})");
  EXPECT_FALSE(file.Refresh().has_value());  // broken: logged, the policy in force stays
  write(R"({"tenants": {"a": {"weight": 4}}})");
  std::optional<TenantPolicy> next = file.Refresh();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->For("a").weight, 4);
  EXPECT_THAT(
      ReadTenantPolicy("tenant_policy_path", std::string(dir) + "/none.json").status().message(),
      HasSubstr("tenant_policy_path: cannot read"));
  ASSERT_EQ(std::system((std::string("rm -rf ") + dir).c_str()), 0);
}

}  // namespace
}  // namespace stoker
