#include "augment/kernels/decode_jpeg_region.h"

// jpeglib.h needs size_t and FILE declared first.
#include <cstddef>
#include <cstdio>
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/bad_sample.h"

namespace stoker {
namespace {

// How far the decoded span reaches past the window on each side (see the header). Sequential
// files: kMarginChromaSamples (jpeg_restart_window.h; jpeg_crop_scanline then widens the span to
// whole iMCUs). Progressive files: three iMCU columns, since their blocks may be smoothed from
// the DC values of blocks two columns away.
constexpr JDIMENSION kProgressiveMarginImcus = 3;
// TurboJPEG's TJFLAG_LIMITSCANS limit, which ImageDecoder::Decode sets.
constexpr int kTurboJpegScanLimit = 500;

}  // namespace

struct JpegSession {
  jpeg_decompress_struct cinfo;
  jpeg_error_mgr errors;
  jpeg_progress_mgr progress;
  std::jmp_buf jump;
  int first_warning = -1;  // msg_code of the first warning of this decode, -1 for none.
  char message[JMSG_LENGTH_MAX] = {};
};

namespace {

using Session = JpegSession;

Session* SessionOf(j_common_ptr cinfo) { return static_cast<Session*>(cinfo->client_data); }

[[noreturn]] void ErrorExit(j_common_ptr cinfo) {
  Session* session = SessionOf(cinfo);
  (*cinfo->err->format_message)(cinfo, session->message);
  std::longjmp(session->jump, 1);
}

// Warnings are not printed; the first one is remembered (TurboJPEG reports the first).
void EmitMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  if (cinfo->err->num_warnings++ == 0) SessionOf(cinfo)->first_warning = cinfo->err->msg_code;
}

void LimitScans(j_common_ptr cinfo) {
  auto* dinfo = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (dinfo->input_scan_number > kTurboJpegScanLimit) {
    Session* session = SessionOf(cinfo);
    std::snprintf(session->message, sizeof(session->message),
                  "Progressive JPEG image has more than %d scans", kTurboJpegScanLimit);
    std::longjmp(session->jump, 1);
  }
}

// Rows handed to one jpeg_read_scanlines call (it returns at most a row group, often fewer).
constexpr uint32_t kRowsPerRead = 16;

// One decode's parameters. Trivially destructible: RunDecode longjmps over it.
struct DecodeJob {
  const uint8_t* bytes;
  size_t size;
  J_COLOR_SPACE color_space;
  uint32_t denominator;
  PixelRect region;
  uint32_t channels;  // Of *out: 1 or 3.
  uint8_t* row;       // CMYK only: room for one row of the whole (scaled) image, 4 bytes a pixel.
  ImageBuffer* out;
  PixelRect* window;
};

// Reads the window's rows of the span, `span_width` pixels wide, into *job.out: straight into
// its rows, or for CMYK through job.row and PIL's conversion.
void ReadRows(j_decompress_ptr cinfo, const DecodeJob& job, JDIMENSION span_width) {
  const size_t stride = size_t{span_width} * job.channels;
  uint8_t* pixels = job.out->view().pixels<uint8_t>();
  JSAMPROW rows[kRowsPerRead];
  for (uint32_t y = 0; y < job.region.height;) {
    const bool cmyk = job.color_space == JCS_CMYK;
    const uint32_t wanted = cmyk ? 1 : std::min(kRowsPerRead, job.region.height - y);
    for (uint32_t k = 0; k < wanted; ++k) rows[k] = cmyk ? job.row : pixels + (y + k) * stride;
    const JDIMENSION got = jpeg_read_scanlines(cinfo, rows, wanted);
    if (got == 0) ERREXIT(cinfo, JERR_INPUT_EMPTY);
    if (cmyk) {
      InvertedCmykToRgb(job.row,
                        ImageView{pixels + y * stride,
                                  ImageShape{1, span_width, job.channels, PixelType::kUint8}});
    }
    y += got;
  }
}

// True when an EOI marker (FF D9) lies in the bytes the decoder has not read yet. The rows below
// the window are entropy-decoded only so that a file the whole decode refuses is refused here too,
// and the whole decode refuses (JWRN_JPEG_EOF) only when reading runs past the file's end. With
// an EOI ahead that cannot happen: libjpeg's entropy decoder stops reading at any marker, and its
// restart handling leaves an EOI unread, so nothing is read past it. The rest can then be left
// undecoded: same pixels, same verdict, about a tenth of the decode saved on average (windows end
// above the bottom).
bool EoiAhead(j_decompress_ptr cinfo) {
  return HasEoi(absl::MakeConstSpan(cinfo->src->next_input_byte, cinfo->src->bytes_in_buffer));
}

// The decode proper. A plain function with trivially destructible locals only, since libjpeg's
// errors longjmp back into it. Returns false after an error (the message is in the session).
bool RunDecode(Session* session, const DecodeJob& job) {
  j_decompress_ptr cinfo = &session->cinfo;
  if (setjmp(session->jump) != 0) return false;
  jpeg_mem_src(cinfo, job.bytes, static_cast<unsigned long>(job.size));
  jpeg_read_header(cinfo, TRUE);
  cinfo->out_color_space = job.color_space;
  cinfo->scale_num = 1;
  cinfo->scale_denom = job.denominator;
  jpeg_start_decompress(cinfo);

  const JDIMENSION imcu_width = static_cast<JDIMENSION>(cinfo->min_DCT_scaled_size) *
                                (cinfo->num_components == 1 ? 1 : cinfo->max_h_samp_factor);
  const JDIMENSION margin =
      cinfo->progressive_mode
          ? imcu_width * kProgressiveMarginImcus
          : kMarginChromaSamples * static_cast<JDIMENSION>(cinfo->max_h_samp_factor);
  JDIMENSION span_left = job.region.left > margin ? job.region.left - margin : 0;
  const JDIMENSION span_right =
      std::min<JDIMENSION>(cinfo->output_width, job.region.left + job.region.width + margin);
  JDIMENSION span_width = span_right - span_left;
  if (span_width < cinfo->output_width) jpeg_crop_scanline(cinfo, &span_left, &span_width);
  // Completes before libjpeg runs again, so no longjmp crosses it.
  job.out->Reshape(ImageShape{job.region.height, span_width, job.channels, PixelType::kUint8});
  *job.window = PixelRect{0, job.region.left - span_left, job.region.height, job.region.width};

  if (job.region.top > 0) jpeg_skip_scanlines(cinfo, job.region.top);
  ReadRows(cinfo, job, span_width);
  if (EoiAhead(cinfo)) {
    jpeg_abort_decompress(cinfo);
    return true;
  }
  JSAMPROW row = job.row;  // Room for a row of the span in any color space.
  // Entropy-decode the rest of the scan, so a truncated or damaged file is noticed as in a whole
  // decode: skip all but the last two iMCU rows, then read those.
  const JDIMENSION imcu_rows = static_cast<JDIMENSION>(cinfo->min_DCT_scaled_size) *
                               static_cast<JDIMENSION>(cinfo->max_v_samp_factor);
  const JDIMENSION read_from =
      cinfo->output_height > 2 * imcu_rows ? cinfo->output_height - 2 * imcu_rows : 0;
  if (cinfo->output_scanline < read_from) {
    jpeg_skip_scanlines(cinfo, read_from - cinfo->output_scanline);
  }
  while (cinfo->output_scanline < cinfo->output_height) {
    if (jpeg_read_scanlines(cinfo, &row, 1) == 0) ERREXIT(cinfo, JERR_INPUT_EMPTY);
  }
  // Like tjDecompress2, no jpeg_finish_decompress: the markers after the scan (a stray one left
  // by damaged scan data, trailing bytes) are not read, so they refuse no file here either.
  jpeg_abort_decompress(cinfo);
  return true;
}

// Sets up the session's decompressor (its errors longjmp too). Returns false on failure.
bool CreateDecompressor(Session* session) {
  session->cinfo.err = jpeg_std_error(&session->errors);
  session->errors.error_exit = ErrorExit;
  session->errors.emit_message = EmitMessage;
  session->cinfo.client_data = session;
  if (setjmp(session->jump) != 0) return false;
  jpeg_create_decompress(&session->cinfo);  // Keeps err and client_data.
  session->progress.progress_monitor = LimitScans;
  session->cinfo.progress = &session->progress;
  return true;
}

}  // namespace

