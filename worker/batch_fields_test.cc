// Pass-through fields in ProduceBatch: each sample's values after the tensor, one column per field,
// the replacement's values for a bad sample, and the job's fields checked at JobContext::Create.

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/bad_sample.h"
#include "common/field_limits.h"
#include "data/dataset_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "wire/batch_check.h"
#include "worker/batch_producer.h"
#include "worker/task_id_for_test.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;
using worker_testing::TaskOf;

// 2×2 grey images of the index; fields "text" (a caption with multi-byte UTF-8, its length
// growing with the index) and "json"; the indices in `missing` lack their text.
class CaptionSource : public Source {
 public:
  CaptionSource(uint64_t n, std::set<uint64_t> missing) : n_(n), missing_(std::move(missing)) {}
  uint64_t size() const override { return n_; }
  InputFormat format() const override {
    return InputFormat::Decoded(ImageShape{2, 2, 1, PixelType::kUint8});
  }
  absl::Status Read(uint64_t index, SampleBuffer* sample) const override {
    if (missing_.count(index)) return BadSampleError(BadSampleReason::kMissingField, "no text");
    sample->image.Reshape(format().shape);
    std::memset(sample->image.view().data, static_cast<int>(index), 4);
    sample->label = static_cast<int64_t>(index);
    sample->fields.resize(2);
    const std::string text = Caption(index), json = Json(index);
    sample->fields[0].assign(text.begin(), text.end());
    sample->fields[1].assign(json.begin(), json.end());
    return absl::OkStatus();
  }
  std::string Locate(uint64_t index) const override { return absl::StrCat("caption ", index); }
  absl::Status CheckField(absl::string_view) const override { return absl::OkStatus(); }

  static std::string Caption(uint64_t i) {
    return absl::StrCat("caf\xc3\xa9 ", std::string(i, 'x'));
  }
  static std::string Json(uint64_t i) { return absl::StrCat("{\"i\": ", i, "}"); }

 private:
  uint64_t n_;
  std::set<uint64_t> missing_;
};

pb::JobSpec CaptionJob(std::initializer_list<const char*> fields) {
  pb::JobSpec spec;
  spec.mutable_dataset()->mutable_synthetic();  // Unused: the source is injected.
  spec.set_batch_size(4);
  spec.set_shuffle(pb::SHUFFLE_MODE_NONE);
  spec.set_world_size(1);
  spec.set_epochs(1);
  for (const char* field : fields) spec.add_fields(field);
  return spec;
}

std::string Value(const pb::BatchMessage& batch, int column, int i) {
  const auto& offsets = batch.header().fields(column).offsets();
  return batch.data().substr(offsets.Get(i), offsets.Get(i + 1) - offsets.Get(i));
}

TEST(BatchFieldsTest, ValuesFollowTheTensorColumnByColumn) {
  auto job = JobContext::Create(1, CaptionJob({"image", "text", "label", "json"}),
                                std::make_unique<CaptionSource>(8, std::set<uint64_t>{}));
  ASSERT_TRUE(job.ok()) << job.status();
  ProducerScratch scratch;
  pb::BatchMessage batch;
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 1), 1, &scratch, &batch).ok());
  ASSERT_EQ(batch.header().fields_size(), 2);
  EXPECT_EQ(batch.header().fields(0).name(), "text");
  EXPECT_EQ(batch.header().fields(1).name(), "json");
  EXPECT_EQ(batch.header().fields(0).offsets(0), 16u);  // After 4 images of 4 bytes.
  EXPECT_TRUE(CheckBatchHeader(batch.header(), batch.data().size()).ok());
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Value(batch, 0, i), CaptionSource::Caption(4 + i));
    EXPECT_EQ(Value(batch, 1, i), CaptionSource::Json(4 + i));
  }
  // A reused message and scratch: the next batch's columns start afresh.
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 0), 1, &scratch, &batch).ok());
  EXPECT_TRUE(CheckBatchHeader(batch.header(), batch.data().size()).ok());
  EXPECT_EQ(Value(batch, 0, 0), CaptionSource::Caption(0));
  EXPECT_EQ(Value(batch, 1, 3), CaptionSource::Json(3));
}

