#include "coordinator/coordinator_test_fixture_for_test.h"

namespace stoker {
namespace {

// OpenJob and GetJob (the fixture's tests of the other RPCs are in coordinator_test.cc; a suite
// of its own, since gtest wants one fixture type per suite name across translation units).
class CoordinatorOpenJobTest : public CoordinatorTest {};

TEST_F(CoordinatorOpenJobTest, OpenJobIsIdempotentByName) {
  stoker::v1::OpenJobRequest request;
  request.set_name("train");
  *request.mutable_spec() = SmallJobSpec(/*world_size=*/2, /*epochs=*/3);
  auto first = coordinator_.OpenJob(request);
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(first->batches_per_epoch_per_rank(), 5u);
  EXPECT_EQ(first->num_samples(), 40u);
  EXPECT_EQ(first->batch_bytes(), 4u * 8 * 8 * 3 * 4);
  EXPECT_THAT(first->batch_shape(), ElementsAre(4, 8, 8, 3));
  auto second = coordinator_.OpenJob(request);
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(second->SerializeAsString(), first->SerializeAsString());

  request.mutable_spec()->set_seed(8);
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       HasSubstr("job 'train' already exists (id 1) with a different spec")));
  request.set_name("train2");
  auto other = coordinator_.OpenJob(request);
  ASSERT_THAT(other, IsOk());
  EXPECT_NE(other->job_id(), first->job_id());
}

TEST_F(CoordinatorOpenJobTest, OpenJobRejectsBadRequests) {
  stoker::v1::OpenJobRequest request;
  *request.mutable_spec() = SmallJobSpec();
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("name")));

  stoker::v1::JobSpec spec = SmallJobSpec();
  spec.set_batch_size(0);
  EXPECT_THAT(OpenJobWithSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.batch_size")));
  spec = SmallJobSpec();
  spec.set_world_size(0);
  EXPECT_THAT(OpenJobWithSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.world_size")));
  spec = SmallJobSpec();
  spec.mutable_pipeline()->add_ops();  // an Op with no oneof set
  EXPECT_THAT(OpenJobWithSpec(spec),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.pipeline.ops[1]")));
  for (int ksize : {4, -3}) {
    spec = SmallJobSpec();
    spec.mutable_pipeline()->add_ops()->mutable_gaussian_blur()->set_ksize(ksize);
    EXPECT_THAT(OpenJobWithSpec(spec),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         ::testing::AllOf(HasSubstr("spec.pipeline.ops[1]"), HasSubstr("ksize"))))
        << "ksize " << ksize;
  }
  EXPECT_EQ(coordinator_.InspectState([](const ClusterState& s) { return s.num_jobs(); }), 0u);
}

// A token of rank `rank` of SmallJobSpec(world_size) (10 global batches), `prefix` consumed.
std::string Token(uint32_t world_size, uint32_t rank, uint32_t epoch, uint64_t prefix) {
  stoker::v1::ResumeToken token;
  token.set_version(kResumeTokenVersion);
  token.set_job_name("job");
  token.set_spec_fingerprint(SpecFingerprint(SmallJobSpec(world_size)));
  token.set_world_size(world_size);
  token.set_rank(rank);
  token.set_epoch(epoch);
  token.set_universe(10);
  token.set_delivered_prefix(prefix);
  return token.SerializeAsString();
}

TEST_F(CoordinatorOpenJobTest, OpenJobWithATokenRestartsTheRank) {
  const uint64_t job = OpenJob("job", SmallJobSpec());
  const uint64_t worker = Register("w:1");
  ASSERT_THAT(Lease(worker, job, 0, 3), IsOk());  // (0,0) (0,2) (0,4)
  ASSERT_THAT(ClientHeartbeat(job, 0, {}), IsOk());

  stoker::v1::OpenJobRequest request;
  request.set_name("job");
  *request.mutable_spec() = SmallJobSpec();
  request.set_rank(0);
  request.add_resume_tokens(Token(2, 0, 0, 2));
  auto response = coordinator_.OpenJob(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->job_id(), job);
  EXPECT_TRUE(response->start().resumed());
  EXPECT_THAT(response->start().deal(), ElementsAre(0, 2, 4, 6, 8));
  EXPECT_EQ(response->start().delivered_prefix(), 2u);
  // The old leases are revoked; the rank continues with batch 4.
  auto heartbeat = Heartbeat(worker);
  ASSERT_THAT(heartbeat, IsOk());
  EXPECT_THAT(Pairs(heartbeat->drop_leases()), ElementsAre(P{0, 0}, P{0, 2}, P{0, 4}));
  auto lease = Lease(worker, job, 0, 2);
  ASSERT_THAT(lease, IsOk());
  EXPECT_THAT(Pairs(*lease), ElementsAre(P{0, 4}, P{0, 6}));
  // A late ack of the old incarnation is ignored, not an error; so is a worker's report of a
  // task of the new list (the old incarnation may have received it after its checkpoint): a
  // worker's report never completes a task, leased to it or not.
  TaskId old;
  old.set_job_id(job);
  old.set_epoch(0);
  old.set_batch_index(0);
  EXPECT_THAT(Heartbeat(worker, {old}), IsOk());
  EXPECT_EQ(Summary(job, 0).total, 3u + 5u);
  TaskId unleased = old, leased = old;
  unleased.set_batch_index(8);
  leased.set_batch_index(4);
  EXPECT_THAT(Heartbeat(worker, {unleased, leased}), IsOk());
  EXPECT_EQ(Summary(job, 0).done_watermark, 0u);
  EXPECT_EQ(Summary(job, 0).done_above_watermark, 0u);
  // The client's own report completes any task of its rank.
  EXPECT_THAT(ClientHeartbeat(job, 0, {unleased, leased}), IsOk());
  EXPECT_EQ(Summary(job, 0).done_watermark, 1u);
  EXPECT_EQ(Summary(job, 0).done_above_watermark, 1u);
}

TEST_F(CoordinatorOpenJobTest, OpenJobWithTokensOfAnotherWorldSizeNeedsAllOfThem) {
  stoker::v1::OpenJobRequest request;
  request.set_name("job-3");
  *request.mutable_spec() = SmallJobSpec(/*world_size=*/3);
  request.set_rank(2);
  request.add_resume_tokens(Token(2, 0, 0, 2));
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("resuming with world_size 3 from a checkpoint of world_size 2 "
                                 "needs the tokens of all 2 ranks, got 1")));
  request.add_resume_tokens(Token(2, 1, 0, 1));
  auto response = coordinator_.OpenJob(request);
  ASSERT_THAT(response, IsOk());
  // Remaining 3..9 (rank 0 consumed 0, 2; rank 1 consumed 1) over 3 ranks with drop_last:
  // slots 3 4 5 / 6 7 8, batch 9 is dropped; rank 2 gets 5 and 8.
  EXPECT_THAT(response->start().deal(), ElementsAre(5, 8));
  request.set_rank(3);
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rank: 3")));
  request.set_rank(0);
  request.clear_resume_tokens();
  request.add_resume_tokens("garbage");
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resume_tokens[0]")));
}

