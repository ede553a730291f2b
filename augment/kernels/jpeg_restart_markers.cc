#include "augment/kernels/jpeg_restart_markers.h"

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

#include "absl/strings/str_cat.h"

namespace stoker {
namespace {

// More components than a worker decodes (gray, YCbCr, CMYK/YCCK); refused before their
// coefficients are held.
constexpr int kMaxComponents = 4;
// The output buffer's first size; it doubles as needed.
constexpr size_t kFirstOutputBytes = size_t{64} << 10;

// The libjpeg objects of one rewrite. Value-initialized, so jpeg_destroy_* are safe on objects
// never created; trivially destructible, since libjpeg's errors longjmp over it.
struct RewriteSession {
  jpeg_decompress_struct src;
  jpeg_compress_struct dst;
  jpeg_error_mgr errors;
  jpeg_progress_mgr progress;
  std::jmp_buf jump;
  int max_scans;
  bool premature_end;
  char message[JMSG_LENGTH_MAX];
};

// A destination writing into a std::vector owned outside the setjmp frame, rather than
// jpeg_mem_dest: after an error mid-write, jpeg_mem_dest's caller pointer may name a buffer
// libjpeg already freed on growing, so nothing could be freed safely.
struct VectorDestination {
  jpeg_destination_mgr manager;
  std::vector<uint8_t>* out;
};

RewriteSession* SessionOf(j_common_ptr cinfo) {
  return static_cast<RewriteSession*>(cinfo->client_data);
}

[[noreturn]] void ErrorExit(j_common_ptr cinfo) {
  RewriteSession* session = SessionOf(cinfo);
  (*cinfo->err->format_message)(cinfo, session->message);
  std::longjmp(session->jump, 1);
}

// Warnings are not printed; an early end of the file is remembered (a worker refuses those).
void EmitMessage(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) SessionOf(cinfo)->premature_end = true;
}

void LimitScans(j_common_ptr cinfo) {
  RewriteSession* session = SessionOf(cinfo);
  if (cinfo->is_decompressor &&
      reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number > session->max_scans) {
    std::snprintf(session->message, sizeof(session->message), "more than %d scans",
                  session->max_scans);
    std::longjmp(session->jump, 1);
  }
}

VectorDestination* DestinationOf(j_compress_ptr cinfo) {
  return reinterpret_cast<VectorDestination*>(cinfo->dest);
}

void InitDestination(j_compress_ptr cinfo) {
  VectorDestination* dest = DestinationOf(cinfo);
  dest->out->resize(kFirstOutputBytes);
  dest->manager.next_output_byte = dest->out->data();
  dest->manager.free_in_buffer = dest->out->size();
}

boolean GrowDestination(j_compress_ptr cinfo) {
  VectorDestination* dest = DestinationOf(cinfo);
  const size_t used = dest->out->size();  // The whole buffer: libjpeg calls this when it is full.
  dest->out->resize(2 * used);
  dest->manager.next_output_byte = dest->out->data() + used;
  dest->manager.free_in_buffer = dest->out->size() - used;
  return TRUE;
}

void TermDestination(j_compress_ptr cinfo) {
  VectorDestination* dest = DestinationOf(cinfo);
  dest->out->resize(dest->out->size() - dest->manager.free_in_buffer);
}

// The markers libjpeg writes itself when asked to, which are not copied (as jpegtran does).
bool WrittenByLibjpeg(const jpeg_compress_struct& dst, const jpeg_marker_struct& marker) {
  const auto starts_with = [&marker](const char* tag, size_t length) {
    return marker.data_length >= length && std::memcmp(marker.data, tag, length) == 0;
  };
  return (dst.write_JFIF_header && marker.marker == JPEG_APP0 && starts_with("JFIF", 5)) ||
         (dst.write_Adobe_marker && marker.marker == JPEG_APP0 + 14 && starts_with("Adobe", 5));
}

// Reads the coefficients and the markers to keep; nullptr (message set) when refused.
jvirt_barray_ptr* ReadCoefficients(RewriteSession* session, absl::Span<const uint8_t> jpeg,
                                   uint64_t max_pixels) {
  j_decompress_ptr src = &session->src;
  jpeg_mem_src(src, jpeg.data(), static_cast<unsigned long>(jpeg.size()));
  for (int n = 0; n < 16; ++n) jpeg_save_markers(src, JPEG_APP0 + n, 0xFFFF);
  jpeg_save_markers(src, JPEG_COM, 0xFFFF);
  jpeg_read_header(src, TRUE);
  const uint64_t pixels = uint64_t{src->image_width} * src->image_height;
  if (pixels > max_pixels) {
    std::snprintf(
        session->message, sizeof(session->message), "%llu pixels, more than the limit of %llu",
        static_cast<unsigned long long>(pixels), static_cast<unsigned long long>(max_pixels));
    return nullptr;
  }
  if (src->num_components > kMaxComponents) {
    std::snprintf(session->message, sizeof(session->message), "%d components, more than %d",
                  src->num_components, kMaxComponents);
    return nullptr;
  }
  jvirt_barray_ptr* coefficients = jpeg_read_coefficients(src);
  if (session->premature_end) {
    std::snprintf(session->message, sizeof(session->message), "Premature end of JPEG file");
    return nullptr;
  }
  return coefficients;
}

// The rewrite proper. Only trivially destructible locals, since libjpeg's errors longjmp back
// into it. Returns false after an error (the message is in the session).
bool RunRewrite(RewriteSession* session, absl::Span<const uint8_t> jpeg, uint64_t max_pixels,
                VectorDestination* dest) {
  if (setjmp(session->jump) != 0) return false;
  jpeg_create_decompress(&session->src);  // Keeps err and client_data.
  jpeg_create_compress(&session->dst);
  session->src.progress = &session->progress;
  jvirt_barray_ptr* coefficients = ReadCoefficients(session, jpeg, max_pixels);
  if (coefficients == nullptr) return false;
  j_decompress_ptr src = &session->src;
  j_compress_ptr dst = &session->dst;
  jpeg_copy_critical_parameters(src, dst);  // Sequential (no scan script), Huffman, no restarts.
  // A JFIF APP0 only where the input had one, so that an EXIF APP1 which came first stays first.
  dst->write_JFIF_header = src->saw_JFIF_marker;
  dst->arith_code = FALSE;
  dst->optimize_coding = TRUE;
  const uint32_t mcu_width = 8 * (src->num_components == 1 ? 1 : src->max_h_samp_factor);
  dst->restart_interval =
      RestartIntervalMcus((src->image_width + mcu_width - 1) / mcu_width, mcu_width);
  dst->dest = &dest->manager;
  jpeg_write_coefficients(dst, coefficients);
  for (jpeg_saved_marker_ptr marker = src->marker_list; marker != nullptr; marker = marker->next) {
    if (WrittenByLibjpeg(*dst, *marker)) continue;
    jpeg_write_marker(dst, marker->marker, marker->data, marker->data_length);
  }
  jpeg_finish_compress(dst);
  jpeg_finish_decompress(src);
  return true;
}

}  // namespace

