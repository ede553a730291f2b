// KEDA's external scaler on the coordinator's port (coordinator/external_scaler_service.h),
// called as KEDA calls it: stubs generated from KEDA's proto, under mutual TLS with the scaler
// role's certificate. It answers the advisor's count for the pool; every other role is refused
// with PERMISSION_DENIED, and the scaler role is refused every Coordinator RPC but GetStatus.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/tls/grpc_tls.h"
#include "coordinator/coordinator_server.h"
#include "coordinator/test_job_spec.h"
#include "externalscaler/externalscaler.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/rpc_probe.h"
#include "tests/testing/test_certs.h"

namespace stoker {
namespace {

namespace es = ::externalscaler;
using C = grpc::StatusCode;

class ExternalScalerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<TestCerts>> certs = TestCerts::Make();
    ASSERT_TRUE(certs.ok()) << certs.status();
    certs_ = *certs;
    CoordinatorConfig config;
    config.tls = certs_->For(Role::kCoordinator);
    config.scaler.cooldown = absl::Seconds(60);
    // The fake clock: the fake worker below never times out, the cool-down never passes.
    auto server = CoordinatorServer::Start(config, DatasetIo::FromEnvironment(), &clock_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    MakeMeasuredJob();
  }

  // A job demanding 400 samples/s (batch 4, 10 ms steps, rank 0 waiting 75%) and one cpu-a
  // worker making 90 samples/s at 90% busy (100 at full): 400 × 1.1 / 100 = 4.4 → 5 workers.
  void MakeMeasuredJob() {
    Coordinator* coordinator = server_->coordinator();
    stoker::v1::OpenJobRequest open;
    open.set_name("blur");
    *open.mutable_spec() = SmallJobSpec(/*world_size=*/1);
    auto opened = coordinator->OpenJob(open);
    ASSERT_TRUE(opened.ok()) << opened.status();
    stoker::v1::RegisterWorkerRequest reg;
    reg.set_address("127.0.0.1:1");
    reg.set_cores(1);
    reg.set_pool("cpu-a");
    auto registered = coordinator->RegisterWorker(reg);
    ASSERT_TRUE(registered.ok()) << registered.status();
    stoker::v1::WorkerHeartbeatRequest heartbeat;
    heartbeat.set_worker_id(registered->worker_id());
    heartbeat.mutable_stats()->set_busy_fraction(0.9);
    stoker::v1::JobRate* rate = heartbeat.mutable_stats()->add_job_rates();
    rate->set_job_id(opened->job_id());
    rate->set_samples_per_second(90);
    ASSERT_TRUE(coordinator->WorkerHeartbeat(heartbeat).ok());
    stoker::v1::ClientHeartbeatRequest client;
    client.set_job_id(opened->job_id());
    client.set_rank(0);
    client.set_client_id("trainer-0");
    client.mutable_stats()->set_data_wait_fraction(0.75);
    client.mutable_stats()->set_step_seconds(0.010);
    ASSERT_TRUE(coordinator->ClientHeartbeat(client).ok());
  }

  std::unique_ptr<es::ExternalScaler::Stub> StubAs(Role role) {
    return es::ExternalScaler::NewStub(grpc::CreateChannel(
        server_->address(), ChannelCredentials(certs_->For(role), {Role::kCoordinator})));
  }

  static es::ScaledObjectRef Ref(const std::string& pool, const std::string& job = "",
                                 const std::string& tenant = "") {
    es::ScaledObjectRef ref;
    ref.set_name("stoker-worker-" + pool);
    ref.set_namespace_("default");
    (*ref.mutable_scalermetadata())["scalerAddress"] = "stoker-coordinator:7070";
    if (!pool.empty()) (*ref.mutable_scalermetadata())["pool"] = pool;
    if (!job.empty()) (*ref.mutable_scalermetadata())["job"] = job;
    if (!tenant.empty()) (*ref.mutable_scalermetadata())["tenant"] = tenant;
    return ref;
  }

  // GetMetrics's value for `ref`, or -1 with the failed code in `code`.
  static int64_t Metric(es::ExternalScaler::Stub* stub, const es::ScaledObjectRef& ref,
                        C* code = nullptr) {
    grpc::ClientContext context;
    es::GetMetricsRequest request;
    *request.mutable_scaledobjectref() = ref;
    request.set_metricname("s0-stoker-workers");
    es::GetMetricsResponse response;
    const grpc::Status status = stub->GetMetrics(&context, request, &response);
    if (code != nullptr) *code = status.error_code();
    if (!status.ok() || response.metricvalues_size() != 1) return -1;
    EXPECT_EQ(response.metricvalues(0).metricname(), "s0-stoker-workers");
    EXPECT_DOUBLE_EQ(response.metricvalues(0).metricvaluefloat(),
                     static_cast<double>(response.metricvalues(0).metricvalue()));
    return response.metricvalues(0).metricvalue();
  }

