#include "augment/kernels/jpeg_restart_window.h"

#include <algorithm>
#include <limits>

#include "augment/kernels/decode.h"

namespace stoker {
namespace {

constexpr uint8_t kSof0 = 0xC0;  // Baseline sequential, Huffman.
constexpr uint8_t kSof1 = 0xC1;  // Extended sequential, Huffman.
constexpr uint8_t kDht = 0xC4;
constexpr uint8_t kDac = 0xCC;
constexpr uint8_t kRst0 = 0xD0;
constexpr uint8_t kEoi = 0xD9;
constexpr uint8_t kSos = 0xDA;
constexpr uint8_t kDri = 0xDD;

uint32_t Be16(const uint8_t* p) { return uint32_t{p[0]} << 8 | p[1]; }

uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// What the headers say about the frame, from SOI to the first scan's entropy-coded data.
struct Frame {
  size_t size_field = 0;  // Offset in the cut's headers of the frame's height, then width.
  uint32_t height = 0, width = 0;
  uint32_t mcu_height = 0, mcu_width = 0;   // In pixels of the full-scale image.
  uint32_t max_v_samp = 1, max_h_samp = 1;  // 1 for a single component.
  uint32_t restart_interval = 0;            // MCUs; 0 without DRI.
  size_t scan_data = 0;                     // Offset of the scan's first entropy-coded byte.
};

// Reads the frame header's sampling factors (the segment after its length field).
bool ReadFrameHeader(const uint8_t* segment, uint32_t length, Frame* frame) {
  const uint32_t components = segment[7];
  if (length != 8 + 3 * components || components == 0 || segment[2] != 8) return false;
  frame->height = Be16(segment + 3);
  frame->width = Be16(segment + 5);
  if (frame->height == 0 || frame->width == 0) return false;  // DNL: height after the scan.
  for (uint32_t c = 0; c < components; ++c) {
    const uint8_t factors = segment[8 + 3 * c + 1];
    frame->max_h_samp = std::max<uint32_t>(frame->max_h_samp, factors >> 4);
    frame->max_v_samp = std::max<uint32_t>(frame->max_v_samp, factors & 0x0F);
  }
  if (components == 1) frame->max_h_samp = frame->max_v_samp = 1;  // An MCU is one block.
  if (frame->max_h_samp > 4 || frame->max_v_samp > 4) return false;
  frame->mcu_width = 8 * frame->max_h_samp;
  frame->mcu_height = 8 * frame->max_v_samp;
  return true;
}

// Application segments other than JFIF's APP0 and Adobe's APP14 (which tell libjpeg the color
// space), and comments: an EXIF block with its thumbnail need not be copied into every cut.
bool PixelsIgnore(uint8_t marker) {
  return (marker > 0xE0 && marker < 0xEE) || marker == 0xEF || marker == 0xFE;
}

// Walks the marker segments up to the first scan, copying those the decode reads into
// *headers (SOI first). False for anything but one sequential Huffman frame whose first scan
// holds all its components.
bool ReadFrame(absl::Span<const uint8_t> jpeg, Frame* frame, std::vector<uint8_t>* headers) {
  const uint8_t* bytes = jpeg.data();
  const size_t size = jpeg.size();
  if (size < 4 || bytes[0] != 0xFF || bytes[1] != 0xD8) return false;
  size_t pos = 2;
  uint32_t frame_components = 0;
  headers->assign(bytes, bytes + 2);
  while (true) {
    if (pos >= size || bytes[pos] != 0xFF) return false;
    while (pos < size && bytes[pos] == 0xFF) ++pos;  // Fill bytes.
    if (pos + 3 > size) return false;
    const uint8_t marker = bytes[pos];
    const uint32_t length = Be16(bytes + pos + 1);
    const uint8_t* segment = bytes + pos + 1;  // Starts with the length field.
    if (length < 2 || pos + 1 + length > size) return false;
    if (marker == kSof0 || marker == kSof1) {
      if (frame->mcu_width != 0 || !ReadFrameHeader(segment, length, frame)) return false;
      frame->size_field = headers->size() + 2 + 3;  // After FF, the marker and the length.
      frame_components = segment[7];
    } else if (marker >= 0xC0 && marker <= 0xCF && marker != kDht && marker != kDac) {
      return false;  // Progressive, lossless, hierarchical or arithmetic-coded frames.
    } else if (marker == kDri) {
      if (length != 4) return false;
      frame->restart_interval = Be16(segment + 2);
    } else if (marker == kSos) {
      if (frame->mcu_width == 0 || segment[2] != frame_components) return false;
      frame->scan_data = pos + 1 + length;
      headers->insert(headers->end(), {0xFF, marker});
      headers->insert(headers->end(), segment, segment + length);
      return true;
    } else if ((marker >= kRst0 && marker <= kEoi) || marker == 0x01) {
      return false;  // Standalone markers have no place before the scan.
    }
    if (!PixelsIgnore(marker)) {
      headers->insert(headers->end(), {0xFF, marker});
      headers->insert(headers->end(), segment, segment + length);
    }
    pos += 1 + length;
  }
}

// Finds where intervals 0..last end, checking their restart markers' sequence. False unless
// all of them are found and an EOI ends the file.
bool FindIntervals(absl::Span<const uint8_t> jpeg, size_t scan_data, uint32_t last,
                   RestartCut* cut) {
  const uint8_t* bytes = jpeg.data();
  const uint8_t* end = bytes + jpeg.size();
  cut->interval_end.assign(size_t{last} + 1, 0);
  uint32_t interval = 0;
  const uint8_t* p = bytes + scan_data;
  while (true) {
    p = NextJpegMarker(p, end);
    if (p == nullptr) return false;
    const uint8_t next = p[1];
    if (next == 0xFF) {  // A fill byte before a marker.
      ++p;
      continue;
    }
    const bool restart = next >= kRst0 && next < kRst0 + 8;
    if (!restart && next != kEoi) return false;
    if (restart && uint32_t{next} - kRst0 != interval % 8) return false;
    cut->interval_end[interval] = static_cast<uint32_t>(p - bytes);
    if (interval == last) break;
    if (!restart) return false;  // The scan ended before the window's last interval.
    p += 2;
    ++interval;
  }
  // An intact file ends with EOI (trailing bytes after it are allowed); a truncated one is left
  // to the whole decode, which refuses it.
  return HasEoi(absl::MakeConstSpan(p, end));
}

}  // namespace

bool HasEoi(absl::Span<const uint8_t> bytes) {
  for (size_t n = bytes.size(); n >= 2; --n) {
    if (bytes[n - 1] == kEoi && bytes[n - 2] == 0xFF) return true;
  }
  return false;
}

bool CutToRestartIntervals(absl::Span<const uint8_t> jpeg, const PixelRect& region,
                           uint32_t denominator, RestartCut* cut) {
  Frame frame;
  if (jpeg.size() > std::numeric_limits<uint32_t>::max() || !ReadFrame(jpeg, &frame, &cut->jpeg)) {
    return false;
  }
  const uint32_t mcus_per_row = CeilDiv(frame.width, frame.mcu_width);
  const uint32_t mcu_rows = CeilDiv(frame.height, frame.mcu_height);
  const uint32_t interval = frame.restart_interval;
  if (interval == 0 || mcus_per_row % interval != 0) return false;
  const uint32_t groups = mcus_per_row / interval;  // Intervals in an MCU row.

  // The window and its margins, in pixels at the decoded scale, then in whole intervals and
  // MCU rows. An MCU is mcu_width / denominator pixels wide there.
  const uint32_t group_width = interval * frame.mcu_width / denominator;
  const uint32_t row_height = frame.mcu_height / denominator;
  const uint32_t margin_x = kMarginChromaSamples * frame.max_h_samp;
  const uint32_t margin_y = kMarginChromaSamples * frame.max_v_samp;
  const uint32_t first_group = (region.left > margin_x ? region.left - margin_x : 0) / group_width;
  const uint32_t end_group =
      std::min(groups, CeilDiv(region.left + region.width + margin_x, group_width));
  const uint32_t first_row = (region.top > margin_y ? region.top - margin_y : 0) / row_height;
  const uint32_t end_row =
      std::min(mcu_rows, CeilDiv(region.top + region.height + margin_y, row_height));
  if (first_row == 0 && first_group == 0 && end_group == groups) return false;

  const uint32_t last = (end_row - 1) * groups + end_group - 1;
  // Each interval before `last` ends in a two-byte marker: a header claiming more intervals than
  // the bytes can hold is refused before any scratch is sized by it.
  if (last > (jpeg.size() - frame.scan_data) / 2) return false;
  if (!FindIntervals(jpeg, frame.scan_data, last, cut)) return false;

  // The headers ReadFrame copied, with the sub-image's size in full-scale pixels.
  const uint32_t group_pixels = interval * frame.mcu_width;
  const uint32_t sub_width =
      std::min(frame.width, end_group * group_pixels) - first_group * group_pixels;
  const uint32_t sub_height =
      std::min(frame.height, end_row * frame.mcu_height) - first_row * frame.mcu_height;
  uint8_t* size_field = cut->jpeg.data() + frame.size_field;
  size_field[0] = static_cast<uint8_t>(sub_height >> 8);
  size_field[1] = static_cast<uint8_t>(sub_height);
  size_field[2] = static_cast<uint8_t>(sub_width >> 8);
  size_field[3] = static_cast<uint8_t>(sub_width);
  // The intervals, row by row, each ended by the sub-image's next restart marker or the EOI.
  uint32_t written = 0;
  const uint32_t total = (end_row - first_row) * (end_group - first_group);
  for (uint32_t row = first_row; row < end_row; ++row) {
    for (uint32_t group = first_group; group < end_group; ++group) {
      const uint32_t index = row * groups + group;
      const uint32_t begin =
          index == 0 ? static_cast<uint32_t>(frame.scan_data) : cut->interval_end[index - 1] + 2;
      cut->jpeg.insert(cut->jpeg.end(), jpeg.begin() + begin,
                       jpeg.begin() + cut->interval_end[index]);
      ++written;
      const uint8_t marker = written == total ? kEoi : kRst0 + (written - 1) % 8;
      cut->jpeg.insert(cut->jpeg.end(), {0xFF, marker});
    }
  }
  cut->top = first_row * row_height;
  cut->left = first_group * group_width;
  return true;
}

}  // namespace stoker