uint32_t RestartIntervalMcus(uint32_t mcus_per_row, uint32_t mcu_width) {
  const uint32_t widest = mcu_width == 0 ? 1 : kRestartIntervalPixels / mcu_width;
  for (uint32_t divisor = std::min(widest, mcus_per_row); divisor > 1; --divisor) {
    if (mcus_per_row % divisor == 0) return divisor;
  }
  return 1;
}

absl::StatusOr<std::vector<uint8_t>> AddJpegRestartMarkers(absl::Span<const uint8_t> jpeg,
                                                           const DecodeLimits& limits) {
  RewriteSession session{};
  session.src.err = jpeg_std_error(&session.errors);
  session.dst.err = &session.errors;
  session.errors.error_exit = ErrorExit;
  session.errors.emit_message = EmitMessage;
  session.src.client_data = &session;
  session.dst.client_data = &session;
  session.progress.progress_monitor = LimitScans;
  session.max_scans = limits.max_jpeg_scans;
  std::vector<uint8_t> out;
  VectorDestination dest{};
  dest.manager.init_destination = InitDestination;
  dest.manager.empty_output_buffer = GrowDestination;
  dest.manager.term_destination = TermDestination;
  dest.out = &out;
  const bool ok = RunRewrite(&session, jpeg, limits.max_pixels, &dest);
  jpeg_destroy_compress(&session.dst);
  jpeg_destroy_decompress(&session.src);
  if (!ok) return absl::InvalidArgumentError(absl::StrCat("jpeg: ", session.message));
  return out;
}

}  // namespace stoker
