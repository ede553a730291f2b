#ifndef STOKER_COORDINATOR_COORDINATOR_TEST_FIXTURE_FOR_TEST_H_
#define STOKER_COORDINATOR_COORDINATOR_TEST_FIXTURE_FOR_TEST_H_

// The fixture of the Coordinator's unit tests (coordinator_test.cc and
// coordinator_open_job_test.cc): a coordinator on a fake clock with helpers.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "coordinator/coordinator.h"
#include "coordinator/coordinator_for_test.h"
#include "coordinator/lease_pairs_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"
#include "plan/resume_plan.h"

namespace stoker {
namespace {

using stoker::v1::TaskId;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

using P = EpochBatch;

class CoordinatorTest : public ::testing::Test {
 protected:
  uint64_t OpenJob(const std::string& name, const stoker::v1::JobSpec& spec) {
    stoker::v1::OpenJobRequest request;
    request.set_name(name);
    *request.mutable_spec() = spec;
    auto response = coordinator_.OpenJob(request);
    EXPECT_THAT(response, IsOk());
    return response.ok() ? response->job_id() : 0;
  }

  absl::StatusOr<stoker::v1::OpenJobResponse> OpenJobWithSpec(const stoker::v1::JobSpec& spec) {
    stoker::v1::OpenJobRequest request;
    request.set_name("job");
    *request.mutable_spec() = spec;
    return coordinator_.OpenJob(request);
  }

  uint64_t Register(const std::string& address) {
    return RegisterTestWorker(coordinator_, address, 2);
  }

  absl::StatusOr<stoker::v1::WorkerHeartbeatResponse> Heartbeat(
      uint64_t worker, const std::vector<TaskId>& delivered = {}) {
    stoker::v1::WorkerHeartbeatRequest request;
    request.set_worker_id(worker);
    for (const TaskId& task : delivered) *request.add_delivered() = task;
    return coordinator_.WorkerHeartbeat(request);
  }

  absl::StatusOr<stoker::v1::LeaseTasksResponse> Lease(uint64_t worker, uint64_t job, uint32_t rank,
                                                       uint32_t max) {
    stoker::v1::LeaseTasksRequest request;
    request.set_worker_id(worker);
    request.set_job_id(job);
    request.set_rank(rank);
    request.set_max_tasks(max);
    return coordinator_.LeaseTasks(request);
  }

  absl::StatusOr<stoker::v1::ClientHeartbeatResponse> ClientHeartbeat(
      uint64_t job, uint32_t rank, const std::vector<TaskId>& consumed = {},
      const std::string& client_id = "client") {
    stoker::v1::ClientHeartbeatRequest request;
    request.set_job_id(job);
    request.set_rank(rank);
    request.set_client_id(client_id);
    for (const TaskId& task : consumed) *request.add_received() = task;
    return coordinator_.ClientHeartbeat(request);
  }

  // Advances the clock by `total` in heartbeat-sized steps; the listed workers heartbeat after
  // each step, so only the others go silent.
  void AdvanceKeepingAlive(absl::Duration total, const std::vector<uint64_t>& alive) {
    for (absl::Duration t; t < total; t += absl::Seconds(1)) {
      clock_.Advance(absl::Seconds(1));
      for (uint64_t worker : alive) ASSERT_THAT(Heartbeat(worker), IsOk());
    }
  }

  RankProgressSummary Summary(uint64_t job, uint32_t rank) {
    return coordinator_.InspectState(
        [&](const ClusterState& state) { return state.RankSummary(job, rank); });
  }

  uint64_t Done(uint64_t job, uint32_t rank) {
    const RankProgressSummary summary = Summary(job, rank);
    return summary.done_watermark + summary.done_above_watermark;
  }

  FakeClock clock_;
  Coordinator coordinator_{TestCoordinatorConfig(), &clock_, nullptr, TestSourceFactory()};
};

}  // namespace
}  // namespace stoker

#endif  // STOKER_COORDINATOR_COORDINATOR_TEST_FIXTURE_FOR_TEST_H_
