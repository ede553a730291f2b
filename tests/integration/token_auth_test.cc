// Bearer tokens (docs/security.md, "Bearer tokens"): servers that accept tokens give a caller
// the role of its token; a table over every Coordinator RPC and the worker's StreamBatches ×
// {each role's token, an unknown token, no token and no certificate, a token contradicting the
// certificate} with exact codes, every denial counted; and a whole job whose trainer has only
// the CA and a token.

#include <grpcpp/grpcpp.h>

#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "common/tls/grpc_tls.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/drain_loader.h"
#include "tests/testing/rpc_probe.h"
#include "tests/testing/test_certs.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using C = grpc::StatusCode;

constexpr Role kRoles[] = {Role::kCoordinator, Role::kWorker, Role::kTrainer, Role::kOperator,
                           Role::kScaler};

// A cluster whose coordinator and workers accept the tokens of `certs` besides certificates.
absl::StatusOr<std::unique_ptr<TestCluster>> StartTokenCluster(
    const std::shared_ptr<TestCerts>& certs) {
  TestClusterOptions options;
  options.workers = 1;
  options.certs = certs;
  options.coordinator.tls = certs->For(Role::kCoordinator);
  options.coordinator.tls.accept_bearer_tokens_file = certs->tokens_file();
  options.configure_worker = [certs](size_t, WorkerConfig* config) {
    config->tls.accept_bearer_tokens_file = certs->tokens_file();
  };
  return TestCluster::Start(options);
}

// The CA, and a token file holding one line.
TlsConfig TokenConfig(const TestCerts& certs, const std::string& name, const std::string& line) {
  const std::string path = certs.dir() + "/" + name + ".token";
  std::ofstream(path) << line << "\n";
  TlsConfig config;
  config.ca_file = certs.ca();
  config.bearer_token_file = path;
  return config;
}

TEST(TokenAuthTest, EveryRpcTimesEveryTokenGetsTheExactCode) {
  absl::StatusOr<std::shared_ptr<TestCerts>> certs = TestCerts::Make();
  ASSERT_TRUE(certs.ok()) << certs.status();
  auto cluster = StartTokenCluster(*certs);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string coordinator = (*cluster)->coordinator_address();
  const std::string worker = (*cluster)->worker(0)->address();
  const RpcDenials before = RpcDenialCounts();
  uint64_t denied = 0, unauthenticated = 0;

  // Each role's token, no certificate: the role's allowed methods reach the logic.
  for (Role role : kRoles) {
    const TlsConfig tls = (*certs)->TokenOnly(role);
    for (const std::string& method : CoordinatorMethods()) {
      const C want = ExpectedCoordinatorCode(method, role);
      EXPECT_EQ(CallCoordinator(coordinator, ChannelCredentials(tls, {Role::kCoordinator}), method),
                want)
          << method << " with the token of " << RoleName(role);
      denied += want == C::PERMISSION_DENIED;
    }
    const C want = role == Role::kTrainer ? C::FAILED_PRECONDITION : C::PERMISSION_DENIED;
    EXPECT_EQ(CallStreamBatches(worker, ChannelCredentials(tls, {Role::kWorker})), want)
        << "StreamBatches with the token of " << RoleName(role);
    denied += want == C::PERMISSION_DENIED;
  }

  // Unknown token (right length, right form), and no token and no certificate: UNAUTHENTICATED
  // on every RPC. A token of another role than the certificate: PERMISSION_DENIED.
  const TlsConfig unknown = TokenConfig(**certs, "unknown", "trainer:0123456789abcdef0123456789");
  grpc::SslCredentialsOptions ca_only;
  std::ifstream in((*certs)->ca());
  ca_only.pem_root_certs.assign(std::istreambuf_iterator<char>(in), {});
  TlsConfig contradicting = (*certs)->For(Role::kOperator);
  contradicting.bearer_token_file = (*certs)->TokenOnly(Role::kTrainer).bearer_token_file;
  const struct {
    const char* name;
    std::shared_ptr<grpc::ChannelCredentials> to_coordinator, to_worker;
    C want;
  } callers[] = {
      {"unknown token", ChannelCredentials(unknown, {Role::kCoordinator}),
       ChannelCredentials(unknown, {Role::kWorker}), C::UNAUTHENTICATED},
      {"no token, no certificate", grpc::SslCredentials(ca_only), grpc::SslCredentials(ca_only),
       C::UNAUTHENTICATED},
      {"operator certificate with a trainer token",
       ChannelCredentials(contradicting, {Role::kCoordinator}),
       ChannelCredentials(contradicting, {Role::kWorker}), C::PERMISSION_DENIED},
  };
  for (const auto& caller : callers) {
    for (const std::string& method : CoordinatorMethods()) {
      EXPECT_EQ(CallCoordinator(coordinator, caller.to_coordinator, method), caller.want)
          << method << " with " << caller.name;
    }
    EXPECT_EQ(CallStreamBatches(worker, caller.to_worker), caller.want)
        << "StreamBatches with " << caller.name;
    const uint64_t calls = CoordinatorMethods().size() + 1;
    (caller.want == C::UNAUTHENTICATED ? unauthenticated : denied) += calls;
  }
  // Every denial was counted (stoker_rpc_denied_total{code}).
  EXPECT_EQ(RpcDenialCounts().permission_denied - before.permission_denied, denied);
  EXPECT_EQ(RpcDenialCounts().unauthenticated - before.unauthenticated, unauthenticated);
}

