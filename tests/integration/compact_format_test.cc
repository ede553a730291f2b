// Compact batch formats through the whole path (TestCluster: coordinator and workers over real
// gRPC on loopback): float16 / bfloat16 jobs deliver exactly the float32 job's tensors rounded
// by augment/kernels/half.h, and the tail on the client (JobSpec.tail = TAIL_PLACEMENT_CLIENT)
// delivers exactly what the workers would have sent.

#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/kernels/half.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/drain_loader.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/client_tail.h"
#include "trainer_client/loader.h"
#include "trainer_client/loader_env.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

// to_float and normalize of small synthetic images: a pipeline with a client-side tail.
pb::JobSpec NormalizeJob(pb::DType dtype, pb::Layout layout) {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(48);
  synthetic->set_height(14);
  synthetic->set_width(10);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_horizontal_flip();
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  auto* normalize = spec.mutable_pipeline()->add_ops()->mutable_normalize();
  for (float m : {0.485f, 0.456f, 0.406f}) normalize->add_mean(m);
  for (float s : {0.229f, 0.224f, 0.225f}) normalize->add_std(s);
  spec.mutable_pipeline()->set_output_dtype(dtype);
  spec.mutable_pipeline()->set_output_layout(layout);
  spec.set_batch_size(8);
  spec.set_seed(7);
  spec.set_shuffle(pb::SHUFFLE_MODE_GLOBAL);
  spec.set_world_size(1);
  spec.set_epochs(1);
  spec.set_drop_last(true);
  return spec;
}

struct Delivery {
  pb::DType dtype = pb::DTYPE_UNSPECIFIED;
  uint64_t bytes_received = 0;  // payload bytes that came over the wire
  std::vector<int64_t> shape;
  std::map<uint64_t, std::string> payloads;  // by batch index
};

absl::StatusOr<Delivery> ConsumeJob(const TestCluster& cluster, const std::string& name,
                                    const pb::JobSpec& spec, bool client_tail) {
  LoaderOptions options;
  options.coordinator_address = cluster.coordinator_address();
  options.tls = cluster.tls_for(Role::kTrainer);
  options.job_name = name;
  options.spec = spec;
  options.heartbeat_interval = absl::Milliseconds(50);
  // Without the client tail the reference is what the workers send (not the AUTO placement).
  options.spec.set_tail(client_tail ? pb::TAIL_PLACEMENT_CLIENT : pb::TAIL_PLACEMENT_WORKER);
  LoaderEnv env;
  env.tail = ClientTailFactory();
  absl::StatusOr<std::unique_ptr<Loader>> loader = Loader::Open(std::move(options), std::move(env));
  if (!loader.ok()) return loader.status();
  Delivery run;
  absl::Status drained = DrainLoader(**loader, [&](Batch& batch) {
    run.dtype = batch.dtype();
    run.shape.assign(batch.shape().begin(), batch.shape().end());
    EXPECT_EQ(batch.size_bytes(), (*loader)->batch_bytes());
    EXPECT_THAT(run.shape, ::testing::ElementsAreArray((*loader)->batch_shape()));
    auto bytes = batch.bytes();
    run.payloads[batch.batch_index()] =
        std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return absl::OkStatus();
  });
  if (!drained.ok()) return drained;
  run.bytes_received = (*loader)->stats().bytes_received;
  return run;
}

// The float32 payload narrowed with `convert`.
std::string Narrowed(const std::string& float32, void (*convert)(const float*, size_t, void*)) {
  std::vector<float> floats(float32.size() / 4);
  std::memcpy(floats.data(), float32.data(), float32.size());
  std::string out(floats.size() * 2, '\0');
  convert(floats.data(), floats.size(), out.data());
  return out;
}

class CompactFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(2);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    absl::StatusOr<Delivery> reference =
        ConsumeJob(*cluster_, "f32", NormalizeJob(pb::DTYPE_FLOAT32, pb::LAYOUT_CHW), false);
    ASSERT_TRUE(reference.ok()) << reference.status();
    reference_ = *std::move(reference);
    ASSERT_EQ(reference_.payloads.size(), 6u);
    ASSERT_EQ(reference_.shape, (std::vector<int64_t>{8, 3, 14, 10}));
  }

  std::unique_ptr<TestCluster> cluster_;
  Delivery reference_;
};

TEST_F(CompactFormatTest, HalfJobsDeliverTheRoundedFloat32Tensors) {
  for (const auto& [dtype, convert] : {std::pair<pb::DType, void (*)(const float*, size_t, void*)>{
                                           pb::DTYPE_FLOAT16, &FloatToFloat16},
                                       {pb::DTYPE_BFLOAT16, &FloatToBfloat16}}) {
    absl::StatusOr<Delivery> run = ConsumeJob(*cluster_, absl::StrCat("half-", dtype),
                                              NormalizeJob(dtype, pb::LAYOUT_CHW), false);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(run->dtype, dtype);
    EXPECT_EQ(run->shape, reference_.shape);
    ASSERT_EQ(run->payloads.size(), reference_.payloads.size());
    for (const auto& [index, payload] : reference_.payloads) {
      EXPECT_EQ(run->payloads[index], Narrowed(payload, convert))
          << "dtype " << dtype << " batch " << index;
    }
  }
}

TEST_F(CompactFormatTest, TailOnClientDeliversExactlyTheWorkersTensors) {
  absl::StatusOr<Delivery> tail = ConsumeJob(
      *cluster_, "tail-f32", NormalizeJob(pb::DTYPE_FLOAT32, pb::LAYOUT_CHW), /*tail=*/true);
  ASSERT_TRUE(tail.ok()) << tail.status();
  EXPECT_EQ(tail->dtype, pb::DTYPE_FLOAT32);
  EXPECT_EQ(tail->shape, reference_.shape);
  EXPECT_EQ(tail->payloads, reference_.payloads);  // bit for bit
  // The workers sent uint8: a quarter of the float32 bytes.
  ASSERT_GT(reference_.bytes_received, 0u);
  EXPECT_EQ(tail->bytes_received * 4, reference_.bytes_received);

  absl::StatusOr<Delivery> tail16 = ConsumeJob(
      *cluster_, "tail-f16", NormalizeJob(pb::DTYPE_FLOAT16, pb::LAYOUT_CHW), /*tail=*/true);
  ASSERT_TRUE(tail16.ok()) << tail16.status();
  EXPECT_EQ(tail16->dtype, pb::DTYPE_FLOAT16);
  ASSERT_EQ(tail16->payloads.size(), reference_.payloads.size());
  for (const auto& [index, payload] : reference_.payloads) {
    EXPECT_EQ(tail16->payloads[index], Narrowed(payload, &FloatToFloat16)) << "batch " << index;
  }
}

TEST_F(CompactFormatTest, TailOnClientNeedsAToFloatTail) {
  pb::JobSpec spec = NormalizeJob(pb::DTYPE_FLOAT32, pb::LAYOUT_CHW);
  spec.mutable_pipeline()->add_ops()->mutable_horizontal_flip();  // the pipeline ends in a flip
  absl::StatusOr<Delivery> run = ConsumeJob(*cluster_, "no-tail", spec, /*tail=*/true);
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(run.status().message(),
              HasSubstr("tail: a client tail (tail \"client\") needs a pipeline that ends in "
                        "to_float"));

  pb::JobSpec mixed = NormalizeJob(pb::DTYPE_FLOAT32, pb::LAYOUT_CHW);
  mixed.mutable_pipeline()->mutable_batch_mix()->set_num_classes(10);
  mixed.mutable_pipeline()->mutable_batch_mix()->set_mixup_alpha(0.8f);
  run = ConsumeJob(*cluster_, "mixed-tail", mixed, /*tail=*/true);
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(run.status().message(),
              HasSubstr("tail: a client tail (tail \"client\") is not possible with a "
                        "batch-level mixup"));
}

}  // namespace
}  // namespace stoker
