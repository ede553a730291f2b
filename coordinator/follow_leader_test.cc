// Replicated coordinators seen from outside (docs/decisions/0075-follow-the-leader.md): real
// CoordinatorServers on loopback, each with a Leadership the test sets, and the gRPC client
// given several of their addresses.

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/address_list.h"
#include "common/ids.h"
#include "coordinator/coordinator_client.h"
#include "coordinator/coordinator_server.h"
#include "coordinator/health_check_for_test.h"
#include "coordinator/settable_leadership_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"
#include "externalscaler/externalscaler.grpc.pb.h"
#include "stoker/v1/coordinator.grpc.pb.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;

// A plaintext coordinator on 127.0.0.1:0 under its own settable leadership.
struct Replica {
  SettableLeadership leadership;
  std::unique_ptr<CoordinatorServer> server;

  explicit Replica(LeaderView view) {
    leadership.Set(std::move(view));
    CoordinatorConfig config;
    config.tls = TlsConfig::Plaintext();
    auto started = CoordinatorServer::Start(config, DatasetIo::FromEnvironment(), Clock::Real(),
                                            PosixJournalEnv(), &leadership);
    EXPECT_THAT(started, IsOk());
    if (started.ok()) server = *std::move(started);
  }
  std::string address() const { return server->address(); }
  int jobs() { return server->coordinator()->GetStatus().jobs_size(); }
};

LeaderView Leading(uint64_t epoch) { return LeaderView{true, epoch, ""}; }
LeaderView StandbyOf(const std::string& leader) { return LeaderView{false, 0, leader}; }

stoker::v1::OpenJobRequest TrainJob() {
  stoker::v1::OpenJobRequest request;
  request.set_name("train");
  *request.mutable_spec() = SmallJobSpec();
  return request;
}

std::unique_ptr<CoordinatorClient> ClientOf(const std::string& addresses) {
  return NewGrpcCoordinatorClient(addresses, absl::Seconds(10), TlsConfig::Plaintext());
}

// Health is polled: the server re-reads its leadership every kLeadershipPoll.
std::string HealthAfterFlip(const std::string& address, const std::string& service,
                            const std::string& want) {
  std::string health = CheckHealth(address, service);
  for (int poll = 0; poll < 400 && health != want; ++poll) {
    absl::SleepFor(CoordinatorServer::kLeadershipPoll);
    health = CheckHealth(address, service);
  }
  return health;
}

