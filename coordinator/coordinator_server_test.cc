#include "coordinator/coordinator_server.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/ids.h"
#include "coordinator/coordinator_service.h"
#include "coordinator/fake_journal_env_for_test.h"
#include "coordinator/health_check_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"
#include "stoker/v1/coordinator.grpc.pb.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// 127.0.0.1:0, plaintext (these tests are about the server, not TLS: tests/integration/tls_test).
CoordinatorConfig PlainConfig() {
  CoordinatorConfig config;
  config.tls = TlsConfig::Plaintext();
  return config;
}

std::unique_ptr<CoordinatorServer> StartServer() {
  CoordinatorConfig config = PlainConfig();
  auto server = CoordinatorServer::Start(config, DatasetIo::FromEnvironment());
  EXPECT_THAT(server, IsOk());
  return server.ok() ? std::move(server).value() : nullptr;
}

TEST(CoordinatorServerTest, ServesOpenJobOverGrpc) {
  std::unique_ptr<CoordinatorServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  EXPECT_GT(server->port(), 0);
  EXPECT_EQ(server->address(), "127.0.0.1:" + std::to_string(server->port()));

  auto channel = grpc::CreateChannel(server->address(), grpc::InsecureChannelCredentials());
  auto stub = stoker::v1::Coordinator::NewStub(channel);
  stoker::v1::OpenJobRequest request;
  request.set_name("train");
  *request.mutable_spec() = SmallJobSpec();
  stoker::v1::OpenJobResponse response;
  grpc::ClientContext context;
  grpc::Status status = stub->OpenJob(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(SerialOf(response.job_id()), 1u);
  EXPECT_EQ(response.batches_per_epoch_per_rank(), 5u);

  // Errors keep their code and message across the wire.
  request.mutable_spec()->set_batch_size(0);
  grpc::ClientContext bad_context;
  status = stub->OpenJob(&bad_context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("spec.batch_size"));
  server->Stop();
  server->Stop();  // idempotent
}

// OpenJob reads datasets on its own pool, off gRPC's callback threads: while every OpenJob
// thread (and one more call) waits on a dataset that does not answer, heartbeats, registrations
// and status calls are still served.
// `coordinator`'s CoordinatorService, plaintext, the sole leader, on a loopback port.
struct ServiceOnLoopback {
  ServiceOnLoopback(Coordinator* coordinator, Clock* clock)
      : service(coordinator, &latencies, TlsConfig::Plaintext(), clock, &leader) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
  }
  CallLatencies latencies;
  const LeaderGate leader{SoleLeadership(), "127.0.0.1:0"};
  CoordinatorService service;
  int port = 0;
  std::unique_ptr<grpc::Server> server;  // null when it did not start
};

TEST(CoordinatorServerTest, ASlowDatasetHoldsUpNoOtherCall) {
  absl::Notification release;
  std::atomic<int> probing{0};
  FakeClock clock;
  Coordinator coordinator(CoordinatorConfig(), &clock, nullptr,
                          [&](const stoker::v1::DatasetSpec& spec, uint64_t seed) {
                            ++probing;
                            release.WaitForNotification();
                            return CreateSource(spec, seed, DatasetIo::FromEnvironment());
                          });
  ServiceOnLoopback served(&coordinator, &clock);
  ASSERT_NE(served.server, nullptr);
  const int port = served.port;
  auto stub = stoker::v1::Coordinator::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  constexpr int kOpens = CoordinatorService::kOpenJobThreads + 1;
  std::vector<std::thread> opens;
  std::vector<grpc::Status> open_status(kOpens);
  for (int i = 0; i < kOpens; ++i) {
    opens.emplace_back([&, i] {
      stoker::v1::OpenJobRequest request;
      request.set_name("job" + std::to_string(i));
      *request.mutable_spec() = SmallJobSpec();
      stoker::v1::OpenJobResponse response;
      grpc::ClientContext context;
      open_status[i] = stub->OpenJob(&context, request, &response);
    });
  }
  while (probing < CoordinatorService::kOpenJobThreads) std::this_thread::yield();
  for (int i = 0; i < 20; ++i) {  // more calls than gRPC's callback threads, all answered
    stoker::v1::RegisterWorkerRequest request;
    request.set_address("w:" + std::to_string(i));
    request.set_cores(1);
    stoker::v1::RegisterWorkerResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    ASSERT_TRUE(stub->RegisterWorker(&context, request, &response).ok());
  }
  stoker::v1::GetStatusResponse status;
  grpc::ClientContext status_context;
  ASSERT_TRUE(stub->GetStatus(&status_context, stoker::v1::GetStatusRequest(), &status).ok());
  EXPECT_EQ(status.workers_size(), 20);
  EXPECT_EQ(status.jobs_size(), 0);  // the opens still wait on the dataset
  release.Notify();
  for (std::thread& open : opens) open.join();
  for (const grpc::Status& open : open_status) EXPECT_TRUE(open.ok()) << open.error_message();
  served.server->Shutdown();
  served.service.Stop();
  // Every answered call's latency was observed, by method.
  std::map<std::string, uint64_t> observed;
  for (const auto& [method, histogram] : served.latencies.Snapshot())
    observed[method] = histogram.count();
  EXPECT_THAT(observed, ElementsAre(Pair("GetStatus", 1), Pair("OpenJob", kOpens),
                                    Pair("RegisterWorker", 20)));
}

