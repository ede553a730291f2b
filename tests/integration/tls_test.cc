// Mutual TLS and roles end to end (docs/security.md): a whole job over mutual TLS with
// certificates made in the test (scripts/dev-certs.sh via tests/testing/test_certs.h), and a
// table over every Coordinator RPC and the worker's StreamBatches × {no certificate, another CA,
// each role} with exact codes.

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
#include "tests/testing/rpc_probe.h"
#include "tests/testing/test_certs.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

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

// A cluster over mutual TLS with `certs`; the workers re-read their files every second.
absl::StatusOr<std::unique_ptr<TestCluster>> StartTlsCluster(
    const std::shared_ptr<TestCerts>& certs, int workers) {
  TestClusterOptions options;
  options.workers = workers;
  options.certs = certs;
  options.configure_worker = [](size_t, WorkerConfig* config) {
    config->tls.reload_interval = absl::Seconds(1);  // The rotation test waits for a reload.
  };
  return TestCluster::Start(options);
}

std::shared_ptr<TestCerts> MakeCerts() {
  absl::StatusOr<std::shared_ptr<TestCerts>> certs = TestCerts::Make();
  EXPECT_TRUE(certs.ok()) << certs.status();
  return certs.ok() ? *certs : nullptr;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The certificate (PEM) the worker at `address` presents to a new connection now.
std::string ServedCertificate(const TestCerts& certs, const std::string& address) {
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
  std::shared_ptr<TestCerts> certs = MakeCerts();
  ASSERT_NE(certs, nullptr);
  auto cluster = StartTlsCluster(certs, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string old_pem = ReadFile(certs->dir() + "/worker.pem");
  ASSERT_EQ(ServedCertificate(*certs, (*cluster)->worker(0)->address()), old_pem);
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.job_name = "tls-job";
  options.spec = SmallJob(64);
  options.tls = certs->For("trainer");
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
      ASSERT_TRUE(certs->Renew("worker").ok());
      const std::string new_pem = ReadFile(certs->dir() + "/worker.pem");
      ASSERT_NE(new_pem, old_pem);
      std::string served;
      for (int i = 0; i < 100 && served != new_pem; ++i) {
        absl::SleepFor(absl::Milliseconds(100));
        served = ServedCertificate(*certs, (*cluster)->worker(0)->address());
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
  std::shared_ptr<TestCerts> certs = MakeCerts();
  ASSERT_NE(certs, nullptr);
  auto cluster = StartTlsCluster(certs, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.job_name = "victim";
  options.spec = SmallJob(64);
  options.tls = certs->For("trainer");
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
      (*cluster)->coordinator_address(), absl::Seconds(10), certs->For("trainer"));
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
    pb::TaskId* task = forged.add_received();
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
  std::shared_ptr<TestCerts> certs = MakeCerts();
  ASSERT_NE(certs, nullptr);
  auto cluster = StartTlsCluster(certs, 0);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  WorkerConfig rogue;
  rogue.coordinator_address = (*cluster)->coordinator_address();
  rogue.threads = 1;
  rogue.register_backoff.max_attempts = 1;
  rogue.tls = certs->For("trainer");
  EXPECT_EQ(WorkerServer::Start(rogue, DatasetIo::FromEnvironment()).status().code(),
            absl::StatusCode::kPermissionDenied);
  rogue.tls = TlsConfig::Plaintext();  // No certificate at all: the handshake fails.
  EXPECT_EQ(WorkerServer::Start(rogue, DatasetIo::FromEnvironment()).status().code(),
            absl::StatusCode::kUnavailable);
  // A trainer dialling a server whose certificate says trainer: the handshake fails.
  auto stub = pb::Worker::NewStub(
      grpc::CreateChannel((*cluster)->coordinator_address(),
                          ChannelCredentials(certs->For("trainer"), {Role::kWorker})));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto stream = stub->StreamBatches(&context);
  stream->WritesDone();
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST(TlsTest, TrainerWithCertificateOfAnotherCaCannotOpenAJob) {
  std::shared_ptr<TestCerts> certs = MakeCerts();
  ASSERT_NE(certs, nullptr);
  auto cluster = StartTlsCluster(certs, 0);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.job_name = "rogue";
  options.spec = SmallJob(16);
  TlsConfig other = certs->For("other-trainer");
  other.ca_file = certs->ca();
  options.tls = other;
  options.connect_backoff.max_attempts = 1;
  // The handshake fails: the call never reaches the coordinator.
  EXPECT_EQ(Loader::Open(options).status().code(), absl::StatusCode::kUnavailable);
}

// The identity a caller presents.
enum class Caller { kNone, kOtherCa, kCoordinator, kWorker, kTrainer, kOperator };
constexpr Caller kCallers[] = {Caller::kNone,   Caller::kOtherCa, Caller::kCoordinator,
                               Caller::kWorker, Caller::kTrainer, Caller::kOperator};

std::shared_ptr<grpc::ChannelCredentials> CredentialsOf(const TestCerts& certs, Caller caller,
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
      return ChannelCredentials(certs.For(Role::kCoordinator), {server_role});
    case Caller::kWorker:
      return ChannelCredentials(certs.For(Role::kWorker), {server_role});
    case Caller::kTrainer:
      return ChannelCredentials(certs.For(Role::kTrainer), {server_role});
    case Caller::kOperator:
      return ChannelCredentials(certs.For(Role::kOperator), {server_role});
  }
  return nullptr;
}

// Every Coordinator RPC and the worker's StreamBatches × {no certificate, another CA, each
// role}: no certificate or another CA fails the TLS handshake (UNAVAILABLE, nothing is called);
// a role the method does not allow gets PERMISSION_DENIED; an allowed role reaches the logic,
// which rejects the empty request or answers (ExpectedCoordinatorCode).
TEST(TlsTest, EveryRpcTimesEveryCallerGetsTheExactCode) {
  std::shared_ptr<TestCerts> certs = MakeCerts();
  ASSERT_NE(certs, nullptr);
  auto cluster = StartTlsCluster(certs, 1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  using C = grpc::StatusCode;
  const std::map<Caller, Role> roles = {{Caller::kCoordinator, Role::kCoordinator},
                                        {Caller::kWorker, Role::kWorker},
                                        {Caller::kTrainer, Role::kTrainer},
                                        {Caller::kOperator, Role::kOperator}};
  const RpcDenials before = RpcDenialCounts();
  uint64_t denials_expected = 0;
  for (const std::string& method : CoordinatorMethods()) {
    for (Caller caller : kCallers) {
      const auto role = roles.find(caller);
      const C want =
          role == roles.end() ? C::UNAVAILABLE : ExpectedCoordinatorCode(method, role->second);
      EXPECT_EQ(CallCoordinator((*cluster)->coordinator_address(),
                                CredentialsOf(*certs, caller, Role::kCoordinator), method),
                want)
          << method << " as caller " << static_cast<int>(caller);
      if (want == C::PERMISSION_DENIED) ++denials_expected;
    }
  }
  // The worker streams only to trainers.
  for (Caller caller : kCallers) {
    const C code = CallStreamBatches((*cluster)->worker(0)->address(),
                                     CredentialsOf(*certs, caller, Role::kWorker));
    if (caller == Caller::kNone || caller == Caller::kOtherCa) {
      EXPECT_EQ(code, C::UNAVAILABLE) << static_cast<int>(caller);
    } else if (caller == Caller::kTrainer) {
      EXPECT_EQ(code, C::FAILED_PRECONDITION);  // Reached the logic: job id of no incarnation.
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
