#include "coordinator/tail_placement.h"

#include "augment/pipeline_text.h"
#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::HasSubstr;

pb::JobSpec Job(const std::string& pipeline, pb::TailPlacement tail) {
  pb::JobSpec spec;
  *spec.mutable_pipeline() = *ParsePipelineText(pipeline);
  spec.mutable_pipeline()->set_output_dtype(pb::DTYPE_FLOAT16);
  spec.mutable_pipeline()->set_output_layout(pb::LAYOUT_CHW);
  spec.set_batch_size(4);
  spec.set_tail(tail);
  return spec;
}

constexpr char kNormalized[] =
    "decode, horizontal_flip, to_float, normalize(mean=[0.5], std=[0.25]), "
    "normalize(mean=[0.1], std=[2])";

TEST(TailPlacementTest, AutoSplitsAtTheFinalToFloat) {
  absl::StatusOr<TailPlacement> placed = PlaceTail(Job(kNormalized, pb::TAIL_PLACEMENT_AUTO));
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->job_spec.tail(), pb::TAIL_PLACEMENT_CLIENT);
  EXPECT_EQ(placed->job_spec.pipeline().ops_size(), 5);
  const pb::PipelineSpec& head = placed->worker_spec.pipeline();
  ASSERT_EQ(head.ops_size(), 2);
  EXPECT_TRUE(head.ops(1).has_horizontal_flip());
  EXPECT_EQ(head.output_dtype(), pb::DTYPE_UINT8);
  EXPECT_EQ(head.output_layout(), pb::LAYOUT_HWC);
  ASSERT_TRUE(placed->client_tail.has_value());
  ASSERT_EQ(placed->client_tail->ops_size(), 3);
  EXPECT_TRUE(placed->client_tail->ops(0).has_to_float());
  EXPECT_EQ(placed->client_tail->output_dtype(), pb::DTYPE_FLOAT16);
  EXPECT_EQ(placed->client_tail->output_layout(), pb::LAYOUT_CHW);
  EXPECT_EQ(placed->worker_spec.batch_size(), 4u);

  // The recorded spec places the same again (GetJob, a second rank).
  absl::StatusOr<TailPlacement> again = PlaceTail(placed->job_spec);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->job_spec.SerializeAsString(), placed->job_spec.SerializeAsString());
  EXPECT_EQ(again->worker_spec.SerializeAsString(), placed->worker_spec.SerializeAsString());
}

TEST(TailPlacementTest, AutoLeavesAPipelineThatDoesNotSplitOnTheWorkers) {
  for (const char* pipeline :
       {"decode, horizontal_flip", "decode, to_float, gaussian_blur(ksize=3, sigma=1)"}) {
    absl::StatusOr<TailPlacement> placed = PlaceTail(Job(pipeline, pb::TAIL_PLACEMENT_AUTO));
    ASSERT_TRUE(placed.ok()) << placed.status();
    EXPECT_EQ(placed->job_spec.tail(), pb::TAIL_PLACEMENT_UNSPECIFIED) << pipeline;
    EXPECT_FALSE(placed->client_tail.has_value());
    EXPECT_EQ(placed->worker_spec.pipeline().SerializeAsString(),
              Job(pipeline, pb::TAIL_PLACEMENT_AUTO).pipeline().SerializeAsString());
  }
  pb::JobSpec mixed = Job(kNormalized, pb::TAIL_PLACEMENT_AUTO);
  mixed.mutable_pipeline()->mutable_batch_mix()->set_mixup_alpha(0.8f);
  absl::StatusOr<TailPlacement> placed = PlaceTail(mixed);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->job_spec.tail(), pb::TAIL_PLACEMENT_UNSPECIFIED);
}

TEST(TailPlacementTest, WorkerAndUnsetRunEverythingOnTheWorkers) {
  for (pb::TailPlacement tail : {pb::TAIL_PLACEMENT_WORKER, pb::TAIL_PLACEMENT_UNSPECIFIED}) {
    absl::StatusOr<TailPlacement> placed = PlaceTail(Job(kNormalized, tail));
    ASSERT_TRUE(placed.ok()) << placed.status();
    // Recorded unset: the job a client that predates the field (or a journal from before it)
    // opens.
    EXPECT_EQ(placed->job_spec.tail(), pb::TAIL_PLACEMENT_UNSPECIFIED);
    EXPECT_FALSE(placed->client_tail.has_value());
    EXPECT_EQ(placed->worker_spec.pipeline().ops_size(), 5);
  }
}

TEST(TailPlacementTest, ClientNeedsAPipelineThatSplits) {
  EXPECT_THAT(PlaceTail(Job("decode, to_float, horizontal_flip", pb::TAIL_PLACEMENT_CLIENT)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tail: a client tail")));
  pb::JobSpec mixed = Job(kNormalized, pb::TAIL_PLACEMENT_CLIENT);
  mixed.mutable_pipeline()->mutable_batch_mix()->set_cutmix_alpha(1.0f);
  EXPECT_THAT(PlaceTail(mixed),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("batch-level mixup/cutmix")));
  pb::JobSpec unknown = Job(kNormalized, static_cast<pb::TailPlacement>(9));
  EXPECT_THAT(PlaceTail(unknown),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tail: unknown placement 9")));
}

}  // namespace
}  // namespace stoker
