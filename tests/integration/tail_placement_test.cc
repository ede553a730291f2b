// Automatic tail placement (JobSpec.tail, coordinator/tail_placement.h) through the whole path
// (TestCluster: coordinator and workers over real gRPC on loopback, JPEG shards packed by
// stoker-pack): a job placed AUTO ships uint8 HWC and its client runs the to_float / normalize
// tail, delivering bit for bit what the same job placed on the workers delivers; every rank of a
// job gets the placement the coordinator recorded. Delivered to a device, the placed tail runs in
// the DeviceFeeder instead (trainer_client/device/tail_on_device.h), here its host twin.

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/pipeline_text.h"
#include "data/storage_backend.h"
#include "data/testing/shard_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/drain_loader.h"
#include "tests/testing/packed_images.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/client_tail.h"
#include "trainer_client/device/device_feeder.h"
#include "trainer_client/device/tail_on_device.h"
#include "trainer_client/loader.h"
#include "trainer_client/loader_env.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::stoker::testing::TempDir;

constexpr uint32_t kBatch = 4;
constexpr uint32_t kSide = 32;

struct Delivery {
  bool tail_runs_here = false;
  uint64_t bytes_received = 0;  // payload bytes that came over the wire
  std::vector<int64_t> shape;
  std::map<uint64_t, std::string> payloads;  // by batch index
};

class TailPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ImageFolderSpec images;
    images.dir = dir_.File("images");
    images.classes = 4;
    images.per_class = 8;
    images.width = 96;
    images.height = 72;
    PackOptions pack;
    pack.output_dir = dir_.File("shards");
    auto summary = PackGeneratedImages(*Storage::FromEnvironment(), images, pack);
    ASSERT_TRUE(summary.ok()) << summary.status();
    manifest_ = pack.output_dir + "/manifest.json";
    auto cluster = TestCluster::Start(2);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  // decode, random_resized_crop, flip, to_float, normalize with the given output format.
  pb::JobSpec Spec(pb::TailPlacement tail, pb::DType dtype, pb::Layout layout,
                   uint32_t world_size = 1) const {
    pb::JobSpec spec;
    spec.mutable_dataset()->mutable_shards()->set_manifest(manifest_);
    *spec.mutable_pipeline() = *ParsePipelineText(
        absl::StrCat("decode, random_resized_crop(height=", kSide, ", width=", kSide,
                     "), horizontal_flip, to_float, "
                     "normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])"));
    spec.mutable_pipeline()->set_output_dtype(dtype);
    spec.mutable_pipeline()->set_output_layout(layout);
    spec.set_batch_size(kBatch);
    spec.set_seed(11);
    spec.set_world_size(world_size);
    spec.set_epochs(1);
    spec.set_drop_last(true);
    spec.set_tail(tail);
    return spec;
  }

  absl::StatusOr<std::unique_ptr<Loader>> Open(const std::string& name, const pb::JobSpec& spec,
                                               uint32_t rank = 0,
                                               BatchTailFactory tail = ClientTailFactory()) const {
    LoaderOptions options;
    options.coordinator_address = cluster_->coordinator_address();
    options.tls = cluster_->tls_for(Role::kTrainer);
    options.job_name = name;
    options.spec = spec;
    options.rank = rank;
    options.heartbeat_interval = absl::Milliseconds(50);
    LoaderEnv env;
    env.tail = std::move(tail);
    return Loader::Open(std::move(options), std::move(env));
  }

  absl::StatusOr<Delivery> Consume(const std::string& name, const pb::JobSpec& spec) const {
    absl::StatusOr<std::unique_ptr<Loader>> loader = Open(name, spec);
    if (!loader.ok()) return loader.status();
    Delivery run;
    run.tail_runs_here = (*loader)->tail_runs_here();
    absl::Status drained = DrainLoader(**loader, [&](Batch& batch) {
      run.shape.assign(batch.shape().begin(), batch.shape().end());
      auto bytes = batch.bytes();
      run.payloads[batch.batch_index()] =
          std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      return absl::OkStatus();
    });
    if (!drained.ok()) return drained;
    run.bytes_received = (*loader)->stats().bytes_received;
    return run;
  }

  TempDir dir_;
  std::string manifest_;
  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(TailPlacementTest, AutoDeliversExactlyWhatTheWorkersWouldSend) {
  for (const auto& [dtype, layout] :
       {std::pair{pb::DTYPE_FLOAT32, pb::LAYOUT_CHW}, std::pair{pb::DTYPE_FLOAT16, pb::LAYOUT_HWC},
        std::pair{pb::DTYPE_BFLOAT16, pb::LAYOUT_CHW}}) {
    SCOPED_TRACE(absl::StrCat(pb::DType_Name(dtype), " ", pb::Layout_Name(layout)));
    const std::string name = absl::StrCat(pb::DType_Name(dtype), "-", pb::Layout_Name(layout));
    absl::StatusOr<Delivery> worker =
        Consume(name + "-worker", Spec(pb::TAIL_PLACEMENT_WORKER, dtype, layout));
    ASSERT_TRUE(worker.ok()) << worker.status();
    absl::StatusOr<Delivery> automatic =
        Consume(name + "-auto", Spec(pb::TAIL_PLACEMENT_AUTO, dtype, layout));
    ASSERT_TRUE(automatic.ok()) << automatic.status();

    EXPECT_FALSE(worker->tail_runs_here);
    EXPECT_TRUE(automatic->tail_runs_here);
    ASSERT_EQ(worker->payloads.size(), 32u / kBatch);
    EXPECT_EQ(automatic->shape, worker->shape);
    EXPECT_TRUE(automatic->payloads == worker->payloads) << "the client tail's batches differ";
    // uint8 on the wire: a byte per value against 2 or 4.
    EXPECT_LT(automatic->bytes_received * 2, worker->bytes_received + 1);
  }
}

