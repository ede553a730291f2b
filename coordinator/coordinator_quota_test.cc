// Tenant quotas (docs/decisions/0072-tenant-quotas.md): a new job or trace window over its
// tenant's quota is RESOURCE_EXHAUSTED naming the quota and the tenant; what a tenant holds
// follows its jobs (reopening and resuming hold nothing more, retirement frees it); the other
// tenants and the default tenant without a policy are not affected.

#include "coordinator/coordinator_test_fixture_for_test.h"
#include "plan/resume_token.h"

namespace stoker {
namespace {

class CoordinatorQuotaTest : public CoordinatorTest {
 protected:
  absl::StatusOr<stoker::v1::OpenJobResponse> OpenAs(const std::string& tenant,
                                                     const std::string& name,
                                                     uint32_t world_size = 1) {
    stoker::v1::OpenJobRequest request;
    request.set_name(name);
    *request.mutable_spec() = SmallJobSpec(world_size, 1);
    return coordinator_.OpenJob(request, TenantScope::Only(tenant));
  }

  void SetQuota(const std::string& tenant, const TenantLimits& limits) {
    coordinator_.SetTenantPolicy(std::make_shared<const TenantPolicy>(
        std::map<std::string, TenantLimits>{{tenant, limits}}, TenantLimits{}));
  }

  uint64_t Refusals(const std::string& tenant, const std::string& quota) {
    const auto uses = coordinator_.TenantQuotaUses();
    auto use = uses.find(tenant);
    if (use == uses.end()) return 0;
    auto refused = use->second.refusals.find(quota);
    return refused == use->second.refusals.end() ? 0 : refused->second;
  }
};

TEST_F(CoordinatorQuotaTest, MaxJobsRefusesANewJobButNotAReopenNorAnotherTenant) {
  TenantLimits limits;
  limits.max_jobs = 2;
  SetQuota("a", limits);
  ASSERT_THAT(OpenAs("a", "one"), IsOk());
  ASSERT_THAT(OpenAs("a", "two"), IsOk());
  EXPECT_THAT(OpenAs("a", "three"),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "tenant a: 2 jobs open, its quota (max_jobs in the tenant policy); "
                       "finished jobs leave after --job-idle-timeout-ms"));
  EXPECT_THAT(OpenAs("a", "one"), IsOk());    // reopening holds nothing more
  EXPECT_THAT(OpenAs("b", "three"), IsOk());  // b has no quota
  EXPECT_EQ(Refusals("a", kQuotaMaxJobs), 1u);
  const Coordinator::TenantQuotaUse use = coordinator_.TenantQuotaUses().at("a");
  EXPECT_EQ(use.usage.jobs, 2u);
  EXPECT_EQ(use.limits.max_jobs, 2u);
}

TEST_F(CoordinatorQuotaTest, MaxRanksCountsTheWorldSizesOfOpenJobs) {
  TenantLimits limits;
  limits.max_ranks = 5;
  SetQuota("a", limits);
  ASSERT_THAT(OpenAs("a", "four", 4), IsOk());
  EXPECT_THAT(OpenAs("a", "two", 2),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "tenant a: 4 ranks in open jobs, and 2 more would be over its quota of 5 "
                       "(max_ranks in the tenant policy)"));
  EXPECT_THAT(OpenAs("a", "one", 1), IsOk());  // exactly the quota
  EXPECT_EQ(coordinator_.TenantQuotaUses().at("a").usage.ranks, 5u);
  EXPECT_EQ(Refusals("a", kQuotaMaxRanks), 1u);
}

TEST_F(CoordinatorQuotaTest, ResumingARankOfAnOpenJobIsNotCountedTwice) {
  TenantLimits limits;
  limits.max_jobs = 1;
  limits.max_ranks = 1;
  SetQuota("a", limits);
  stoker::v1::OpenJobRequest request;
  request.set_name("train");
  *request.mutable_spec() = SmallJobSpec(1, 1);
  absl::StatusOr<stoker::v1::OpenJobResponse> opened =
      coordinator_.OpenJob(request, TenantScope::Only("a"));
  ASSERT_THAT(opened, IsOk());
  RankPosition position;
  position.job_name = "train";
  position.world_size = 1;
  position.batches_per_rank = opened->batches_per_epoch_per_rank();
  position.prefix = 2;
  request.add_resume_tokens(EncodeResumeToken(opened->start(), position));
  EXPECT_THAT(coordinator_.OpenJob(request, TenantScope::Only("a")), IsOk());
  const Coordinator::TenantQuotaUse use = coordinator_.TenantQuotaUses().at("a");
  EXPECT_EQ(use.usage.jobs, 1u);
  EXPECT_EQ(use.usage.ranks, 1u);
}

