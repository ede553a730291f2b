#include "trainer_client/batch.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stoker/v1/worker.pb.h"
#include "trainer_client/testing/fake_env.h"

namespace stoker {
namespace {

using ::stoker::testing::MakeBatchMessage;
using ::testing::ElementsAre;

TEST(BatchTest, ViewsTheMessageWithoutCopying) {
  auto message = MakeBatchMessage(/*job=*/7, /*epoch=*/2, /*batch_index=*/5, /*worker_id=*/9,
                                  /*samples=*/2, /*bytes_per_sample=*/3);
  Batch batch(message);
  EXPECT_FALSE(batch.empty());
  EXPECT_EQ(batch.data(), message->data().data());
  EXPECT_EQ(batch.size_bytes(), 6u);
  EXPECT_THAT(batch.bytes(), ElementsAre(5, 5, 5, 5, 5, 5));
  EXPECT_THAT(batch.shape(), ElementsAre(2, 1, 1, 3));
  EXPECT_EQ(batch.dtype(), v1::DTYPE_UINT8);
  EXPECT_EQ(batch.layout(), v1::LAYOUT_HWC);
  EXPECT_THAT(batch.sample_indices(), ElementsAre(10, 11));
  EXPECT_THAT(batch.labels(), ElementsAre(0, 1));
  EXPECT_EQ(batch.num_samples(), 2u);
  EXPECT_EQ(batch.job_id(), 7u);
  EXPECT_EQ(batch.epoch(), 2u);
  EXPECT_EQ(batch.batch_index(), 5u);
  EXPECT_EQ(batch.worker_id(), 9u);
  EXPECT_DOUBLE_EQ(batch.produce_seconds(), 0.5);
}

TEST(BatchTest, CopiesShareThePayload) {
  auto message = MakeBatchMessage(7, 0, 1);
  Batch a(message);
  Batch b = a;
  message.reset();
  EXPECT_EQ(a.data(), b.data());
  EXPECT_EQ(b.size_bytes(), 6u);
}

TEST(BatchTest, ElementsMatchTheDtype) {
  auto message = MakeBatchMessage(7, 0, 1);
  Batch batch(message);
  EXPECT_EQ(batch.elements<uint8_t>().size(), 6u);
  EXPECT_TRUE(batch.elements<float>().empty());

  auto floats = std::make_shared<v1::BatchMessage>();
  floats->mutable_header()->set_dtype(v1::DTYPE_FLOAT32);
  const float values[] = {0.25f, 0.5f};
  floats->set_data(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  Batch float_batch(floats);
  EXPECT_THAT(float_batch.elements<float>(), ElementsAre(0.25f, 0.5f));
  EXPECT_TRUE(float_batch.elements<uint8_t>().empty());
}

TEST(BatchTest, SoftLabelsAreAViewWithTheirClassCount) {
  auto message = MakeBatchMessage(7, 0, 1);  // two samples
  EXPECT_TRUE(Batch(message).soft_labels().empty());
  EXPECT_EQ(Batch(message).num_classes(), 0u);
  for (float v : {0.75f, 0.25f, 0.0f, 0.0f, 0.25f, 0.75f}) {
    message->mutable_header()->add_soft_labels(v);
  }
  Batch batch(message);
  EXPECT_EQ(batch.num_classes(), 3u);
  EXPECT_EQ(batch.soft_labels().data(), message->header().soft_labels().data());
  EXPECT_THAT(batch.soft_labels(), ElementsAre(0.75f, 0.25f, 0.0f, 0.0f, 0.25f, 0.75f));
}

TEST(BatchTest, EmptyBatchHasEmptyViews) {
  Batch batch;
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.size_bytes(), 0u);
  EXPECT_TRUE(batch.shape().empty());
  EXPECT_TRUE(batch.labels().empty());
  EXPECT_TRUE(batch.sample_indices().empty());
  EXPECT_EQ(batch.epoch(), 0u);
  EXPECT_EQ(batch.dtype(), v1::DTYPE_UNSPECIFIED);
}

// A two-sample batch of 6 tensor bytes whose payload continues with a "text" column, views over
// the payload's bytes.
TEST(BatchTest, FieldValuesAreViewsIntoThePayloadAfterTheTensor) {
  auto message = MakeBatchMessage(7, 0, 1);  // two samples, 6 bytes
  message->mutable_data()->append(
      "caf\xc3\xa9"
      "ok");
  v1::FieldColumn* text = message->mutable_header()->add_fields();
  text->set_name("text");
  for (uint64_t offset : {6, 11, 13}) text->add_offsets(offset);
  Batch batch(message);
  EXPECT_EQ(batch.size_bytes(), 6u);
  EXPECT_EQ(batch.bytes().size(), 6u);
  EXPECT_EQ(batch.elements<uint8_t>().size(), 6u);
  ASSERT_EQ(batch.num_fields(), 1u);
  EXPECT_EQ(batch.field_name(0), "text");
  EXPECT_EQ(batch.FindField("text"), 0);
  EXPECT_EQ(batch.FindField("json"), -1);
  const absl::Span<const uint8_t> first = batch.field_value(0, 0);
  EXPECT_EQ(std::string(first.begin(), first.end()), "caf\xc3\xa9");
  EXPECT_EQ(first.data(), reinterpret_cast<const uint8_t*>(message->data().data()) + 6);
  const absl::Span<const uint8_t> second = batch.field_value(0, 1);
  EXPECT_EQ(std::string(second.begin(), second.end()), "ok");
}

// Typed targets after an odd-sized tensor: float32 and int64 values at unaligned payload offsets
// come back copied and exact; masks are a view; a batch without a column gives empty values.
TEST(BatchTest, TypedTargetsAreReadAtAnyAlignment) {
  auto message = MakeBatchMessage(7, 0, 1);  // two samples, 6 bytes
  message->mutable_data()->append("x");      // a 1-byte "text" value: the typed ones start odd
  std::string& data = *message->mutable_data();
  auto append = [&data](const void* bytes, size_t n) {
    data.append(static_cast<const char*>(bytes), n);
    return data.size();
  };
  v1::FieldColumn* text = message->mutable_header()->add_fields();
  text->set_name("text");
  for (uint64_t offset : {6, 7, 7}) text->add_offsets(offset);
  const float box[4] = {1.5f, 2, 30.25f, 40};
  const int64_t label = -3;
  const uint8_t mask[3] = {0, 1, 1};
  const uint32_t per_instance = 1;
  const float keypoint[3] = {4, 5.5f, 2};
  v1::FieldColumn* boxes = message->mutable_header()->add_fields();
  boxes->set_name("boxes");
  boxes->add_offsets(data.size());
  boxes->add_offsets(append(box, sizeof(box)));
  boxes->add_offsets(data.size());
  v1::FieldColumn* labels = message->mutable_header()->add_fields();
  labels->set_name("box_labels");
  labels->add_offsets(data.size());
  labels->add_offsets(append(&label, sizeof(label)));
  labels->add_offsets(data.size());
  v1::FieldColumn* masks = message->mutable_header()->add_fields();
  masks->set_name("masks");
  masks->add_offsets(data.size());
  masks->add_offsets(append(mask, sizeof(mask)));
  masks->add_offsets(data.size());
  v1::FieldColumn* keypoints = message->mutable_header()->add_fields();
  keypoints->set_name("keypoints");
  keypoints->add_offsets(data.size());
  append(&per_instance, sizeof(per_instance));
  keypoints->add_offsets(append(keypoint, sizeof(keypoint)));
  keypoints->add_offsets(data.size());
  const uint8_t labels_map[6] = {5, 0, 255, 1, 2, 3};
  v1::FieldColumn* semantic = message->mutable_header()->add_fields();
  semantic->set_name("semantic_mask");
  semantic->add_offsets(data.size());
  semantic->add_offsets(append(labels_map, 3));
  semantic->add_offsets(append(labels_map + 3, 3));
  Batch batch(message);
  EXPECT_THAT(batch.boxes(0), ElementsAre(1.5f, 2, 30.25f, 40));
  EXPECT_THAT(batch.box_labels(0), ElementsAre(-3));
  EXPECT_THAT(batch.masks(0), ElementsAre(0, 1, 1));
  EXPECT_THAT(batch.semantic_mask(0), ElementsAre(5, 0, 255));
  EXPECT_THAT(batch.semantic_mask(1), ElementsAre(1, 2, 3));
  uint32_t k = 7;
  EXPECT_THAT(batch.keypoints(0, &k), ElementsAre(4, 5.5f, 2));
  EXPECT_EQ(k, 1u);
  EXPECT_TRUE(batch.boxes(1).empty());
  EXPECT_TRUE(batch.keypoints(1, &k).empty());
  EXPECT_EQ(k, 0u);
  Batch without(MakeBatchMessage(7, 0, 1));
  EXPECT_TRUE(without.boxes(0).empty());
  EXPECT_TRUE(without.masks(0).empty());
  EXPECT_TRUE(without.semantic_mask(0).empty());
}

}  // namespace
}  // namespace stoker