TEST_F(TailPlacementTest, OnADeviceTheFeederRunsThePlacedTail) {
  const pb::JobSpec spec = Spec(pb::TAIL_PLACEMENT_AUTO, pb::DTYPE_FLOAT32, pb::LAYOUT_CHW);
  absl::StatusOr<Delivery> worker = Consume("device-worker", [&] {
    pb::JobSpec on_workers = spec;
    on_workers.set_tail(pb::TAIL_PLACEMENT_WORKER);
    return on_workers;
  }());
  ASSERT_TRUE(worker.ok()) << worker.status();

  auto folded = std::make_shared<std::optional<DeviceNormalization>>();
  absl::StatusOr<std::unique_ptr<Loader>> loader =
      Open("device", spec, 0, DeviceTailFactory(folded));
  ASSERT_TRUE(loader.ok()) << loader.status();
  ASSERT_TRUE(folded->has_value());
  EXPECT_THAT((*loader)->batch_shape(), ::testing::ElementsAre(kBatch, kSide, kSide, 3));
  DeviceOptions options;  // device "cpu": the host conversion, the CUDA kernel's twin
  options.mean = (*folded)->mean;
  options.std = (*folded)->std;
  absl::StatusOr<std::unique_ptr<DeviceFeeder>> feeder = DeviceFeeder::Create(options);
  ASSERT_TRUE(feeder.ok()) << feeder.status();
  size_t batches = 0;
  absl::Status drained = DrainLoader(**loader, [&](Batch& batch) {
    EXPECT_EQ(batch.dtype(), pb::DTYPE_UINT8);
    absl::StatusOr<DeviceTensor> tensor = (*feeder)->Convert(batch);
    if (!tensor.ok()) return tensor.status();
    const std::string& want = worker->payloads.at(batch.batch_index());
    const auto* want_floats = reinterpret_cast<const float*>(want.data());
    EXPECT_EQ(want.size(), size_t{kBatch} * 3 * kSide * kSide * sizeof(float));
    float worst = 0;
    for (size_t i = 0; i < want.size() / sizeof(float); ++i) {
      const float scale = std::max(1.0f, std::fabs(want_floats[i]));
      worst = std::max(worst, std::fabs(tensor->data()[i] - want_floats[i]) / scale);
    }
    EXPECT_LE(worst, kTailOnDeviceTolerance) << "batch " << batch.batch_index();
    ++batches;
    return absl::OkStatus();
  });
  ASSERT_TRUE(drained.ok()) << drained;
  EXPECT_EQ(batches, worker->payloads.size());
}

TEST_F(TailPlacementTest, UnsetPlacementIsAutoWhereTheClientCanRunTheTail) {
  absl::StatusOr<Delivery> unset =
      Consume("unset", Spec(pb::TAIL_PLACEMENT_UNSPECIFIED, pb::DTYPE_FLOAT32, pb::LAYOUT_CHW));
  ASSERT_TRUE(unset.ok()) << unset.status();
  EXPECT_TRUE(unset->tail_runs_here);
}

TEST_F(TailPlacementTest, AutoKeepsATailThatCannotSplitOnTheWorkers) {
  pb::JobSpec spec = Spec(pb::TAIL_PLACEMENT_AUTO, pb::DTYPE_FLOAT32, pb::LAYOUT_CHW);
  spec.mutable_pipeline()->mutable_ops()->RemoveLast();  // normalize
  spec.mutable_pipeline()->mutable_ops()->RemoveLast();  // to_float
  spec.mutable_pipeline()->set_output_dtype(pb::DTYPE_UINT8);
  absl::StatusOr<Delivery> run = Consume("uint8", spec);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->tail_runs_here);
}

TEST_F(TailPlacementTest, EveryRankOfAJobGetsThePlacementTheCoordinatorRecorded) {
  const pb::JobSpec spec =
      Spec(pb::TAIL_PLACEMENT_AUTO, pb::DTYPE_FLOAT32, pb::LAYOUT_CHW, /*world_size=*/2);
  absl::StatusOr<std::unique_ptr<Loader>> rank0 = Open("two-ranks", spec, 0);
  ASSERT_TRUE(rank0.ok()) << rank0.status();
  absl::StatusOr<std::unique_ptr<Loader>> rank1 = Open("two-ranks", spec, 1);
  ASSERT_TRUE(rank1.ok()) << rank1.status();
  EXPECT_TRUE((*rank0)->tail_runs_here());
  EXPECT_TRUE((*rank1)->tail_runs_here());
  EXPECT_EQ((*rank0)->job_id(), (*rank1)->job_id());
  EXPECT_THAT((*rank1)->batch_shape(), ::testing::ElementsAre(kBatch, 3, kSide, kSide));
  for (auto* loader : {rank0->get(), rank1->get()}) {
    EXPECT_TRUE(DrainLoader(*loader, [](Batch&) { return absl::OkStatus(); }).ok());
  }
  // A rank asking another placement opens another job: the recorded spec differs.
  pb::JobSpec on_workers = spec;
  on_workers.set_tail(pb::TAIL_PLACEMENT_WORKER);
  absl::StatusOr<std::unique_ptr<Loader>> other = Open("two-ranks", on_workers, 1);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists) << other.status();
}

}  // namespace
}  // namespace stoker