JpegRegionDecoder::JpegRegionDecoder() = default;

JpegRegionDecoder::~JpegRegionDecoder() {
  if (session_ != nullptr) jpeg_destroy_decompress(&session_->cinfo);
}

absl::Status JpegRegionDecoder::Decode(absl::Span<const uint8_t> bytes, const EncodedHeader& header,
                                       const PixelRect& region, uint32_t denominator,
                                       uint32_t channels, ImageBuffer* out, PixelRect* window) {
  if (session_ == nullptr) {
    auto session = std::make_unique<Session>();
    if (!CreateDecompressor(session.get())) {
      return absl::InternalError(absl::StrCat("jpeg_create_decompress: ", session->message));
    }
    session_ = std::move(session);
  }
  session_->errors.num_warnings = 0;
  session_->first_warning = -1;
  const J_COLOR_SPACE color_space = header.cmyk     ? JCS_CMYK
                                    : channels == 3 ? JCS_EXT_RGB
                                                    : JCS_GRAYSCALE;
  row_.resize(size_t{ScaledSize(header, denominator, 1).width} * (header.cmyk ? 4 : channels));
  DecodeJob job{bytes.data(), bytes.size(), color_space, denominator, region,
                channels,     row_.data(),  out,         window};
  if (CutToRestartIntervals(bytes, region, denominator, &cut_)) {
    job.bytes = cut_.jpeg.data();
    job.size = cut_.jpeg.size();
    job.region.top -= cut_.top;
    job.region.left -= cut_.left;
  }
  if (!RunDecode(session_.get(), job)) {
    jpeg_abort_decompress(&session_->cinfo);
    return BadSampleError(BadSampleReason::kDecodeError, absl::StrCat("JPEG: ", session_->message));
  }
  if (session_->first_warning == JWRN_JPEG_EOF) {
    return BadSampleError(BadSampleReason::kDecodeError, "JPEG: Premature end of JPEG file");
  }
  return absl::OkStatus();
}

}  // namespace stoker