TEST(BatchFieldsTest, ABadSampleIsReplacedWithItsFields) {
  auto job = JobContext::Create(1, CaptionJob({"image", "text", "json"}),
                                std::make_unique<CaptionSource>(8, std::set<uint64_t>{1}));
  ASSERT_TRUE(job.ok());
  ProducerScratch scratch;
  pb::BatchMessage batch;
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 0), 1, &scratch, &batch).ok());
  EXPECT_THAT(batch.header().sample_indices(), ElementsAre(0, 2, 2, 3));
  EXPECT_THAT(batch.header().bad_samples(), UnorderedElementsAre(Pair("missing_field", 1)));
  EXPECT_EQ(Value(batch, 0, 1), CaptionSource::Caption(2));
  EXPECT_EQ(Value(batch, 1, 1), CaptionSource::Json(2));
}

TEST(BatchFieldsTest, AJobWithoutFieldsCarriesTheTensorAlone) {
  auto job = JobContext::Create(1, CaptionJob({}),
                                std::make_unique<CaptionSource>(8, std::set<uint64_t>{}));
  ASSERT_TRUE(job.ok());
  ProducerScratch scratch;
  pb::BatchMessage batch;
  ASSERT_TRUE(ProduceBatch(**job, TaskOf(1, 0, 0), 1, &scratch, &batch).ok());
  EXPECT_EQ(batch.header().fields_size(), 0);
  EXPECT_EQ(batch.data().size(), 16u);
}

// The worker holds a batch at its largest: every field value at kMaxFieldValueBytes, so that the
// bytes a job's fields can make it hold are counted against --memory-bytes before they exist.
TEST(BatchFieldsTest, ABatchCountsItsFieldColumnsAtTheirLargest) {
  auto with_fields = JobContext::Create(1, CaptionJob({"image", "text", "json"}),
                                        std::make_unique<CaptionSource>(8, std::set<uint64_t>{}));
  ASSERT_TRUE(with_fields.ok());
  EXPECT_EQ((*with_fields)->batch_bytes(), 16u);  // 4 images of 2x2x1.
  const std::vector<std::string> columns = {"text", "json"};
  EXPECT_EQ((*with_fields)->max_batch_bytes(), 16u + MaxFieldColumnBytes(4, columns, 2 * 2));
  EXPECT_GE((*with_fields)->max_batch_bytes(), 16u + 2 * 4 * uint64_t{kMaxFieldValueBytes});
  auto without = JobContext::Create(1, CaptionJob({}),
                                    std::make_unique<CaptionSource>(8, std::set<uint64_t>{}));
  ASSERT_TRUE(without.ok());
  EXPECT_EQ((*without)->max_batch_bytes(), 16u);
}

TEST(BatchFieldsTest, JobContextRefusesFieldsItCannotServe) {
  const absl::Status repeated =
      JobContext::Create(1, CaptionJob({"image", "text", "text"}),
                         std::make_unique<CaptionSource>(8, std::set<uint64_t>{}))
          .status();
  EXPECT_EQ(repeated.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(repeated.message(), HasSubstr("fields[2]: \"text\" is named twice"));
  // The synthetic source has only the image and the label.
  pb::JobSpec spec = CaptionJob({"image", "label", "json"});
  pb::SyntheticSource* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(8);
  synthetic->set_height(2);
  synthetic->set_width(2);
  synthetic->set_channels(1);
  synthetic->set_num_classes(2);
  spec.mutable_pipeline()->set_output_dtype(pb::DTYPE_UINT8);
  const absl::Status synthetic_fields =
      JobContext::Create(1, spec, DatasetIo::FromEnvironment()).status();
  EXPECT_EQ(synthetic_fields.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(synthetic_fields.message(), HasSubstr("\"json\""));
}

}  // namespace
}  // namespace stoker
