// Mutual TLS and roles end to end (docs/security.md): a whole job over mutual TLS with
// certificates made in the test (scripts/dev-certs.sh), and a table over every Coordinator RPC
// and the worker's StreamBatches × {no certificate, another CA, each role} with exact codes.

#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/time/clock.h"
#include "common/tls/grpc_tls.h"
#include "coordinator/coordinator_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stoker/v1/coordinator.grpc.pb.h"
#include "stoker/v1/worker.grpc.pb.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

// Certificates of scripts/dev-certs.sh in a fresh directory, removed at the end.
class Certs {
 public:
  Certs() {
    char tmpl[] = "/tmp/stoker-tls-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    const std::string command = std::string(STOKER_SOURCE_DIR) + "/scripts/dev-certs.sh " + dir_;
    ok_ = std::system(command.c_str()) == 0;
  }
  ~Certs() { std::system(("rm -rf " + dir_).c_str()); }
  bool ok() const { return ok_; }

  // `name` is a role ("worker") or "other-trainer" (signed by the other CA).
  TlsConfig For(const std::string& name) const {
    TlsConfig config;
    config.cert_file = dir_ + "/" + name + ".pem";
    config.key_file = dir_ + "/" + name + ".key";
    config.ca_file = dir_ + "/ca.pem";
    return config;
  }
  std::string ca() const { return dir_ + "/ca.pem"; }
  std::string dir() const { return dir_; }
  // Re-issues `role`'s certificate and key from the same CA (new files renamed over the old).
  bool Renew(const std::string& role) const {
    const std::string command =
        std::string(STOKER_SOURCE_DIR) + "/scripts/dev-certs.sh " + dir_ + " " + role;
    return std::system(command.c_str()) == 0;
  }

 private:
  std::string dir_;
  bool ok_ = false;
};

pb::JobSpec SmallJob(uint64_t num_samples) {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(num_samples);
  synthetic->set_height(8);
  synthetic->set_width(8);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.set_batch_size(4);
  spec.set_seed(7);
  spec.set_shuffle(pb::SHUFFLE_MODE_GLOBAL);
  spec.set_world_size(1);
  spec.set_epochs(1);
  spec.set_drop_last(true);
  return spec;
}

absl::StatusOr<std::unique_ptr<TestCluster>> StartTlsCluster(const Certs& certs, int workers) {
  TestClusterOptions options;
  options.workers = workers;
  options.coordinator.tls = certs.For("coordinator");
  TlsConfig worker_tls = certs.For("worker");
  worker_tls.reload_interval = absl::Seconds(1);  // The rotation test waits for a reload.
  options.configure_worker = [worker_tls](size_t, WorkerConfig* config) {
    config->tls = worker_tls;
  };
  return TestCluster::Start(options);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The certificate (PEM) the worker at `address` presents to a new connection now.
std::string ServedCertificate(const Certs& certs, const std::string& address) {
  auto stub = pb::Worker::NewStub(
      grpc::CreateChannel(address, ChannelCredentials(certs.For("trainer"), {Role::kWorker})));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto stream = stub->StreamBatches(&context);
  stream->WritesDone();
  pb::BatchMessage message;
  while (stream->Read(&message)) {
  }
  stream->Finish();
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr) return "";
  for (const grpc::string_ref& pem : auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME)) {
    return std::string(pem.data(), pem.size());
  }
  return "";
}