// A store whose commits wait until the test releases them (SyncThen callbacks held).
class ServerTestHeldStore : public StateStore {
 public:
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> Load() override {
    return std::vector<stoker::v1::StateUpdate>();
  }
  uint64_t Add(const stoker::v1::StateUpdate&) override { return ++added_; }
  uint64_t last_added() const override { return added_; }
  absl::Status Sync(uint64_t) override { return absl::OkStatus(); }
  void SyncThen(uint64_t, SyncDone done) override {
    absl::MutexLock lock(&mu_);
    if (!holding_) return done(absl::OkStatus());
    held_.push_back(std::move(done));
  }
  absl::Status failure() const override { return absl::OkStatus(); }
  absl::Status Compact(const std::function<Snapshot()>&) override { return absl::OkStatus(); }
  uint64_t bytes_since_compact() const override { return 0; }
  Stats stats() const override { return Stats(); }

  void Hold() {
    absl::MutexLock lock(&mu_);
    holding_ = true;
  }
  size_t held() {
    absl::MutexLock lock(&mu_);
    return held_.size();
  }
  void Release() {
    std::vector<SyncDone> held;
    {
      absl::MutexLock lock(&mu_);
      holding_ = false;
      held.swap(held_);
    }
    for (SyncDone& done : held) done(absl::OkStatus());
  }

 private:
  std::atomic<uint64_t> added_{0};
  absl::Mutex mu_;
  bool holding_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<SyncDone> held_ ABSL_GUARDED_BY(mu_);
};

