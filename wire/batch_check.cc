#include "wire/batch_check.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace stoker {
namespace {

constexpr int kDimensions = 4;  // [N, H, W, C] or [N, C, H, W]

absl::Status Lying(absl::string_view field, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("header.", field, ": ", what));
}

// The shape: four non-negative dimensions holding exactly `tensor_bytes` bytes of the dtype.
absl::Status CheckShape(const v1::BatchHeader& header, uint64_t tensor_bytes) {
  const auto& shape = header.shape();
  // Made only for an error: the check runs for every batch received.
  auto shown = [&shape] { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); };
  if (shape.size() != kDimensions) {
    return Lying("shape",
                 absl::StrCat(shown(), " has ", shape.size(), " dimensions, not ", kDimensions));
  }
  uint64_t bytes = DTypeBytes(header.dtype());
  for (int64_t dim : shape) {
    if (dim < 0) return Lying("shape", absl::StrCat(shown(), " has a negative dimension"));
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes)) {
      return Lying("shape", absl::StrCat(shown(), " times the element size overflows 64 bits"));
    }
  }
  if (bytes != tensor_bytes) {
    return Lying("shape",
                 absl::StrCat(shown(), " of ", DTypeBytes(header.dtype()), "-byte elements is ",
                              bytes, " bytes, the payload ", tensor_bytes));
  }
  return absl::OkStatus();
}

// The field columns tile [tensor end, payload_bytes): see CheckBatchHeader.
absl::Status CheckFieldColumns(const v1::BatchHeader& header, uint64_t samples,
                               uint64_t payload_bytes) {
  if (header.fields_size() == 0) return absl::OkStatus();
  uint64_t start = header.fields(0).offsets_size() > 0 ? header.fields(0).offsets(0) : 0;
  for (int c = 0; c < header.fields_size(); ++c) {
    const v1::FieldColumn& column = header.fields(c);
    // Made only for an error: the check runs for every batch received.
    auto field = [&] { return absl::StrCat("fields[", c, "] (\"", column.name(), "\")"); };
    if (static_cast<uint64_t>(column.offsets_size()) != samples + 1) {
      return Lying(field(), absl::StrCat(column.offsets_size(), " offsets, the shape says ",
                                         samples, " samples (", samples + 1, " offsets)"));
    }
    if (column.offsets(0) != start) {
      return Lying(field(), absl::StrCat("starts at ", column.offsets(0), ", not at ", start,
                                         " where the data before it ends"));
    }
    for (uint64_t i = 0; i < samples; ++i) {
      const uint64_t begin = column.offsets(static_cast<int>(i));
      const uint64_t end = column.offsets(static_cast<int>(i + 1));
      if (end < begin) {
        return Lying(field(),
                     absl::StrCat("offsets decrease at value ", i, ": ", begin, " then ", end));
      }
      if (end > payload_bytes) {
        return Lying(field(), absl::StrCat("value ", i, " ends at ", end, ", past the payload's ",
                                           payload_bytes, " bytes"));
      }
    }
    start = column.offsets(static_cast<int>(samples));
  }
  if (start != payload_bytes) {
    return Lying(
        absl::StrCat("fields[", header.fields_size() - 1, "]"),
        absl::StrCat("the last column ends at ", start, ", the payload at ", payload_bytes));
  }
  return absl::OkStatus();
}

}  // namespace

uint64_t TensorBytes(const v1::BatchHeader& header, uint64_t payload_bytes) {
  if (header.fields_size() == 0 || header.fields(0).offsets_size() == 0) return payload_bytes;
  return header.fields(0).offsets(0);
}

size_t DTypeBytes(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_UINT8:
      return 1;
    case v1::DTYPE_FLOAT16:
    case v1::DTYPE_BFLOAT16:
      return 2;
    case v1::DTYPE_FLOAT32:
      return 4;
    default:
      return 0;
  }
}

absl::Status CheckBatchHeader(const v1::BatchHeader& header, uint64_t payload_bytes) {
  const uint64_t tensor_bytes = TensorBytes(header, payload_bytes);
  if (tensor_bytes > payload_bytes) {
    return Lying("fields[0]", absl::StrCat("starts at ", tensor_bytes, ", past the payload's ",
                                           payload_bytes, " bytes"));
  }
  if (DTypeBytes(header.dtype()) == 0) {
    return Lying("dtype", absl::StrCat("unknown element type ", static_cast<int>(header.dtype())));
  }
  if (header.layout() != v1::LAYOUT_HWC && header.layout() != v1::LAYOUT_CHW) {
    return Lying("layout", absl::StrCat("unknown layout ", static_cast<int>(header.layout())));
  }
  if (absl::Status shape = CheckShape(header, tensor_bytes); !shape.ok()) return shape;
  const uint64_t samples = static_cast<uint64_t>(header.shape(0));
  if (static_cast<uint64_t>(header.sample_indices_size()) != samples) {
    return Lying("sample_indices", absl::StrCat(header.sample_indices_size(),
                                                " indices, the shape says ", samples, " samples"));
  }
  if (static_cast<uint64_t>(header.labels_size()) != samples) {
    return Lying("labels", absl::StrCat(header.labels_size(), " labels, the shape says ", samples,
                                        " samples"));
  }
  const uint64_t soft = static_cast<uint64_t>(header.soft_labels_size());
  if (soft != 0 && (samples == 0 || soft % samples != 0)) {
    return Lying("soft_labels",
                 absl::StrCat(soft, " values are not whole rows for ", samples, " samples"));
  }
  return CheckFieldColumns(header, samples, payload_bytes);
}

}  // namespace stoker
