#include "coordinator/job_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/source_factory_for_test.h"
#include "coordinator/status_matchers_for_test.h"
#include "coordinator/test_job_spec.h"

namespace stoker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(JobValidationTest, GeometryOfAValidSpec) {
  stoker::v1::JobSpec spec = SmallJobSpec(/*world_size=*/3);
  spec.set_drop_last(false);
  auto geometry = ComputeJobGeometry(spec, TestSourceFactory());
  ASSERT_THAT(geometry, IsOk());
  EXPECT_EQ(geometry->num_samples(), 40u);
  EXPECT_EQ(geometry->batches_per_rank(), 4u);  // ceil(ceil(40/4) / 3)
  EXPECT_EQ(geometry->batch_bytes(), 4u * 8 * 8 * 3 * 4);
  EXPECT_THAT(geometry->batch_shape(), ElementsAre(4, 8, 8, 3));
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()), IsOk());
}

TEST(JobValidationTest, ScalarFields) {
  stoker::v1::JobSpec spec = SmallJobSpec();
  spec.set_epochs(0);
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.epochs: must be > 0")));
  spec = SmallJobSpec();
  spec.set_shuffle(stoker::v1::SHUFFLE_MODE_BLOCK);
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.shuffle_block")));
  spec.set_shuffle_block(8);
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()), IsOk());
  spec.set_shuffle(static_cast<stoker::v1::ShuffleMode>(17));
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.shuffle: unknown")));
  spec = SmallJobSpec();
  spec.set_max_bad_sample_fraction(1.5);
  EXPECT_THAT(
      ValidateJobSpec(spec, TestSourceFactory()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.max_bad_sample_fraction")));
  spec.set_max_bad_sample_fraction(0);
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()), IsOk());
  spec.set_decoded_cache(stoker::v1::DECODED_CACHE_ON);
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()), IsOk());
  spec.set_decoded_cache(static_cast<stoker::v1::DecodedCache>(9));
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument, "spec.decoded_cache: unknown value 9"));
}

TEST(JobValidationTest, ASweepSeedNeedsBlocksOrShardWindows) {
  stoker::v1::JobSpec spec = SmallJobSpec();
  spec.set_sweep_seed(7);
  for (auto mode : {stoker::v1::SHUFFLE_MODE_UNSPECIFIED, stoker::v1::SHUFFLE_MODE_GLOBAL,
                    stoker::v1::SHUFFLE_MODE_NONE}) {
    spec.set_shuffle(mode);
    EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         "spec.sweep_seed: aligns the blocks or shard windows of a sweep's jobs; "
                         "needs SHUFFLE_MODE_BLOCK or SHUFFLE_MODE_SHARD_WINDOW"));
  }
  spec.set_shuffle(stoker::v1::SHUFFLE_MODE_BLOCK);
  spec.set_shuffle_block(8);
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()), IsOk());
}

TEST(JobValidationTest, ShardWindowNeedsAWindowAndShards) {
  stoker::v1::JobSpec spec = SmallJobSpec();  // A synthetic dataset: no shards.
  spec.set_shuffle(stoker::v1::SHUFFLE_MODE_SHARD_WINDOW);
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.shuffle_window_shards: must be in")));
  spec.set_shuffle_window_shards(4);
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.shuffle: SHUFFLE_MODE_SHARD_WINDOW needs a sharded")));
}

TEST(JobValidationTest, FieldErrorsNameTheirPosition) {
  stoker::v1::JobSpec spec = SmallJobSpec();  // A synthetic dataset: only image and label.
  spec.add_fields("image");
  spec.add_fields("label");
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()), IsOk());
  spec.add_fields("text");
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.fields[2]: \"text\": this dataset's samples have only")));
  spec.set_fields(2, "label");
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.fields[2]: \"label\" is named twice")));
  spec.set_fields(2, "boxes");
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.fields[2]: \"boxes\": this dataset's samples have only "
                                 "\"image\" and \"label\" (typed targets come from stoker "
                                 "shards")));
}

// Decoded 8x8 RGB samples that may carry any field, typed targets included.
class AnyFieldSource : public Source {
 public:
  uint64_t size() const override { return 40; }
  InputFormat format() const override {
    return InputFormat::Decoded(ImageShape{8, 8, 3, PixelType::kUint8});
  }
  absl::Status Read(uint64_t, SampleBuffer*) const override {
    return absl::UnimplementedError("not read at validation");
  }
  std::string Locate(uint64_t index) const override { return "any"; }
  absl::Status CheckField(absl::string_view) const override { return absl::OkStatus(); }
};

// A job naming typed targets is refused at OpenJob when its pipeline cannot move them, naming
// the op; the same pipeline without them is fine.
TEST(JobValidationTest, TypedTargetsNeedAPipelineThatMovesThem) {
  const SourceFactory any_field = [](const stoker::v1::DatasetSpec&, uint64_t) {
    return absl::StatusOr<std::unique_ptr<Source>>(std::make_unique<AnyFieldSource>());
  };
  stoker::v1::JobSpec spec = SmallJobSpec();
  spec.clear_pipeline();
  spec.mutable_pipeline()->add_ops()->mutable_horizontal_flip();
  spec.mutable_pipeline()->add_ops()->mutable_rand_augment();
  EXPECT_THAT(ValidateJobSpec(spec, any_field), IsOk());
  spec.add_fields("image");
  spec.add_fields("boxes");
  EXPECT_THAT(ValidateJobSpec(spec, any_field),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pipeline.ops[1] (rand_augment): moves pixels and cannot move")));
}

TEST(JobValidationTest, DatasetErrorsAreUnderSpec) {
  stoker::v1::JobSpec spec = SmallJobSpec();
  spec.clear_dataset();
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.dataset")));
  spec = SmallJobSpec();
  spec.mutable_dataset()->mutable_synthetic()->set_height(0);
  EXPECT_THAT(
      ValidateJobSpec(spec, TestSourceFactory()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.dataset.synthetic.height")));
}

TEST(JobValidationTest, NoBatchPerRankIsRefused) {
  stoker::v1::JobSpec spec = SmallJobSpec(/*world_size=*/11);  // 10 full batches, 11 ranks
  spec.set_drop_last(true);
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.drop_last")));
  spec.set_drop_last(false);
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()), IsOk());
}

TEST(JobValidationTest, OversizedBatchIsRefused) {
  stoker::v1::JobSpec spec = SmallJobSpec();
  stoker::v1::SyntheticSource* source = spec.mutable_dataset()->mutable_synthetic();
  source->set_height(2048);
  source->set_width(2048);
  spec.set_batch_size(32);  // 32 × 2048 × 2048 × 3 × 4 bytes = 1.5 GiB
  spec.set_drop_last(false);
  EXPECT_THAT(ValidateJobSpec(spec, TestSourceFactory()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.batch_size: a batch of 32 samples")));
}

}  // namespace
}  // namespace stoker