// The simple setup: the trainer has the CA and its token, no certificate; the job delivers
// every batch once.
TEST(TokenAuthTest, WholeJobWithATrainerToken) {
  absl::StatusOr<std::shared_ptr<TestCerts>> certs = TestCerts::Make();
  ASSERT_TRUE(certs.ok()) << certs.status();
  auto cluster = StartTokenCluster(*certs);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  LoaderOptions options;
  options.coordinator_address = (*cluster)->coordinator_address();
  options.tls = (*certs)->TokenOnly(Role::kTrainer);
  options.job_name = "token-job";
  pb::JobSpec& spec = options.spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(64);
  synthetic->set_height(8);
  synthetic->set_width(8);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  spec.set_batch_size(4);
  spec.set_world_size(1);
  spec.set_epochs(1);
  spec.set_drop_last(true);
  options.heartbeat_interval = absl::Milliseconds(50);
  auto loader = Loader::Open(options);
  ASSERT_TRUE(loader.ok()) << loader.status();
  std::multiset<uint64_t> batches;
  absl::Status drained = DrainLoader(**loader, [&](Batch& batch) {
    batches.insert(batch.batch_index());
    return absl::OkStatus();
  });
  ASSERT_TRUE(drained.ok()) << drained;
  EXPECT_EQ(batches.size(), 16u);
  EXPECT_EQ(std::set<uint64_t>(batches.begin(), batches.end()).size(), 16u);
}

// Tokens never travel in plaintext, and a client token file holds one token.
TEST(TokenAuthTest, ConfigRefusesTokensWithoutTlsAndSeveralClientTokens) {
  absl::StatusOr<std::shared_ptr<TestCerts>> certs = TestCerts::Make();
  ASSERT_TRUE(certs.ok()) << certs.status();
  TlsConfig plaintext = TlsConfig::Plaintext();
  plaintext.bearer_token_file = (*certs)->TokenOnly(Role::kTrainer).bearer_token_file;
  EXPECT_THAT(plaintext.Validate().message(),
              ::testing::HasSubstr("tls.bearer_token_file: bearer"));
  TlsConfig several = (*certs)->TokenOnly(Role::kTrainer);
  several.bearer_token_file = (*certs)->tokens_file();
  EXPECT_EQ(several.Validate().code(), absl::StatusCode::kInvalidArgument);
  // (one per role: coordinator, worker, trainer, operator, scaler)
  EXPECT_THAT(several.Validate().message(), ::testing::HasSubstr("holds 5 tokens"));
  // A server needs its own certificate, tokens or not.
  EXPECT_THAT((*certs)->TokenOnly(Role::kWorker).ValidateServing().message(),
              ::testing::HasSubstr("tls.cert_file: a server"));
}

}  // namespace
}  // namespace stoker