// A whole job over mutual TLS; halfway through the epoch the worker's certificate is replaced on
// disk, the worker serves the new one without a restart, and every batch arrives exactly once.
TEST(TlsTest, WholeJobOverMutualTlsSurvivesWorkerCertificateRotation) {
  Certs certs;
  ASSERT_TRUE(certs.ok());
  auto cluster = StartTlsCluster(certs, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string old_pem = ReadFile(certs.dir() + "/worker.pem");
  ASSERT_EQ(ServedCertificate(certs, (*cluster)->worker(0)->address()), old_pem);
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.job_name = "tls-job";
  options.spec = SmallJob(64);
  options.tls = certs.For("trainer");
  options.heartbeat_interval = absl::Milliseconds(50);
  auto loader = Loader::Open(options);
  ASSERT_TRUE(loader.ok()) << loader.status();
  std::multiset<uint64_t> batches;
  while (true) {
    absl::StatusOr<Batch> batch = (*loader)->Next();
    if (batch.status().code() == absl::StatusCode::kOutOfRange) break;
    ASSERT_TRUE(batch.ok()) << batch.status();
    batches.insert(batch->batch_index());
    if (batches.size() == 8) {  // Mid-epoch: rotate, and wait (bounded) for the reload.
      ASSERT_TRUE(certs.Renew("worker"));
      const std::string new_pem = ReadFile(certs.dir() + "/worker.pem");
      ASSERT_NE(new_pem, old_pem);
      std::string served;
      for (int i = 0; i < 100 && served != new_pem; ++i) {
        absl::SleepFor(absl::Milliseconds(100));
        served = ServedCertificate(certs, (*cluster)->worker(0)->address());
      }
      EXPECT_EQ(served, new_pem);
    }
  }
  EXPECT_EQ(batches.size(), 16u);
  EXPECT_EQ(std::set<uint64_t>(batches.begin(), batches.end()).size(), 16u);
}

// Another trainer (a valid trainer certificate) reporting the tasks of a job and rank that a
// live client holds is refused each time, and that job still delivers every batch.
TEST(TlsTest, ForgedConsumedReportsAreRefusedAndTheJobDeliversEveryBatch) {
  Certs certs;
  ASSERT_TRUE(certs.ok());
  auto cluster = StartTlsCluster(certs, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.job_name = "victim";
  options.spec = SmallJob(64);
  options.tls = certs.For("trainer");
  options.heartbeat_interval = absl::Milliseconds(50);
  options.prefetch_bytes = 2 * 4 * 8 * 8 * 3 * sizeof(float);  // Two batches: the job lasts.
  auto loader = Loader::Open(options);
  ASSERT_TRUE(loader.ok()) << loader.status();
  std::set<uint64_t> batches;
  absl::StatusOr<Batch> batch = (*loader)->Next();
  ASSERT_TRUE(batch.ok()) << batch.status();
  batches.insert(batch->batch_index());

  // The forger learns the job id the way any trainer can: OpenJob with the same name and spec.
  std::unique_ptr<CoordinatorClient> forger = NewGrpcCoordinatorClient(
      (*cluster)->coordinator_address(), absl::Seconds(10), certs.For("trainer"));
  pb::OpenJobRequest open;
  open.set_name("victim");
  *open.mutable_spec() = options.spec;
  absl::StatusOr<pb::OpenJobResponse> opened = forger->OpenJob(open);
  ASSERT_TRUE(opened.ok()) << opened.status();
  pb::ClientHeartbeatRequest forged;
  forged.set_job_id(opened->job_id());
  forged.set_rank(0);
  forged.set_client_id("forger");
  for (uint64_t g = 0; g < 16; ++g) {
    pb::TaskId* task = forged.add_consumed();
    task->set_job_id(opened->job_id());
    task->set_epoch(0);
    task->set_batch_index(g);
  }
  int refused = 0;
  while (true) {
    absl::Status status = forger->ClientHeartbeat(forged).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
    refused += status.code() == absl::StatusCode::kUnavailable;
    batch = (*loader)->Next();
    if (batch.status().code() == absl::StatusCode::kOutOfRange) break;
    ASSERT_TRUE(batch.ok()) << batch.status();
    EXPECT_TRUE(batches.insert(batch->batch_index()).second) << batch->batch_index();
  }
  EXPECT_EQ(batches.size(), 16u);
  EXPECT_EQ(refused, 16);
}

// A "worker" registering with a trainer certificate is refused, and so is one whose server
// certificate is not a worker's: trainers would not stream from it.
TEST(TlsTest, RogueWorkerIsRefused) {
  Certs certs;
  ASSERT_TRUE(certs.ok());
  auto cluster = StartTlsCluster(certs, 0);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  WorkerConfig rogue;
  rogue.coordinator_address = (*cluster)->coordinator_address();
  rogue.threads = 1;
  rogue.register_backoff.max_attempts = 1;
  rogue.tls = certs.For("trainer");
  EXPECT_EQ(WorkerServer::Start(rogue).status().code(), absl::StatusCode::kPermissionDenied);
  rogue.tls = TlsConfig::Plaintext();  // No certificate at all: the handshake fails.
  EXPECT_EQ(WorkerServer::Start(rogue).status().code(), absl::StatusCode::kUnavailable);
  // A trainer dialling a server whose certificate says trainer: the handshake fails.
  auto stub = pb::Worker::NewStub(
      grpc::CreateChannel((*cluster)->coordinator_address(),
                          ChannelCredentials(certs.For("trainer"), {Role::kWorker})));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto stream = stub->StreamBatches(&context);
  stream->WritesDone();
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST(TlsTest, TrainerWithCertificateOfAnotherCaCannotOpenAJob) {
  Certs certs;
  ASSERT_TRUE(certs.ok());
  auto cluster = StartTlsCluster(certs, 0);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.job_name = "rogue";
  options.spec = SmallJob(16);
  TlsConfig other = certs.For("other-trainer");
  other.ca_file = certs.ca();
  options.tls = other;
  options.connect_backoff.max_attempts = 1;
  // The handshake fails: the call never reaches the coordinator.
  EXPECT_EQ(Loader::Open(options).status().code(), absl::StatusCode::kUnavailable);
}

// The identity a caller presents.
enum class Caller { kNone, kOtherCa, kCoordinator, kWorker, kTrainer, kOperator };

std::shared_ptr<grpc::ChannelCredentials> CredentialsOf(const Certs& certs, Caller caller,
                                                        Role server_role) {
  switch (caller) {
    case Caller::kNone: {  // TLS that trusts the CA but presents no certificate.
      grpc::SslCredentialsOptions ssl;
      std::ifstream in(certs.ca());
      ssl.pem_root_certs.assign(std::istreambuf_iterator<char>(in), {});
      return grpc::SslCredentials(ssl);
    }
    case Caller::kOtherCa: {
      TlsConfig other = certs.For("other-trainer");
      other.ca_file = certs.ca();
      return ChannelCredentials(other, {server_role});
    }
    case Caller::kCoordinator:
      return ChannelCredentials(certs.For("coordinator"), {server_role});
    case Caller::kWorker:
      return ChannelCredentials(certs.For("worker"), {server_role});
    case Caller::kTrainer:
      return ChannelCredentials(certs.For("trainer"), {server_role});
    case Caller::kOperator:
      return ChannelCredentials(certs.For("operator"), {server_role});
  }
  return nullptr;
}

// Calls `method` of the coordinator as `caller`; returns the status code.
grpc::StatusCode CallCoordinator(pb::Coordinator::Stub* stub, const std::string& method) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (method == "OpenJob") {
    pb::OpenJobResponse response;
    return stub->OpenJob(&context, pb::OpenJobRequest(), &response).error_code();
  } else if (method == "GetJob") {
    pb::GetJobResponse response;
    return stub->GetJob(&context, pb::GetJobRequest(), &response).error_code();
  } else if (method == "RegisterWorker") {
    pb::RegisterWorkerResponse response;
    return stub->RegisterWorker(&context, pb::RegisterWorkerRequest(), &response).error_code();
  } else if (method == "WorkerHeartbeat") {
    pb::WorkerHeartbeatResponse response;
    return stub->WorkerHeartbeat(&context, pb::WorkerHeartbeatRequest(), &response).error_code();
  } else if (method == "LeaseTasks") {
    pb::LeaseTasksResponse response;
    return stub->LeaseTasks(&context, pb::LeaseTasksRequest(), &response).error_code();
  } else if (method == "ClientHeartbeat") {
    pb::ClientHeartbeatResponse response;
    return stub->ClientHeartbeat(&context, pb::ClientHeartbeatRequest(), &response).error_code();
  }
  pb::GetStatusResponse response;
  return stub->GetStatus(&context, pb::GetStatusRequest(), &response).error_code();
}

TEST(TlsTest, EveryRpcTimesEveryCallerGetsTheExactCode) {
  Certs certs;
  ASSERT_TRUE(certs.ok());
  auto cluster = StartTlsCluster(certs, 1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  using C = grpc::StatusCode;
  constexpr C kDenied = C::PERMISSION_DENIED;
  constexpr C kStale = C::FAILED_PRECONDITION;  // Id 0 is of no incarnation (common/ids.h).
  // No certificate / another CA: the TLS handshake fails (UNAVAILABLE), nothing is called.
  // An allowed role reaches the logic, which rejects the empty request (INVALID_ARGUMENT, or
  // FAILED_PRECONDITION for the id 0) or answers (OK for GetStatus).
  const std::map<std::string, std::map<Caller, C>> table = {
      {"OpenJob",
       {{Caller::kCoordinator, kDenied},
        {Caller::kWorker, kDenied},
        {Caller::kTrainer, C::INVALID_ARGUMENT},
        {Caller::kOperator, kDenied}}},
      {"GetJob",
       {{Caller::kCoordinator, kDenied},
        {Caller::kWorker, kStale},
        {Caller::kTrainer, kStale},
        {Caller::kOperator, kDenied}}},
      {"RegisterWorker",
       {{Caller::kCoordinator, kDenied},
        {Caller::kWorker, C::INVALID_ARGUMENT},
        {Caller::kTrainer, kDenied},
        {Caller::kOperator, kDenied}}},
      {"WorkerHeartbeat",
       {{Caller::kCoordinator, kDenied},
        {Caller::kWorker, kStale},
        {Caller::kTrainer, kDenied},
        {Caller::kOperator, kDenied}}},
      {"LeaseTasks",
       {{Caller::kCoordinator, kDenied},
        {Caller::kWorker, C::INVALID_ARGUMENT},
        {Caller::kTrainer, kDenied},
        {Caller::kOperator, kDenied}}},
      {"ClientHeartbeat",
       {{Caller::kCoordinator, kDenied},
        {Caller::kWorker, kDenied},
        {Caller::kTrainer, kStale},
        {Caller::kOperator, kDenied}}},
      {"GetStatus",
       {{Caller::kCoordinator, kDenied},
        {Caller::kWorker, kDenied},
        {Caller::kTrainer, C::OK},
        {Caller::kOperator, C::OK}}},
  };
  const RpcDenials before = RpcDenialCounts();
  uint64_t denials_expected = 0;
  for (const auto& [method, expected] : table) {
    for (Caller caller : {Caller::kNone, Caller::kOtherCa, Caller::kCoordinator, Caller::kWorker,
                          Caller::kTrainer, Caller::kOperator}) {
      auto stub = pb::Coordinator::NewStub(grpc::CreateChannel(
          (*cluster)->coordinator_address(), CredentialsOf(certs, caller, Role::kCoordinator)));
      const auto it = expected.find(caller);
      const C want = it == expected.end() ? C::UNAVAILABLE : it->second;
      EXPECT_EQ(CallCoordinator(stub.get(), method), want)
          << method << " as caller " << static_cast<int>(caller);
      if (want == kDenied) ++denials_expected;
    }
  }
  // The worker streams only to trainers.
  for (Caller caller : {Caller::kNone, Caller::kOtherCa, Caller::kCoordinator, Caller::kWorker,
                        Caller::kTrainer, Caller::kOperator}) {
    auto stub = pb::Worker::NewStub(grpc::CreateChannel(
        (*cluster)->worker(0)->address(), CredentialsOf(certs, caller, Role::kWorker)));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    auto stream = stub->StreamBatches(&context);
    pb::ClientMessage open;
    open.mutable_open()->set_job_id(999999);
    stream->Write(open);
    stream->WritesDone();
    pb::BatchMessage message;
    while (stream->Read(&message)) {
    }
    const C code = stream->Finish().error_code();
    if (caller == Caller::kNone || caller == Caller::kOtherCa) {
      EXPECT_EQ(code, C::UNAVAILABLE) << static_cast<int>(caller);
    } else if (caller == Caller::kTrainer) {
      EXPECT_NE(code, C::PERMISSION_DENIED);
      EXPECT_NE(code, C::UNAVAILABLE);
    } else {
      EXPECT_EQ(code, C::PERMISSION_DENIED) << static_cast<int>(caller);
      ++denials_expected;
    }
  }
  // Every denial was counted (stoker_rpc_denied_total); a failed handshake reaches no handler.
  EXPECT_EQ(RpcDenialCounts().permission_denied - before.permission_denied, denials_expected);
  EXPECT_EQ(RpcDenialCounts().unauthenticated, before.unauthenticated);
}

}  // namespace
}  // namespace stoker
