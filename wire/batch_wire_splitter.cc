#include "wire/batch_wire_splitter.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

using Bytes = absl::Span<const uint8_t>;

constexpr uint64_t kDataField = 2;  // BatchMessage.data
constexpr uint64_t kMaxFieldNumber = (uint64_t{1} << 29) - 1;
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;
constexpr int kMaxVarintBytes = 10;
constexpr size_t kMaxTagBytes = 5;

absl::Status Malformed(uint64_t offset, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("batch message: ", what, " at byte ", offset));
}

// Reads forward through the concatenation of the slices. Thread-compatible.
class WireCursor {
 public:
  explicit WireCursor(absl::Span<const Bytes> slices) : slices_(slices) {
    for (const Bytes& slice : slices) remaining_ += slice.size();
    SkipExhausted();
  }

  bool at_end() const { return remaining_ == 0; }
  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return remaining_; }

  // REQUIRES: !at_end().
  uint8_t ReadByte() {
    const uint8_t byte = slices_[slice_][pos_];
    Advance(1);
    return byte;
  }

  // Consumes the next n bytes, appending them to *copy (when not null) and their views to *views
  // (when not null). REQUIRES: n <= remaining().
  void Take(uint64_t n, std::string* copy, std::vector<Bytes>* views) {
    while (n > 0) {
      const Bytes& slice = slices_[slice_];
      const size_t step = std::min<uint64_t>(n, slice.size() - pos_);
      const Bytes piece = slice.subspan(pos_, step);
      if (copy != nullptr) copy->append(reinterpret_cast<const char*>(piece.data()), step);
      if (views != nullptr) views->push_back(piece);
      Advance(step);
      n -= step;
    }
  }

 private:
  void Advance(size_t n) {
    pos_ += n;
    offset_ += n;
    remaining_ -= n;
    SkipExhausted();
  }
  void SkipExhausted() {
    while (slice_ < slices_.size() && pos_ == slices_[slice_].size()) {
      ++slice_;
      pos_ = 0;
    }
  }

  const absl::Span<const Bytes> slices_;
  size_t slice_ = 0;
  size_t pos_ = 0;
  uint64_t offset_ = 0;
  uint64_t remaining_ = 0;
};

// Reads a varint (`what` names it in errors), appending its bytes to *echo when not null.
absl::Status ReadVarint(WireCursor& in, absl::string_view what, uint64_t* value,
                        std::string* echo) {
  const uint64_t start = in.offset();
  *value = 0;
  for (int i = 0; i < kMaxVarintBytes; ++i) {
    if (in.at_end()) return Malformed(start, absl::StrCat("truncated ", what));
    const uint8_t byte = in.ReadByte();
    if (echo != nullptr) echo->push_back(static_cast<char>(byte));
    *value |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
    if ((byte & 0x80) == 0) return absl::OkStatus();
  }
  return Malformed(start, absl::StrCat(what, " longer than ", kMaxVarintBytes, " bytes"));
}

// Consumes `n` bytes of field `field` into *copy / *views; DATA_LOSS when fewer remain.
absl::Status TakeField(WireCursor& in, uint64_t field, uint64_t field_offset, uint64_t n,
                       std::string* copy, std::vector<Bytes>* views) {
  if (n > in.remaining()) {
    return Malformed(field_offset, absl::StrCat("field ", field, " truncated (", n,
                                                " bytes announced, ", in.remaining(), " left)"));
  }
  in.Take(n, copy, views);
  return absl::OkStatus();
}

// Copies the value of a field other than `data` to *out, as it is on the wire.
absl::Status CopyValue(WireCursor& in, uint64_t field, int wire_type, uint64_t field_offset,
                       std::string* out) {
  uint64_t value = 0;
  switch (wire_type) {
    case kVarint:
      return ReadVarint(in, absl::StrCat("field ", field, " varint"), &value, out);
    case kFixed64:
      return TakeField(in, field, field_offset, 8, out, nullptr);
    case kFixed32:
      return TakeField(in, field, field_offset, 4, out, nullptr);
    case kLengthDelimited:
      RETURN_IF_ERROR(ReadVarint(in, absl::StrCat("field ", field, " length"), &value, out));
      return TakeField(in, field, field_offset, value, out, nullptr);
    default:
      return Malformed(field_offset,
                       absl::StrCat("field ", field, " has unsupported wire type ", wire_type));
  }
}

}  // namespace

absl::StatusOr<BatchWireParts> SplitBatchWire(absl::Span<const Bytes> slices) {
  BatchWireParts parts;
  WireCursor in(slices);
  std::string tag_bytes;
  while (!in.at_end()) {
    const uint64_t field_offset = in.offset();
    uint64_t tag = 0;
    tag_bytes.clear();
    RETURN_IF_ERROR(ReadVarint(in, "tag", &tag, &tag_bytes));
    const uint64_t field = tag >> 3;
    const int wire_type = static_cast<int>(tag & 7);
    if (field == 0) return Malformed(field_offset, "field number 0");
    // Protobuf reads a tag as 32 bits: a longer one would be another field to it (found by
    // fuzz_batch_wire: field 2^29 + 2 reads as `data`).
    if (field > kMaxFieldNumber) return Malformed(field_offset, "field number over 2^29 - 1");
    // Nor does protobuf read a tag of more than 5 bytes (an overlong encoding of a small one):
    // it refuses the message, so a `data` tag so written must not reach the payload here.
    if (tag_bytes.size() > kMaxTagBytes) return Malformed(field_offset, "tag longer than 5 bytes");
    if (field != kDataField) {
      parts.header_bytes += tag_bytes;
      RETURN_IF_ERROR(CopyValue(in, field, wire_type, field_offset, &parts.header_bytes));
      continue;
    }
    if (wire_type != kLengthDelimited) {
      return Malformed(field_offset, absl::StrCat("field 2 (data) has wire type ", wire_type,
                                                  ", not length-delimited"));
    }
    uint64_t length = 0;
    RETURN_IF_ERROR(ReadVarint(in, "field 2 length", &length, nullptr));
    parts.payload.clear();  // the last occurrence wins, as in protobuf
    RETURN_IF_ERROR(TakeField(in, kDataField, field_offset, length, nullptr, &parts.payload));
  }
  return parts;
}

}  // namespace stoker
