#include "pack/coco_masks.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace stoker {
namespace {

// The first pixel index whose centre lies at or right of (below) `coordinate`.
int64_t FirstCentreAtOrAfter(double coordinate) {
  return static_cast<int64_t>(std::ceil(coordinate - 0.5));
}

// Characters per count: 32 bits and a sign fit in 7 groups of 5 bits.
constexpr int kMaxCountCharacters = 7;

}  // namespace

void FillPolygon(absl::Span<const double> xy, uint32_t height, uint32_t width,
                 absl::Span<uint8_t> mask) {
  const size_t points = xy.size() / 2;
  if (points < 3) return;
  double low = xy[1], high = xy[1];
  for (size_t p = 1; p < points; ++p) {
    low = std::min(low, xy[2 * p + 1]);
    high = std::max(high, xy[2 * p + 1]);
  }
  const int64_t first_row = std::max<int64_t>(0, FirstCentreAtOrAfter(low));
  const int64_t end_row = std::min<int64_t>(height, FirstCentreAtOrAfter(high));
  std::vector<double> crossings;
  for (int64_t y = first_row; y < end_row; ++y) {
    const double centre = y + 0.5;
    crossings.clear();
    for (size_t p = 0; p < points; ++p) {
      const size_t q = (p + 1) % points;
      const double xa = xy[2 * p], ya = xy[2 * p + 1], xb = xy[2 * q], yb = xy[2 * q + 1];
      // Half-open in y, so a vertex between two edges counts once and horizontal edges never.
      if ((ya <= centre && centre < yb) || (yb <= centre && centre < ya)) {
        crossings.push_back(xa + (centre - ya) * (xb - xa) / (yb - ya));
      }
    }
    std::sort(crossings.begin(), crossings.end());
    uint8_t* row = mask.data() + static_cast<size_t>(y) * width;
    for (size_t k = 0; k + 1 < crossings.size(); k += 2) {
      const int64_t begin = std::max<int64_t>(0, FirstCentreAtOrAfter(crossings[k]));
      const int64_t end = std::min<int64_t>(width, FirstCentreAtOrAfter(crossings[k + 1]));
      if (begin < end) std::fill(row + begin, row + end, uint8_t{1});
    }
  }
}

absl::StatusOr<std::vector<uint32_t>> DecodeCocoRleString(absl::string_view text) {
  std::vector<uint32_t> counts;
  size_t p = 0;
  while (p < text.size()) {
    int64_t value = 0;
    bool more = true;
    for (int k = 0; more; ++k, ++p) {
      if (p == text.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("counts: the string ends inside count ", counts.size()));
      }
      if (k == kMaxCountCharacters) {
        return absl::InvalidArgumentError(
            absl::StrCat("counts: count ", counts.size(), " runs over 32 bits"));
      }
      const int c = static_cast<unsigned char>(text[p]) - 48;
      if (c < 0 || c > 63) {
        return absl::InvalidArgumentError(
            absl::StrCat("counts: character ", p, " is outside COCO's alphabet"));
      }
      value |= static_cast<int64_t>(c & 0x1f) << (5 * k);
      more = (c & 0x20) != 0;
      if (!more && (c & 0x10) != 0) value -= int64_t{1} << (5 * (k + 1));  // Sign-extends.
    }
    if (counts.size() > 2) value += counts[counts.size() - 2];
    if (value < 0 || value > UINT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("counts: count ", counts.size(), " is ", value, ", outside 0..2^32-1"));
    }
    counts.push_back(static_cast<uint32_t>(value));
  }
  return counts;
}

std::string EncodeCocoRleString(absl::Span<const uint32_t> counts) {
  std::string text;
  for (size_t i = 0; i < counts.size(); ++i) {
    int64_t value = counts[i];
    if (i > 2) value -= counts[i - 2];
    bool more = true;
    while (more) {
      int c = static_cast<int>(value & 0x1f);
      value >>= 5;  // Arithmetic: a negative difference ends in -1.
      more = (c & 0x10) != 0 ? value != -1 : value != 0;
      if (more) c |= 0x20;
      text.push_back(static_cast<char>(c + 48));
    }
  }
  return text;
}

absl::Status CocoRleToMask(absl::Span<const uint32_t> counts, uint32_t height, uint32_t width,
                           absl::Span<uint8_t> mask) {
  const uint64_t area = uint64_t{height} * width;
  uint64_t position = 0;  // Column-major: x = position / height, y = position % height.
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] > area - position) {
      return absl::InvalidArgumentError(
          absl::StrCat("counts run past the ", height, "x", width, " mask at count ", i));
    }
    const uint8_t value = i % 2;
    for (uint64_t end = position + counts[i]; position < end; ++position) {
      mask[(position % height) * width + position / height] = value;
    }
  }
  if (position != area) {
    return absl::InvalidArgumentError(
        absl::StrCat("counts sum to ", position, ", not ", height, "x", width, " = ", area));
  }
  return absl::OkStatus();
}

std::vector<uint32_t> MaskToCocoRle(absl::Span<const uint8_t> mask, uint32_t height,
                                    uint32_t width) {
  std::vector<uint32_t> counts;
  uint8_t current = 0;
  uint32_t run = 0;
  for (uint32_t x = 0; x < width; ++x) {
    for (uint32_t y = 0; y < height; ++y) {
      const uint8_t value = mask[size_t{y} * width + x] != 0 ? 1 : 0;
      if (value != current) {
        counts.push_back(run);
        current = value;
        run = 0;
      }
      ++run;
    }
  }
  counts.push_back(run);
  return counts;
}

}  // namespace stoker
