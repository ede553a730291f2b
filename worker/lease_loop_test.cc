// The lease loop on a FakeClock against a fake coordinator: it leases what a stream's credit
// asks for, no more than the stream's share of memory nor its tenant's prefetch quota, and
// nothing while the worker drains.

#include "worker/lease_loop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "absl/synchronization/notification.h"
#include "coordinator/status_matchers_for_test.h"
#include "worker/fake_coordinator_for_test.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using worker_testing::FakeCoordinator;
using worker_testing::kBatchBytes;
using worker_testing::kJob;
using worker_testing::RecordingSink;

WorkerConfig LeaseLoopConfig() {
  WorkerConfig config;
  config.threads = 1;
  config.memory_bytes = 8 * kBatchBytes;  // one stream's share: 4 batches
  return config;
}

class LeaseLoopTest : public ::testing::Test {
 protected:
  LeaseLoopTest() {
    EXPECT_THAT(registration_.Register(), IsOk());
    loop_.Start();
  }
  ~LeaseLoopTest() override {
    loop_.Stop();
    producer_.Stop();
  }

  std::shared_ptr<StreamSession> Open() {
    pb::OpenStream open;
    open.set_job_id(kJob);
    open.set_client_id("c");
    absl::Notification opened;
    std::shared_ptr<StreamSession> session;
    streams_.OpenAsync(open, &sink_, [&](absl::StatusOr<std::shared_ptr<StreamSession>> s) {
      EXPECT_THAT(s.status(), IsOk());
      if (s.ok()) session = *s;
      opened.Notify();
    });
    opened.WaitForNotification();
    return session;
  }
  // One longest lease poll, once the loop waits on the fake clock.
  void NextPoll() {
    clock_.AwaitSleepers(1);
    clock_.Advance(config_.max_lease_poll);
  }

  const WorkerConfig config_ = LeaseLoopConfig();
  FakeClock clock_;
  FakeCoordinator coordinator_;
  RecordingSink sink_;
  MessagePool pool_{4};
  PayloadBufferPool buffers_{4};
  BatchProducer producer_{1, 0, &pool_, &clock_};
  WorkerRegistration registration_{config_, &coordinator_, nullptr};
  TaskLedger ledger_{[] {}};
  StreamRegistry streams_{config_,
                          &coordinator_,
                          &pool_,
                          &buffers_,
                          DatasetIo::FromEnvironment(),
                          [this] { loop_.Wake(); }};
  LeaseLoop loop_{config_, &coordinator_, &registration_, &streams_, &ledger_, &producer_, &clock_};
};

TEST_F(LeaseLoopTest, HugeCreditLeasesNoMoreThanTheStreamsShareOfMemory) {
  std::shared_ptr<StreamSession> session = Open();  // a client that never reads
  session->AddCredit(UINT32_MAX);
  // Share: 8 batches of budget / (1 stream + 1) = 4 batches.
  coordinator_.AwaitLeased(4);
  for (int i = 0; i < 5; ++i) NextPoll();  // polls: nothing more
  EXPECT_EQ(coordinator_.leased(), 4u);
  EXPECT_EQ(session->held_tasks(), 4u);
  EXPECT_EQ(ledger_.held(), 4u);
  streams_.Forget(session);
}

TEST_F(LeaseLoopTest, HugeCreditLeasesNoMoreThanTheTenantsPrefetchQuota) {
  // Memory would allow 4 batches; the tenant's quota 2 and a half.
  producer_.SetTenantShares({{std::string(kDefaultTenant), TenantShare{1, 5 * kBatchBytes / 2}}});
  std::shared_ptr<StreamSession> session = Open();
  session->AddCredit(UINT32_MAX);
  coordinator_.AwaitLeased(2);
  for (int i = 0; i < 5; ++i) NextPoll();
  EXPECT_EQ(coordinator_.leased(), 2u);
  EXPECT_EQ(session->held_tasks(), 2u);
  streams_.Forget(session);
}

TEST_F(LeaseLoopTest, AQuotaUnderOneBatchStillLetsTheStreamMove) {
  producer_.SetTenantShares({{std::string(kDefaultTenant), TenantShare{1, 1}}});
  std::shared_ptr<StreamSession> session = Open();
  session->AddCredit(UINT32_MAX);
  coordinator_.AwaitLeased(1);
  for (int i = 0; i < 5; ++i) NextPoll();
  EXPECT_EQ(coordinator_.leased(), 1u);
  streams_.Forget(session);
}

TEST_F(LeaseLoopTest, LeasesWhatTheCreditAsksForAndNothingWhileDraining) {
  std::shared_ptr<StreamSession> session = Open();
  for (int i = 0; i < 3; ++i) NextPoll();  // no credit: nothing leased
  EXPECT_EQ(coordinator_.leased(), 0u);
  session->AddCredit(2);  // wakes the loop
  coordinator_.AwaitLeased(2);
  for (int i = 0; i < 3; ++i) NextPoll();
  EXPECT_EQ(coordinator_.leased(), 2u);

  streams_.BeginDrain();
  session->AddCredit(2);
  for (int i = 0; i < 3; ++i) NextPoll();
  EXPECT_EQ(coordinator_.leased(), 2u);
  streams_.Forget(session);
}

}  // namespace
}  // namespace stoker
