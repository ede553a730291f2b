// Jobs belong to the tenant that opened them (issue 37): another tenant's trainer finds no such
// job wherever it names one, in the same words as for a job that never existed.

#include "coordinator/coordinator_test_fixture_for_test.h"
#include "plan/resume_token.h"

namespace stoker {
namespace {

class CoordinatorTenancyTest : public CoordinatorTest {
 protected:
  uint64_t OpenAs(const std::string& tenant, const std::string& name) {
    stoker::v1::OpenJobRequest request;
    request.set_name(name);
    *request.mutable_spec() = SmallJobSpec(1, 1);
    auto response = coordinator_.OpenJob(request, TenantScope::Only(tenant));
    EXPECT_THAT(response, IsOk());
    return response.ok() ? response->job_id() : 0;
  }

  const TenantScope a_ = TenantScope::Only("a");
  const TenantScope b_ = TenantScope::Only("b");
};

TEST_F(CoordinatorTenancyTest, AnotherTenantsJobIsNotFoundAsAJobThatNeverExisted) {
  const uint64_t job = OpenAs("a", "train");
  const uint64_t never = job + 1000;  // of this incarnation, never handed out
  stoker::v1::GetJobRequest get;
  get.set_job_id(never);
  const absl::Status missing = coordinator_.GetJob(get, b_).status();
  ASSERT_EQ(missing.code(), absl::StatusCode::kNotFound);
  const std::string never_words(missing.message().substr(missing.message().find(':')));

  get.set_job_id(job);
  EXPECT_THAT(coordinator_.GetJob(get, a_), IsOk());
  EXPECT_EQ(coordinator_.GetJob(get, a_)->tenant(), "a");
  const absl::Status foreign = coordinator_.GetJob(get, b_).status();
  EXPECT_EQ(foreign.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(foreign.message().substr(foreign.message().find(':')), never_words);

  stoker::v1::ClientHeartbeatRequest heartbeat;
  heartbeat.set_job_id(job);
  heartbeat.set_client_id("thief");
  TaskId* first = heartbeat.add_received();
  first->set_job_id(job);
  EXPECT_THAT(coordinator_.ClientHeartbeat(heartbeat, b_),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no such job")));
  EXPECT_EQ(Done(job, 0), 0u);  // the report completed nothing

  stoker::v1::StartTraceRequest start;
  start.set_job_id(job);
  start.set_seconds(1);
  EXPECT_THAT(coordinator_.StartTrace(start, b_),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no such job")));
  stoker::v1::GetTraceRequest read;
  read.set_job_id(job);
  EXPECT_THAT(coordinator_.GetTrace(read, b_),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no such job")));
  EXPECT_THAT(coordinator_.StartTrace(start, a_), IsOk());
}

TEST_F(CoordinatorTenancyTest, StatusShowsATrainerItsTenantsJobsAndOtherRolesAll) {
  const uint64_t a_job = OpenAs("a", "train");
  const uint64_t b_job = OpenAs("b", "train");
  EXPECT_NE(a_job, b_job);  // one name in two tenants: two jobs
  const stoker::v1::GetStatusResponse seen_by_b = coordinator_.GetStatus(b_);
  ASSERT_EQ(seen_by_b.jobs_size(), 1);
  EXPECT_EQ(seen_by_b.jobs(0).job_id(), b_job);
  EXPECT_EQ(seen_by_b.jobs(0).tenant(), "b");
  const TenantScope operator_scope = TenantScope::Of(Principal{Role::kOperator, "a"});
  EXPECT_EQ(coordinator_.GetStatus(operator_scope).jobs_size(), 2);
  EXPECT_EQ(coordinator_.GetStatus().jobs_size(), 2);  // no identity: plaintext
}

TEST_F(CoordinatorTenancyTest, ReopeningByNameStaysWithinTheTenant) {
  const uint64_t a_job = OpenAs("a", "train");
  EXPECT_EQ(OpenAs("a", "train"), a_job);
  stoker::v1::OpenJobRequest other_spec;
  other_spec.set_name("train");
  *other_spec.mutable_spec() = SmallJobSpec(2, 1);
  // Tenant b may use the name with any spec: it is not tenant a's name.
  EXPECT_THAT(coordinator_.OpenJob(other_spec, b_), IsOk());
  EXPECT_THAT(coordinator_.OpenJob(other_spec, a_),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("different spec")));
}

TEST_F(CoordinatorTenancyTest, ATokenOfAnotherTenantsJobResumesNothing) {
  stoker::v1::OpenJobRequest request;
  request.set_name("train");
  *request.mutable_spec() = SmallJobSpec(1, 1);
  absl::StatusOr<stoker::v1::OpenJobResponse> opened = coordinator_.OpenJob(request, a_);
  ASSERT_THAT(opened, IsOk());
  EXPECT_EQ(opened->start().tenant(), "a");
  RankPosition position;
  position.job_name = "train";
  position.world_size = 1;
  position.batches_per_rank = opened->batches_per_epoch_per_rank();
  position.prefix = 2;
  const std::string token = EncodeResumeToken(opened->start(), position);
  request.add_resume_tokens(token);
  EXPECT_THAT(coordinator_.OpenJob(request, b_),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("resume_tokens[0]: taken from job 'train', which is not this "
                                 "tenant's: no such job")));
  EXPECT_THAT(coordinator_.OpenJob(request, a_), IsOk());
  // Tokens taken before tenants existed carry none: they resume in any tenant.
  stoker::v1::ResumePoint untagged = opened->start();
  untagged.clear_tenant();
  request.set_resume_tokens(0, EncodeResumeToken(untagged, position));
  EXPECT_THAT(coordinator_.OpenJob(request, b_), IsOk());
}

TEST_F(CoordinatorTenancyTest, WorkerHeartbeatCarriesTheSharesOfItsJobsTenantsOnly) {
  const uint64_t a_job = OpenAs("a", "train");
  const uint64_t a_other = OpenAs("a", "eval");
  OpenAs("b", "train");  // held by no worker: its tenant's share is not sent
  TenantLimits a_limits;
  a_limits.weight = 3;
  a_limits.max_prefetch_bytes_per_worker = 1 << 20;
  coordinator_.SetTenantPolicy(std::make_shared<const TenantPolicy>(
      std::map<std::string, TenantLimits>{{"a", a_limits}}, TenantLimits{}));
  stoker::v1::WorkerHeartbeatRequest heartbeat;
  heartbeat.set_worker_id(Register("w:1"));
  heartbeat.add_jobs(a_job);
  heartbeat.add_jobs(a_other);
  heartbeat.add_jobs(a_job + 1000);  // retired: no share
  absl::StatusOr<stoker::v1::WorkerHeartbeatResponse> response =
      coordinator_.WorkerHeartbeat(heartbeat);
  ASSERT_THAT(response, IsOk());
  ASSERT_EQ(response->tenants_size(), 1);  // one entry per tenant, not per job
  EXPECT_EQ(response->tenants().at("a").weight(), 3.0);
  EXPECT_EQ(response->tenants().at("a").max_prefetch_bytes_per_worker(), 1u << 20);
}

}  // namespace
}  // namespace stoker