  static grpc::Status IsActive(es::ExternalScaler::Stub* stub, const es::ScaledObjectRef& ref,
                               bool* active) {
    grpc::ClientContext context;
    es::IsActiveResponse response;
    const grpc::Status status = stub->IsActive(&context, ref, &response);
    *active = response.result();
    return status;
  }

  FakeClock clock_;
  std::shared_ptr<TestCerts> certs_;
  std::unique_ptr<CoordinatorServer> server_;
};

TEST_F(ExternalScalerTest, AnswersTheAdvisorsCountForThePool) {
  auto stub = StubAs(Role::kScaler);
  grpc::ClientContext spec_context;
  es::GetMetricSpecResponse spec;
  ASSERT_TRUE(stub->GetMetricSpec(&spec_context, Ref("cpu-a"), &spec).ok());
  ASSERT_EQ(spec.metricspecs_size(), 1);
  EXPECT_EQ(spec.metricspecs(0).metricname(), "stoker-workers");
  EXPECT_EQ(spec.metricspecs(0).targetsize(), 1);
  EXPECT_DOUBLE_EQ(spec.metricspecs(0).targetsizefloat(), 1);

  EXPECT_EQ(Metric(stub.get(), Ref("cpu-a")), 5);
  EXPECT_EQ(Metric(stub.get(), Ref("cpu-b")), 4);  // cpu-a's one worker covers one
  EXPECT_EQ(Metric(stub.get(), Ref("")), 5);       // every pool
  bool active = false;
  ASSERT_TRUE(IsActive(stub.get(), Ref("cpu-a"), &active).ok());
  EXPECT_TRUE(active);
  // A job that is not running needs nothing: inactive, zero.
  ASSERT_TRUE(IsActive(stub.get(), Ref("cpu-a", "no-such-job"), &active).ok());
  EXPECT_FALSE(active);
  EXPECT_EQ(Metric(stub.get(), Ref("cpu-a", "no-such-job")), 0);

  // StreamIsActive: the answer at once.
  grpc::ClientContext stream_context;
  auto stream = stub->StreamIsActive(&stream_context, Ref("cpu-a"));
  es::IsActiveResponse first;
  ASSERT_TRUE(stream->Read(&first));
  EXPECT_TRUE(first.result());
  stream_context.TryCancel();
  EXPECT_EQ(stream->Finish().error_code(), C::CANCELLED);

  C code = C::OK;
  EXPECT_EQ(Metric(stub.get(), Ref("cpu a"), &code), -1);
  EXPECT_EQ(code, C::INVALID_ARGUMENT);

  // A tenant scope counts that tenant's jobs only (the running job is the default tenant's).
  EXPECT_EQ(Metric(stub.get(), Ref("cpu-a", "", "default")), 5);
  EXPECT_EQ(Metric(stub.get(), Ref("cpu-a", "", "b")), 0);
  EXPECT_EQ(Metric(stub.get(), Ref("cpu-a", "", "Not A Tenant"), &code), -1);
  EXPECT_EQ(code, C::INVALID_ARGUMENT);
}

TEST_F(ExternalScalerTest, OtherRolesAreRefused) {
  for (Role role : {Role::kOperator, Role::kTrainer, Role::kWorker, Role::kCoordinator}) {
    auto stub = StubAs(role);
    C code = C::OK;
    EXPECT_EQ(Metric(stub.get(), Ref("cpu-a"), &code), -1);
    EXPECT_EQ(code, C::PERMISSION_DENIED) << RoleName(role);
    bool active = true;
    EXPECT_EQ(IsActive(stub.get(), Ref("cpu-a"), &active).error_code(), C::PERMISSION_DENIED)
        << RoleName(role);
    grpc::ClientContext context;
    es::GetMetricSpecResponse spec;
    EXPECT_EQ(stub->GetMetricSpec(&context, Ref("cpu-a"), &spec).error_code(), C::PERMISSION_DENIED)
        << RoleName(role);
  }
}

// Read-only: the scaler's certificate may read the status, and change nothing.
TEST_F(ExternalScalerTest, TheScalerRoleMayOnlyRead) {
  const auto credentials = ChannelCredentials(certs_->For(Role::kScaler), {Role::kCoordinator});
  for (const std::string& method : CoordinatorMethods()) {
    const C want = method == "GetStatus" ? C::OK : C::PERMISSION_DENIED;
    EXPECT_EQ(ExpectedCoordinatorCode(method, Role::kScaler), want) << method;
    EXPECT_EQ(CallCoordinator(server_->address(), credentials, method), want) << method;
  }
}

}  // namespace
}  // namespace stoker