TEST(FollowLeaderTest, AStandbyAnswersUnavailableNamingTheLeader) {
  Replica standby(StandbyOf("10.0.0.9:7070"));
  ASSERT_NE(standby.server, nullptr);
  auto stub = stoker::v1::Coordinator::NewStub(
      grpc::CreateChannel(standby.address(), grpc::InsecureChannelCredentials()));
  stoker::v1::OpenJobResponse response;
  grpc::ClientContext context;
  grpc::Status status = stub->OpenJob(&context, TrainJob(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(),
            "coordinator " + standby.address() + " is a standby; the leader is 10.0.0.9:7070");
  const auto& trailers = context.GetServerTrailingMetadata();
  ASSERT_EQ(trailers.count("stoker-leader"), 1u);
  EXPECT_EQ(std::string(trailers.find("stoker-leader")->second.data(),
                        trailers.find("stoker-leader")->second.size()),
            "10.0.0.9:7070");
  EXPECT_EQ(standby.jobs(), 0);  // the logic was never reached

  standby.leadership.Set(StandbyOf(""));  // an election under way
  grpc::ClientContext electing;
  status = stub->OpenJob(&electing, TrainJob(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(),
            "coordinator " + standby.address() + " is a standby; no leader is elected yet");
  EXPECT_EQ(electing.GetServerTrailingMetadata().count("stoker-leader"), 0u);

  // KEDA's scaler too.
  auto scaler = externalscaler::ExternalScaler::NewStub(
      grpc::CreateChannel(standby.address(), grpc::InsecureChannelCredentials()));
  externalscaler::ScaledObjectRef ref;
  externalscaler::GetMetricSpecResponse spec;
  grpc::ClientContext scaler_context;
  status = scaler->GetMetricSpec(&scaler_context, ref, &spec);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(),
            "coordinator " + standby.address() + " is a standby; no leader is elected yet");
}

TEST(FollowLeaderTest, HealthFollowsTheLeadership) {
  Replica replica(StandbyOf(""));
  ASSERT_NE(replica.server, nullptr);
  const std::string address = replica.address();
  for (const std::string service : {"", "stoker.v1.Coordinator"}) {
    EXPECT_EQ(CheckHealth(address, service), kHealthNotServing) << service;
  }
  replica.leadership.Set(Leading(4));
  for (const std::string service : {"", "stoker.v1.Coordinator"}) {
    EXPECT_EQ(HealthAfterFlip(address, service, kHealthServing), kHealthServing) << service;
  }
  replica.leadership.Set(StandbyOf("10.0.0.9:7070"));
  for (const std::string service : {"", "stoker.v1.Coordinator"}) {
    EXPECT_EQ(HealthAfterFlip(address, service, kHealthNotServing), kHealthNotServing) << service;
  }
}

TEST(FollowLeaderTest, AClientGivenEveryReplicaLandsOnTheLeader) {
  Replica leader(Leading(7));
  ASSERT_NE(leader.server, nullptr);
  Replica standby(StandbyOf(leader.address()));
  ASSERT_NE(standby.server, nullptr);
  std::unique_ptr<CoordinatorClient> client = ClientOf(standby.address() + "," + leader.address());

  absl::StatusOr<stoker::v1::OpenJobResponse> opened = client->OpenJob(TrainJob());
  ASSERT_THAT(opened, IsOk());
  EXPECT_EQ(SerialOf(opened->job_id()), 1u);
  EXPECT_EQ(opened->batches_per_epoch_per_rank(), 5u);
  EXPECT_EQ(opened->coordinator_epoch(), 7u);
  EXPECT_EQ(leader.jobs(), 1);
  EXPECT_EQ(standby.jobs(), 0);

  // Later calls go straight to the leader; the job is the one opened.
  stoker::v1::GetJobRequest get;
  get.set_job_id(opened->job_id());
  absl::StatusOr<stoker::v1::GetJobResponse> job = client->GetJob(get);
  ASSERT_THAT(job, IsOk());
  EXPECT_EQ(job->name(), "train");
  EXPECT_EQ(job->coordinator_epoch(), 7u);
  EXPECT_EQ(client->stale_epoch_responses(), 0u);
}

// A standby's hint is followed when it names a configured replica (past the next in the list),
// and never when it names an address outside the list.
TEST(FollowLeaderTest, OnlyAHintInTheListIsFollowed) {
  Replica named(Leading(3));
  ASSERT_NE(named.server, nullptr);
  Replica next(Leading(3));
  ASSERT_NE(next.server, nullptr);
  Replica standby(StandbyOf(named.address()));
  ASSERT_NE(standby.server, nullptr);

  ASSERT_THAT(ClientOf(standby.address() + "," + next.address() + "," + named.address())
                  ->OpenJob(TrainJob()),
              IsOk());
  EXPECT_EQ(named.jobs(), 1);
  EXPECT_EQ(next.jobs(), 0);

  ASSERT_THAT(ClientOf(standby.address() + "," + next.address())->OpenJob(TrainJob()), IsOk());
  EXPECT_EQ(named.jobs(), 1);  // named by the standby, but not one of the client's addresses
  EXPECT_EQ(next.jobs(), 1);
}

// A deposed leader that still answers (paused, then woken) cannot hand out work: its epoch is
// older than the one the client saw.
TEST(FollowLeaderTest, AResponseOfAnOlderEpochIsRefusedAndCounted) {
  Replica deposed(Leading(5));
  ASSERT_NE(deposed.server, nullptr);
  Replica current(Leading(9));
  ASSERT_NE(current.server, nullptr);
  std::unique_ptr<CoordinatorClient> client = ClientOf(current.address() + "," + deposed.address());
  absl::StatusOr<stoker::v1::GetStatusResponse> status = client->GetStatus({});
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ(status->coordinator_epoch(), 9u);

  current.leadership.Set(StandbyOf(""));
  EXPECT_THAT(client->GetStatus({}),
              StatusIs(absl::StatusCode::kUnavailable,
                       "coordinator " + deposed.address() +
                           ": epoch 5 is older than epoch 9 already seen (a deposed leader)"));
  EXPECT_EQ(client->stale_epoch_responses(), 1u);

  current.leadership.Set(Leading(9));
  status = client->GetStatus({});
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ(status->coordinator_epoch(), 9u);
  EXPECT_EQ(client->stale_epoch_responses(), 2u);  // the deposed one was tried first, refused
}

TEST(FollowLeaderTest, ABadAddressListIsAnErrorNamingTheFlag) {
  EXPECT_THAT(ParseAddressList("--coordinator", "h1:7070,h2"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--coordinator: entry 2 of 'h1:7070,h2' is not host:port: 'h2'"));
  EXPECT_THAT(ParseAddressList("--coordinator", "h1:7070,,h2:7070"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entry 2")));
  EXPECT_THAT(ParseAddressList("--coordinator", ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entry 1")));
  EXPECT_THAT(ParseAddressList("--coordinator", "h1:99999"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'h1:99999'")));
  absl::StatusOr<std::vector<std::string>> parsed =
      ParseAddressList("--coordinator", "h1:7070,[::1]:7071");
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ(*parsed, (std::vector<std::string>{"h1:7070", "[::1]:7071"}));
}

}  // namespace
}  // namespace stoker
