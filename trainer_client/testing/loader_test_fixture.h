#ifndef STOKER_TRAINER_CLIENT_TESTING_LOADER_TEST_FIXTURE_H_
#define STOKER_TRAINER_CLIENT_TESTING_LOADER_TEST_FIXTURE_H_

// The fixture of the Loader's unit tests: a Loader driven by a FakeCoordinator, fake worker
// streams and a FakeClock.

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "gtest/gtest.h"
#include "trainer_client/loader.h"
#include "trainer_client/loader_env.h"
#include "trainer_client/testing/fake_env.h"

namespace stoker::testing {

inline constexpr uint64_t kJob = 7;  // FakeCoordinator's job id; batch_bytes 6, 2 batches per epoch

class LoaderTest : public ::testing::Test {
 protected:
  LoaderTest()
      : coordinator_(std::make_shared<FakeCoordinator>()),
        streams_(std::make_shared<FakeWorkerStreamFactory>()) {
    options_.coordinator_address = "fake:1";
    options_.job_name = "job";
    options_.spec.set_world_size(1);
    options_.spec.set_epochs(2);
    options_.client_id = "client-a";
    options_.tls = TlsConfig::Plaintext();
    options_.prefetch_bytes = 6 * 8;  // 8 batches
    options_.heartbeat_interval = absl::Milliseconds(2);
    options_.connect_backoff.initial = absl::Milliseconds(1);
    options_.connect_backoff.max = absl::Milliseconds(2);
    options_.connect_backoff.max_attempts = 3;
  }

  absl::StatusOr<std::unique_ptr<Loader>> Open() {
    LoaderEnv env;
    env.coordinator = coordinator_;
    env.worker_streams = streams_;
    env.clock = &clock_;
    env.gpu_utilization = gpu_utilization_;
    return Loader::Open(options_, env);
  }

  // Runs `n` more heartbeats on the fake clock, each to its end: waits until the heartbeat
  // thread waits for its interval, moves the clock past it, waits for the heartbeat to reach the
  // coordinator and for the thread to wait again (so the heartbeat's effects are applied).
  bool Heartbeats(int n) {
    for (int i = 0; i < n; ++i) {
      clock_.AwaitSleepers(1);
      const int before = coordinator_->heartbeats();
      clock_.Advance(options_.heartbeat_interval);
      if (!coordinator_->AwaitHeartbeatCount(before + 1)) return false;
      clock_.AwaitSleepers(1);
    }
    return true;
  }

  std::unique_ptr<Loader> OpenOrDie() {
    auto loader = Open();
    EXPECT_TRUE(loader.ok()) << loader.status();
    return loader.ok() ? *std::move(loader) : nullptr;
  }

  static std::vector<uint64_t> Indices(const std::vector<Batch>& batches) {
    std::vector<uint64_t> indices;
    for (const Batch& b : batches) indices.push_back(b.batch_index());
    return indices;
  }

  LoaderOptions options_;
  FakeClock clock_;  // the loader's time: heartbeats, backoff, stalls
  std::shared_ptr<FakeCoordinator> coordinator_;
  std::shared_ptr<FakeWorkerStreamFactory> streams_;
  // LoaderEnv::gpu_utilization (none by default).
  std::shared_ptr<GpuUtilizationSampler> gpu_utilization_;
};

}  // namespace stoker::testing

#endif  // STOKER_TRAINER_CLIENT_TESTING_LOADER_TEST_FIXTURE_H_
