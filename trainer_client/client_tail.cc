#include "trainer_client/client_tail.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/counter_rng.h"
#include "common/status_macros.h"
#include "stoker/v1/worker.pb.h"

namespace stoker {
namespace {

// The field values of `in` after the converted tensor in `data`, the header's offsets moved by
// the tensor's change of size.
void MoveFieldColumns(const Batch& in, v1::BatchHeader* header, std::string* data) {
  if (header->fields_size() == 0) return;
  const uint64_t in_tensor = in.size_bytes();
  const uint64_t out_tensor = data->size();
  in.payload().AppendFrom(in_tensor, data);
  for (v1::FieldColumn& column : *header->mutable_fields()) {
    for (uint64_t& offset : *column.mutable_offsets()) offset = offset - in_tensor + out_tensor;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClientTail>> ClientTail::Create(
    const v1::PipelineSpec& tail, absl::Span<const int64_t> worker_batch_shape) {
  if (worker_batch_shape.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("tail: the workers' batch shape must be [N, H, W, C], got [",
                     absl::StrJoin(worker_batch_shape, ", "), "]"));
  }
  const ImageShape image{static_cast<uint32_t>(worker_batch_shape[1]),
                         static_cast<uint32_t>(worker_batch_shape[2]),
                         static_cast<uint32_t>(worker_batch_shape[3]), PixelType::kUint8};
  absl::StatusOr<Pipeline> pipeline = Pipeline::Compile(tail, image);
  if (!pipeline.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tail: ", pipeline.status().message()));
  }
  return std::unique_ptr<ClientTail>(
      new ClientTail(*std::move(pipeline),
                     std::vector<int64_t>(worker_batch_shape.begin(), worker_batch_shape.end())));
}

ClientTail::ClientTail(Pipeline pipeline, std::vector<int64_t> input_shape)
    : pipeline_(std::move(pipeline)),
      input_shape_(std::move(input_shape)),
      batch_shape_(pipeline_.BatchShape(input_shape_[0])),
      batch_bytes_(pipeline_.output_bytes_per_sample() * input_shape_[0]),
      pool_(std::make_shared<MessagePool>(/*max_free=*/4)),
      scratch_(pipeline_.input_shape().bytes()) {}

absl::StatusOr<Batch> ClientTail::Apply(const Batch& batch) {
  const absl::Span<const int64_t> shape = batch.shape();
  if (batch.dtype() != v1::DTYPE_UINT8 || batch.layout() != v1::LAYOUT_HWC ||
      !std::equal(shape.begin(), shape.end(), input_shape_.begin(), input_shape_.end()) ||
      batch.size_bytes() != pipeline_.input_shape().bytes() * input_shape_[0]) {
    return absl::InvalidArgumentError(
        absl::StrCat("tail: batch ", batch.batch_index(), " is not the uint8 HWC batch [",
                     absl::StrJoin(input_shape_, ", "), "] the client's tail was compiled for"));
  }
  std::shared_ptr<v1::BatchMessage> out = pool_->Acquire();
  *out->mutable_header() = batch.header();
  v1::BatchHeader* header = out->mutable_header();
  header->set_dtype(pipeline_.output_dtype());
  header->set_layout(pipeline_.output_layout());
  header->clear_shape();
  for (int64_t dim : batch_shape_) header->add_shape(dim);
  std::string* data = out->mutable_data();
  data->resize(batch_bytes_);  // a pooled message keeps its capacity
  const size_t in_bytes = pipeline_.input_shape().bytes();
  const size_t out_bytes = pipeline_.output_bytes_per_sample();
  auto* slot = reinterpret_cast<uint8_t*>(data->data());
  // Sample by sample from the received chunks: a sample spanning chunks is copied into a
  // cache-sized scratch buffer, instead of gathering the whole batch into memory first.
  PayloadCursor cursor(batch.payload());
  absl::MutexLock lock(&mu_);
  for (int64_t i = 0; i < input_shape_[0]; ++i, slot += out_bytes) {
    CounterRng unused(0);  // to_float and normalize draw nothing
    const ImageView image{const_cast<uint8_t*>(cursor.Next(in_bytes, scratch_.data())),
                          pipeline_.input_shape()};
    RETURN_IF_ERROR(pipeline_.Run(image, &unused, &workspace_, slot));
  }
  MoveFieldColumns(batch, header, data);
  return Batch(std::move(out));
}

BatchTailFactory ClientTailFactory() {
  return [](const v1::PipelineSpec& tail, absl::Span<const int64_t> worker_batch_shape)
             -> absl::StatusOr<std::unique_ptr<BatchTail>> {
    ASSIGN_OR_RETURN(std::unique_ptr<ClientTail> created,
                     ClientTail::Create(tail, worker_batch_shape));
    return std::unique_ptr<BatchTail>(std::move(created));
  };
}

}  // namespace stoker