TEST_F(CoordinatorOpenJobTest, GetJob) {
  const uint64_t job = OpenJob("train", SmallJobSpec());
  stoker::v1::GetJobRequest request;
  request.set_job_id(job);
  auto response = coordinator_.GetJob(request);
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->name(), "train");
  EXPECT_EQ(response->spec().SerializeAsString(), SmallJobSpec().SerializeAsString());
  EXPECT_EQ(response->batches_per_epoch_per_rank(), 5u);
  request.set_job_id(job + 1);
  EXPECT_THAT(coordinator_.GetJob(request),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("job 2: no such job")));
}

TEST_F(CoordinatorOpenJobTest, OpenJobPlacesTheTailOnceForEveryRank) {
  stoker::v1::JobSpec spec = SmallJobSpec();
  spec.mutable_pipeline()->set_output_dtype(stoker::v1::DTYPE_FLOAT32);
  spec.set_tail(stoker::v1::TAIL_PLACEMENT_AUTO);
  stoker::v1::OpenJobRequest request;
  request.set_name("placed");
  *request.mutable_spec() = spec;
  std::vector<stoker::v1::OpenJobResponse> ranks;
  for (uint32_t rank : {0u, 1u}) {
    request.set_rank(rank);
    auto response = coordinator_.OpenJob(request);
    ASSERT_THAT(response, IsOk());
    ranks.push_back(*response);
  }
  for (const stoker::v1::OpenJobResponse& response : ranks) {
    EXPECT_EQ(response.job_id(), ranks[0].job_id());
    ASSERT_TRUE(response.has_client_tail());
    ASSERT_EQ(response.client_tail().ops_size(), 1);
    EXPECT_TRUE(response.client_tail().ops(0).has_to_float());
    // The workers' uint8 HWC batches.
    EXPECT_THAT(response.batch_shape(), ::testing::ElementsAre(4, 8, 8, 3));
    EXPECT_EQ(response.batch_bytes(), 4u * 8 * 8 * 3);
  }
  stoker::v1::GetJobRequest get;
  get.set_job_id(ranks[0].job_id());
  auto job = coordinator_.GetJob(get);
  ASSERT_THAT(job, IsOk());
  EXPECT_EQ(job->spec().pipeline().ops_size(), 0);
  EXPECT_EQ(job->spec().pipeline().output_dtype(), stoker::v1::DTYPE_UINT8);
  EXPECT_EQ(job->spec().tail(), stoker::v1::TAIL_PLACEMENT_CLIENT);

  // Another placement for the same name is another spec.
  request.mutable_spec()->set_tail(stoker::v1::TAIL_PLACEMENT_WORKER);
  EXPECT_THAT(coordinator_.OpenJob(request),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("different spec")));
}

}  // namespace
}  // namespace stoker
