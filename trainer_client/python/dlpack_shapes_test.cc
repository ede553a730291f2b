// The Python module's DLPack shapes: no capsule is described whose shape times its element size
// exceeds the bytes it views.

#include "trainer_client/python/dlpack_shapes.h"

#include <memory>

#include "coordinator/status_matchers_for_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer_client/testing/fake_env.h"

namespace stoker {
namespace {

using ::stoker::testing::MakeBatchMessage;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(DlpackShapesTest, AnHonestBatchGetsItsShapes) {
  std::shared_ptr<v1::BatchMessage> message = MakeBatchMessage(1, 0, 0);
  for (int i = 0; i < 6; ++i) message->mutable_header()->add_soft_labels(0.5f);
  const Batch batch(message);
  absl::StatusOr<std::vector<int64_t>> images = ImagesDlpackShape(batch);
  ASSERT_TRUE(images.ok()) << images.status();
  EXPECT_THAT(*images, ElementsAre(2, 1, 1, 3));
  absl::StatusOr<std::vector<int64_t>> soft = SoftLabelsDlpackShape(batch);
  ASSERT_TRUE(soft.ok()) << soft.status();
  EXPECT_THAT(*soft, ElementsAre(2, 3));
}

TEST(DlpackShapesTest, AShapeBeyondThePayloadGetsNoImagesTensor) {
  std::shared_ptr<v1::BatchMessage> message = MakeBatchMessage(1, 0, 0);
  message->mutable_header()->set_shape(1, 1000);  // 6,000 bytes over a 6-byte payload
  EXPECT_THAT(ImagesDlpackShape(Batch(message)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("header.shape")));
  message->mutable_header()->set_shape(1, 1);
  message->mutable_header()->set_dtype(v1::DTYPE_FLOAT32);  // 24 bytes over 6
  EXPECT_THAT(ImagesDlpackShape(Batch(message)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("header.shape")));
}

TEST(DlpackShapesTest, SoftLabelsThatAreNotWholeRowsGetNoTensor) {
  std::shared_ptr<v1::BatchMessage> message = MakeBatchMessage(1, 0, 0);
  EXPECT_THAT(SoftLabelsDlpackShape(Batch(message)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("has none")));
  for (int i = 0; i < 5; ++i) message->mutable_header()->add_soft_labels(0.2f);
  EXPECT_THAT(SoftLabelsDlpackShape(Batch(message)),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("header.soft_labels: 5 values are not whole rows for 2 samples")));
}

}  // namespace
}  // namespace stoker