TEST_F(CoordinatorQuotaTest, ARetiredJobFreesItsTenantsQuota) {
  TenantLimits limits;
  limits.max_jobs = 1;
  SetQuota("a", limits);
  ASSERT_THAT(OpenAs("a", "old"), IsOk());
  EXPECT_THAT(OpenAs("a", "new"),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("max_jobs")));
  clock_.Advance(coordinator_.config().job_idle_timeout + absl::Seconds(1));
  coordinator_.CheckLiveness();  // no client heard from: "old" retires
  EXPECT_EQ(coordinator_.TenantQuotaUses().at("a").usage.jobs, 0u);
  EXPECT_THAT(OpenAs("a", "new"), IsOk());
}

TEST_F(CoordinatorQuotaTest, MaxTraceWindowsCountsTracedJobsNotExtensions) {
  TenantLimits limits;
  limits.max_trace_windows = 1;
  SetQuota("a", limits);
  absl::StatusOr<stoker::v1::OpenJobResponse> first = OpenAs("a", "one");
  absl::StatusOr<stoker::v1::OpenJobResponse> second = OpenAs("a", "two");
  absl::StatusOr<stoker::v1::OpenJobResponse> other = OpenAs("b", "one");
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(second, IsOk());
  ASSERT_THAT(other, IsOk());
  stoker::v1::StartTraceRequest start;
  start.set_seconds(60);
  start.set_job_id(first->job_id());
  ASSERT_THAT(coordinator_.StartTrace(start), IsOk());
  EXPECT_THAT(coordinator_.StartTrace(start), IsOk());  // extending its window
  start.set_job_id(second->job_id());
  EXPECT_THAT(coordinator_.StartTrace(start),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       "tenant a: 1 jobs traced, its quota (max_trace_windows in the tenant "
                       "policy); a window closes after its seconds"));
  start.set_job_id(other->job_id());
  EXPECT_THAT(coordinator_.StartTrace(start), IsOk());
  EXPECT_EQ(coordinator_.TenantQuotaUses().at("a").traced_jobs, 1u);
  EXPECT_EQ(Refusals("a", kQuotaMaxTraceWindows), 1u);
  clock_.Advance(absl::Seconds(61));  // the window closes: its place is free
  start.set_job_id(second->job_id());
  EXPECT_THAT(coordinator_.StartTrace(start), IsOk());
}

TEST_F(CoordinatorQuotaTest, TheDefaultTenantWithoutAPolicyIsBoundedOnlyByMaxJobs) {
  for (int i = 0; i < 20; ++i) EXPECT_NE(OpenJob(absl::StrCat("job", i), SmallJobSpec(4, 1)), 0u);
  const Coordinator::TenantQuotaUse use = coordinator_.TenantQuotaUses().at("default");
  EXPECT_EQ(use.usage.jobs, 20u);
  EXPECT_EQ(use.usage.ranks, 80u);
  EXPECT_EQ(use.limits.max_jobs, 0u);
  EXPECT_TRUE(use.refusals.empty());
}

TEST(TenantQuotaTest, BearerTokensOverATenantsQuotaAreNamed) {
  TenantLimits limits;
  limits.max_bearer_tokens = 1;
  const TenantPolicy policy({{"a", limits}}, TenantLimits{});
  std::vector<BearerToken> tokens = {{Principal{Role::kTrainer, "a"}, "x"},
                                     {Principal{Role::kTrainer, "b"}, "y"},
                                     {Principal{Role::kTrainer, "b"}, "z"}};
  EXPECT_THAT(CheckBearerTokenQuotas("--accept-bearer-tokens-file", policy, tokens), IsOk());
  tokens.push_back({Principal{Role::kOperator, "a"}, "w"});
  EXPECT_THAT(CheckBearerTokenQuotas("--accept-bearer-tokens-file", policy, tokens),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--accept-bearer-tokens-file: tenant a: 2 bearer tokens, over its quota "
                       "of 1 (max_bearer_tokens in the tenant policy)"));
}

}  // namespace
}  // namespace stoker