// Heartbeats wait for the store's commit without a thread each, so what bounds them is a count
// of started calls: one past kMaxStartedCalls is answered UNAVAILABLE at once, and the others
// are answered once the commit comes.
TEST(CoordinatorServerTest, CallsWaitingForTheStoreAreBounded) {
  ServerTestHeldStore store;
  FakeClock clock;
  Coordinator coordinator(CoordinatorConfig(), &clock, &store, nullptr);
  ASSERT_THAT(coordinator.Recover(), IsOk());
  stoker::v1::RegisterWorkerRequest registration;
  registration.set_address("w:1");
  registration.set_cores(1);
  absl::StatusOr<stoker::v1::RegisterWorkerResponse> registered =
      coordinator.RegisterWorker(registration);
  ASSERT_THAT(registered, IsOk());
  ServiceOnLoopback served(&coordinator, &clock);
  ASSERT_NE(served.server, nullptr);
  const int port = served.port;
  store.Hold();
  constexpr int kCalls = CoordinatorService::kMaxStartedCalls + 1;
  constexpr int kChannels = 16;  // no single connection carries them all
  std::vector<std::unique_ptr<stoker::v1::Coordinator::Stub>> stubs;
  for (int c = 0; c < kChannels; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("stoker.test_channel", c);
    stubs.push_back(stoker::v1::Coordinator::NewStub(grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), args)));
  }
  stoker::v1::WorkerHeartbeatRequest beat;
  beat.set_worker_id(registered->worker_id());
  std::vector<grpc::ClientContext> contexts(kCalls);
  std::vector<stoker::v1::WorkerHeartbeatResponse> responses(kCalls);
  absl::Mutex mu;
  std::vector<grpc::Status> statuses;
  for (int i = 0; i < kCalls; ++i) {
    contexts[i].set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    stubs[i % kChannels]->async()->WorkerHeartbeat(&contexts[i], &beat, &responses[i],
                                                   [&](grpc::Status status) {
                                                     absl::MutexLock lock(&mu);
                                                     statuses.push_back(std::move(status));
                                                   });
  }
  auto answered = [&](size_t n) {
    return [&, n] {
      absl::MutexLock lock(&mu);
      return statuses.size() >= n;
    };
  };
  for (int i = 0; i < 1200 && !answered(1)(); ++i) absl::SleepFor(absl::Milliseconds(100));
  {
    absl::MutexLock lock(&mu);
    ASSERT_EQ(statuses.size(), 1u);
    EXPECT_EQ(statuses[0].error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(statuses[0].error_message(), HasSubstr("kMaxStartedCalls"));
  }
  for (int i = 0; i < 1200 && store.held() < kCalls - 1; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(store.held(), static_cast<size_t>(kCalls - 1));
  store.Release();
  for (int i = 0; i < 1200 && !answered(kCalls)(); ++i) absl::SleepFor(absl::Milliseconds(100));
  {
    absl::MutexLock lock(&mu);
    ASSERT_EQ(statuses.size(), static_cast<size_t>(kCalls));
    for (size_t i = 1; i < statuses.size(); ++i) {
      EXPECT_TRUE(statuses[i].ok()) << statuses[i].error_message();
    }
  }
  served.server->Shutdown();
  served.service.Stop();
}

// LeaseTasks runs on the callback thread when the coordinator's lock is free and on the lease
// pool when it is held or the reply must wait for the journal (rank_finished): every way ends in
// the right answer.
TEST(CoordinatorServerTest, LeaseTasksIsAnsweredWhetherTheLockIsFreeOrHeld) {
  CoordinatorConfig config = PlainConfig();
  config.journal_path = ::testing::TempDir() + "/lease_paths_" + std::to_string(getpid());
  std::remove(config.journal_path.c_str());
  auto started = CoordinatorServer::Start(config, DatasetIo::FromEnvironment());
  ASSERT_THAT(started, IsOk());
  std::unique_ptr<CoordinatorServer> server = *std::move(started);
  Coordinator& coordinator = *server->coordinator();
  stoker::v1::OpenJobRequest open;
  open.set_name("train");
  *open.mutable_spec() = SmallJobSpec(/*world_size=*/1, /*epochs=*/1);  // 10 batches
  auto job = coordinator.OpenJob(open);
  ASSERT_THAT(job, IsOk());
  stoker::v1::RegisterWorkerRequest reg;
  reg.set_address("w:1");
  reg.set_cores(1);
  auto worker = coordinator.RegisterWorker(reg);
  ASSERT_THAT(worker, IsOk());
  auto stub = stoker::v1::Coordinator::NewStub(
      grpc::CreateChannel(server->address(), grpc::InsecureChannelCredentials()));
  stoker::v1::LeaseTasksRequest lease;
  lease.set_worker_id(worker->worker_id());
  lease.set_job_id(job->job_id());
  lease.set_max_tasks(10);
  stoker::v1::LeaseTasksResponse leased;
  grpc::ClientContext first;
  ASSERT_TRUE(stub->LeaseTasks(&first, lease, &leased).ok());
  ASSERT_EQ(leased.leases_size(), 10);
  EXPECT_FALSE(leased.rank_finished());
  stoker::v1::ClientHeartbeatRequest beat;
  beat.set_job_id(job->job_id());
  beat.set_client_id("c");
  for (const stoker::v1::Lease& l : leased.leases()) *beat.add_received() = l.task();
  ASSERT_THAT(coordinator.ClientHeartbeat(beat), IsOk());

  // Held lock: the call cannot be answered until it is released, then says rank_finished.
  stoker::v1::LeaseTasksResponse held_response;
  grpc::ClientContext held;
  grpc::Status held_status;
  absl::Notification held_done;
  coordinator.InspectState([&](const ClusterState&) {
    stub->async()->LeaseTasks(&held, &lease, &held_response, [&](grpc::Status status) {
      held_status = status;
      held_done.Notify();
    });
    EXPECT_FALSE(held_done.WaitForNotificationWithTimeout(absl::Milliseconds(200)));
    return 0;
  });
  ASSERT_TRUE(held_done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_TRUE(held_status.ok()) << held_status.error_message();
  EXPECT_EQ(held_response.leases_size(), 0);
  EXPECT_TRUE(held_response.rank_finished());
  // Free lock, rank_finished: the journal wait goes to the pool.
  grpc::ClientContext last;
  ASSERT_TRUE(stub->LeaseTasks(&last, lease, &leased).ok());
  EXPECT_TRUE(leased.rank_finished());
  std::map<std::string, uint64_t> observed;
  for (const auto& [method, histogram] : server->call_latencies()->Snapshot()) {
    observed[method] = histogram.count();
  }
  EXPECT_EQ(observed["LeaseTasks"], 3u);
  server->Stop();
  std::remove(config.journal_path.c_str());
}

TEST(CoordinatorServerTest, ServesHealthCheck) {
  std::unique_ptr<CoordinatorServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(CheckHealth(server->address()), kHealthServing);
}

// A coordinator whose journal's file system fails answers UNAVAILABLE naming the cause and
// reports NOT_SERVING from the next round of its liveness thread (heartbeat_interval, shorter
// than any probe period), so that its probes restart it.
TEST(CoordinatorServerTest, AFailedJournalMakesHealthNotServing) {
  FakeJournalEnv env;
  CoordinatorConfig config = PlainConfig();
  config.journal_path = "/journal";
  config.heartbeat_interval = absl::Milliseconds(10);
  auto server = CoordinatorServer::Start(config, DatasetIo::FromEnvironment(), Clock::Real(), &env);
  ASSERT_THAT(server, IsOk());
  const std::string address = (*server)->address();
  EXPECT_EQ(CheckHealth(address), kHealthServing);

  env.FailNextSync(absl::InternalError("journal /journal: fdatasync: Input/output error"));
  auto stub = stoker::v1::Coordinator::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  stoker::v1::OpenJobRequest request;
  request.set_name("train");
  *request.mutable_spec() = SmallJobSpec();
  stoker::v1::OpenJobResponse response;
  grpc::ClientContext context;
  const grpc::Status status = stub->OpenJob(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("fdatasync: Input/output error"));

  // Bounded: a few liveness rounds at most, polled.
  std::string health = CheckHealth(address);
  for (int poll = 0; poll < 1000 && health != kHealthNotServing; ++poll) {
    absl::SleepFor(config.heartbeat_interval);
    health = CheckHealth(address);
  }
  EXPECT_EQ(health, kHealthNotServing);
  (*server)->Stop();
}

TEST(CoordinatorServerTest, StartErrors) {
  CoordinatorConfig config = PlainConfig();
  config.max_tasks_per_lease = 0;
  EXPECT_THAT(CoordinatorServer::Start(config, DatasetIo::FromEnvironment()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_tasks_per_lease")));
  std::unique_ptr<CoordinatorServer> first = StartServer();
  ASSERT_NE(first, nullptr);
  config = PlainConfig();
  config.listen_address = first->address();  // in use
  EXPECT_THAT(CoordinatorServer::Start(config, DatasetIo::FromEnvironment()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr(first->address())));
  config.listen_address = "192.0.2.1:0";  // TEST-NET-1: not an address of this host
  EXPECT_THAT(CoordinatorServer::Start(config, DatasetIo::FromEnvironment()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("192.0.2.1:0")));
}

TEST(CoordinatorConfigTest, NoTlsSettingsIsAnErrorNamingTheField) {
  EXPECT_THAT(CoordinatorConfig().Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tls.cert_file")));
}

TEST(CoordinatorConfigTest, LimitsMustBeUsable) {
  CoordinatorConfig config = PlainConfig();
  config.max_jobs = 0;
  EXPECT_THAT(config.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_jobs: must be > 0")));
  config = PlainConfig();
  config.max_request_bytes = 1024;
  EXPECT_THAT(config.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("max_request_bytes: must be >= 65536")));
  config = PlainConfig();
  config.grpc_memory_bytes = 1;
  EXPECT_THAT(config.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grpc_memory_bytes")));
}

TEST(CoordinatorConfigTest, ValidateNamesTheField) {
  CoordinatorConfig config = PlainConfig();
  EXPECT_THAT(config.Validate(), IsOk());
  config.listen_address = "localhost";
  EXPECT_THAT(config.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("listen_address")));
  config = PlainConfig();
  config.heartbeat_interval = absl::ZeroDuration();
  EXPECT_THAT(config.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("heartbeat_interval")));
  config = PlainConfig();
  config.worker_timeout = config.heartbeat_interval;
  EXPECT_THAT(config.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("worker_timeout")));
  config = PlainConfig();
  config.lease_duration = -absl::Seconds(1);
  EXPECT_THAT(config.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lease_duration")));
}

TEST(CoordinatorConfigTest, ReplicationSettingsThatDoNotFitAreRefusedNamingTheField) {
  CoordinatorConfig config = PlainConfig();
  config.state = "etcd://127.0.0.1:2379/stoker";
  EXPECT_THAT(config.Validate(), IsOk());
  config.journal_path = "/tmp/j";
  EXPECT_THAT(config.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("state: --state and --journal exclude each other")));
  config = PlainConfig();
  config.state = "zk://127.0.0.1:2181/stoker";
  EXPECT_THAT(config.Validate(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("state")));
  config = PlainConfig();
  config.state = "etcd://127.0.0.1:2379/stoker";
  config.leader_lease_ttl = absl::Milliseconds(1500);
  EXPECT_THAT(config.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("leader_lease_ttl: must be a whole number of seconds >= 1")));
  config.leader_lease_ttl = absl::Seconds(2);
  config.etcd_cert_file = "/etc/etcd/client.pem";
  EXPECT_THAT(config.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("etcd_key_file")));
  config.etcd_cert_file.clear();
  config.listen_address = "0.0.0.0:7070";
  EXPECT_THAT(config.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("advertise_address: required with --state")));
  config.advertise_address = "10.0.0.5:7070";
  EXPECT_THAT(config.Validate(), IsOk());
  config = PlainConfig();
  config.etcd_ca_file = "/etc/etcd/ca.pem";
  EXPECT_THAT(config.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("etcd_ca_file: only with state = etcd://")));
}

}  // namespace
}  // namespace stoker
