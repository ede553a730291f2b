// Fuzz target: the trainer client's check of a batch's typed target columns, CheckTargetColumns
// (wire/target_check.h), over a header and a payload a hostile worker chose, the payload cut into
// slices as gRPC hands them over (so keypoints are read from gathered bytes too).
//
// Input: up to 17 chunks framed by SplitChunks (fuzz_input.h): a serialized BatchHeader, then up
// to 16 payload slices, each copied into its own heap block so that a read past one is an ASan
// report. Headers CheckBatchHeader refuses are the check's precondition and end the run.
// Invariants checked:
//   - a refusal is DATA_LOSS naming the column, "header.fields[...";
//   - an accepted batch: every typed value is a whole number of its instances (boxes of 16
//     bytes, labels of 8, masks of H × W, keypoints a u32 K in 1..64 then K × 12-byte points, or
//     empty), at most kMaxTargetInstances each, and a sample's labels, masks and keypoints as many
//     as its boxes when the batch has boxes; a semantic mask exactly H × W bytes, whatever the
//     boxes: what a trainer slices into tensors without a remainder.

#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "common/target_fields.h"
#include "stoker/v1/worker.pb.h"
#include "tests/fuzz/fuzz_input.h"
#include "wire/batch_check.h"
#include "wire/batch_payload.h"
#include "wire/target_check.h"

namespace {

constexpr size_t kMaxChunks = 17;

// The instances of one accepted value of typed column `name`, derived from the wire form alone
// (augment/targets/target_codec.h).
uint64_t TargetColumnsFuzzInstances(absl::string_view name, absl::string_view value,
                                    uint64_t pixels) {
  uint64_t unit = 0;
  if (name == stoker::kBoxesField) unit = stoker::kWireBoxBytes;
  if (name == stoker::kBoxLabelsField) unit = stoker::kWireBoxLabelBytes;
  if (name == stoker::kMasksField) unit = pixels;
  if (name == stoker::kSemanticMaskField) {
    FUZZ_CHECK(value.size() == pixels);
    return 1;
  }
  if (name == stoker::kKeypointsField) {
    if (value.empty()) return 0;
    FUZZ_CHECK(value.size() >= 4);
    uint32_t k = 0;
    std::memcpy(&k, value.data(), 4);
    FUZZ_CHECK(k >= 1 && k <= stoker::kMaxKeypointsPerInstance);
    unit = 12 * uint64_t{k};
    value.remove_prefix(4);
  }
  if (unit == 0) {
    FUZZ_CHECK(value.empty());
    return 0;
  }
  FUZZ_CHECK(value.size() % unit == 0);
  FUZZ_CHECK(value.size() / unit <= stoker::kMaxTargetInstances);
  return value.size() / unit;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::QuietProtobufLogs();
  const std::vector<absl::string_view> chunks = stoker::fuzz::SplitChunks(
      absl::string_view(reinterpret_cast<const char*>(data), size), kMaxChunks);
  if (chunks.empty()) return 0;
  stoker::v1::BatchHeader header;
  if (!header.ParseFromArray(chunks[0].data(), static_cast<int>(chunks[0].size()))) return 0;
  auto blocks = std::make_shared<std::vector<std::unique_ptr<uint8_t[]>>>();
  std::vector<stoker::BatchPayload::Chunk> slices;
  std::string whole;
  for (size_t c = 1; c < chunks.size(); ++c) {
    blocks->push_back(std::make_unique<uint8_t[]>(chunks[c].size()));
    if (!chunks[c].empty()) std::memcpy(blocks->back().get(), chunks[c].data(), chunks[c].size());
    slices.emplace_back(blocks->back().get(), chunks[c].size());
    whole.append(chunks[c].data(), chunks[c].size());
  }
  if (!stoker::CheckBatchHeader(header, whole.size()).ok()) return 0;
  const stoker::BatchPayload payload(std::move(slices), blocks, nullptr);
  const absl::Status status = stoker::CheckTargetColumns(header, payload);
  if (!status.ok()) {
    FUZZ_CHECK(status.code() == absl::StatusCode::kDataLoss);
    FUZZ_CHECK(absl::StartsWith(status.message(), "header.fields["));
    return 0;
  }
  const bool chw = header.layout() == stoker::v1::LAYOUT_CHW;
  const uint64_t pixels = static_cast<uint64_t>(header.shape(chw ? 2 : 1)) *
                          static_cast<uint64_t>(header.shape(chw ? 3 : 2));
  const stoker::v1::FieldColumn* boxes = nullptr;
  for (const stoker::v1::FieldColumn& column : header.fields()) {
    if (column.name() == stoker::kBoxesField) boxes = &column;
  }
  const auto value = [&](const stoker::v1::FieldColumn& column, int i) {
    return absl::string_view(whole).substr(column.offsets(i),
                                           column.offsets(i + 1) - column.offsets(i));
  };
  for (const stoker::v1::FieldColumn& column : header.fields()) {
    if (!stoker::IsTargetField(column.name())) continue;
    for (int i = 0; i + 1 < column.offsets_size(); ++i) {
      const uint64_t count = TargetColumnsFuzzInstances(column.name(), value(column, i), pixels);
      if (boxes != nullptr && &column != boxes && column.name() != stoker::kSemanticMaskField) {
        FUZZ_CHECK(count == value(*boxes, i).size() / stoker::kWireBoxBytes);
      }
    }
  }
  return 0;
}
