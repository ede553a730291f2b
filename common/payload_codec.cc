#include "common/payload_codec.h"

#include <lz4frame.h>
#include <zstd.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace stoker {
namespace {

constexpr absl::string_view kNames = "none, lz4, zstd, zstd:LEVEL";

struct ZstdCCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct ZstdDCtxFree {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};
struct Lz4CCtxFree {
  void operator()(LZ4F_cctx* c) const { LZ4F_freeCompressionContext(c); }
};
struct Lz4DCtxFree {
  void operator()(LZ4F_dctx* c) const { LZ4F_freeDecompressionContext(c); }
};

// One context of each kind per thread, made on first use and kept (no allocation per batch).
ZSTD_CCtx* ThreadZstdCCtx() {
  thread_local std::unique_ptr<ZSTD_CCtx, ZstdCCtxFree> ctx(ZSTD_createCCtx());
  return ctx.get();
}
ZSTD_DCtx* ThreadZstdDCtx() {
  thread_local std::unique_ptr<ZSTD_DCtx, ZstdDCtxFree> ctx(ZSTD_createDCtx());
  return ctx.get();
}
LZ4F_cctx* ThreadLz4CCtx() {
  thread_local std::unique_ptr<LZ4F_cctx, Lz4CCtxFree> ctx([] {
    LZ4F_cctx* c = nullptr;
    return LZ4F_isError(LZ4F_createCompressionContext(&c, LZ4F_VERSION)) ? nullptr : c;
  }());
  return ctx.get();
}
LZ4F_dctx* NewLz4DCtx() {
  LZ4F_dctx* c = nullptr;
  return LZ4F_isError(LZ4F_createDecompressionContext(&c, LZ4F_VERSION)) ? nullptr : c;
}
std::unique_ptr<LZ4F_dctx, Lz4DCtxFree>& ThreadLz4DCtx() {
  thread_local std::unique_ptr<LZ4F_dctx, Lz4DCtxFree> ctx(NewLz4DCtx());
  return ctx;
}

LZ4F_preferences_t Lz4Preferences(size_t content_size) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  prefs.frameInfo.contentSize = content_size;
  prefs.compressionLevel = 0;  // LZ4's fast mode
  return prefs;
}

absl::Status CompressLz4(absl::Span<const uint8_t> raw, PayloadBuffer* out) {
  LZ4F_cctx* ctx = ThreadLz4CCtx();
  if (ctx == nullptr) return absl::InternalError("cannot create an LZ4 compression context");
  const LZ4F_preferences_t prefs = Lz4Preferences(raw.size());
  out->Reserve(LZ4F_compressFrameBound(raw.size(), &prefs));
  uint8_t* const dst = out->data();
  const size_t capacity = out->capacity();
  size_t written = LZ4F_compressBegin(ctx, dst, capacity, &prefs);
  if (!LZ4F_isError(written)) {
    const size_t body = LZ4F_compressUpdate(ctx, dst + written, capacity - written, raw.data(),
                                            raw.size(), nullptr);
    written = LZ4F_isError(body) ? body : written + body;
  }
  if (!LZ4F_isError(written)) {
    const size_t end = LZ4F_compressEnd(ctx, dst + written, capacity - written, nullptr);
    written = LZ4F_isError(end) ? end : written + end;
  }
  if (LZ4F_isError(written)) {
    return absl::InternalError(absl::StrCat("lz4 compression: ", LZ4F_getErrorName(written)));
  }
  out->set_size(written);
  return absl::OkStatus();
}

absl::Status CompressZstd(int level, absl::Span<const uint8_t> raw, PayloadBuffer* out) {
  ZSTD_CCtx* ctx = ThreadZstdCCtx();
  if (ctx == nullptr) return absl::InternalError("cannot create a zstd compression context");
  ZSTD_CCtx_reset(ctx, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, level == 0 ? kDefaultZstdLevel : level);
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_checksumFlag, 1);
  out->Reserve(ZSTD_compressBound(raw.size()));
  const size_t written = ZSTD_compress2(ctx, out->data(), out->capacity(), raw.data(), raw.size());
  if (ZSTD_isError(written)) {
    return absl::InternalError(absl::StrCat("zstd compression: ", ZSTD_getErrorName(written)));
  }
  out->set_size(written);
  return absl::OkStatus();
}

absl::Status Corrupt(absl::string_view codec, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("corrupt ", codec, " payload: ", what));
}

absl::Status DecompressLz4Frame(LZ4F_dctx* ctx, absl::Span<const uint8_t> encoded,
                                absl::Span<uint8_t> out) {
  LZ4F_resetDecompressionContext(ctx);
  LZ4F_frameInfo_t info;
  size_t consumed = encoded.size();
  size_t hint = LZ4F_getFrameInfo(ctx, &info, encoded.data(), &consumed);
  if (LZ4F_isError(hint)) return Corrupt("lz4", LZ4F_getErrorName(hint));
  if (info.contentSize != out.size()) {
    return Corrupt("lz4", absl::StrCat("the frame holds ", info.contentSize,
                                       " bytes, the header announced ", out.size()));
  }
  size_t in_pos = consumed;
  size_t out_pos = 0;
  while (hint != 0) {
    size_t in_size = encoded.size() - in_pos;
    size_t out_size = out.size() - out_pos;
    if (in_size == 0) return Corrupt("lz4", "truncated frame");
    hint = LZ4F_decompress(ctx, out.data() + out_pos, &out_size, encoded.data() + in_pos, &in_size,
                           nullptr);
    if (LZ4F_isError(hint)) return Corrupt("lz4", LZ4F_getErrorName(hint));
    if (in_size == 0 && out_size == 0) return Corrupt("lz4", "the frame does not progress");
    in_pos += in_size;
    out_pos += out_size;
  }
  if (in_pos != encoded.size()) return Corrupt("lz4", "bytes after the frame");
  if (out_pos != out.size()) return Corrupt("lz4", "short frame");
  return absl::OkStatus();
}

absl::Status DecompressLz4(absl::Span<const uint8_t> encoded, absl::Span<uint8_t> out) {
  std::unique_ptr<LZ4F_dctx, Lz4DCtxFree>& ctx = ThreadLz4DCtx();
  if (ctx == nullptr) return absl::InternalError("cannot create an LZ4 decompression context");
  absl::Status status = DecompressLz4Frame(ctx.get(), encoded, out);
  // A decode that stopped mid-frame leaves state LZ4F_resetDecompressionContext does not clear
  // (liblz4 1.9.4 keeps the frame's remaining size, and an empty frame declares none to
  // overwrite it): the next frame on this thread gets a fresh context (fuzz_payload_frame).
  if (!status.ok()) ctx.reset(NewLz4DCtx());
  return status;
}

absl::Status DecompressZstd(absl::Span<const uint8_t> encoded, absl::Span<uint8_t> out) {
  ZSTD_DCtx* ctx = ThreadZstdDCtx();
  if (ctx == nullptr) return absl::InternalError("cannot create a zstd decompression context");
  const unsigned long long content = ZSTD_getFrameContentSize(encoded.data(), encoded.size());
  if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN) {
    return Corrupt("zstd", "no frame header with the content size");
  }
  if (content != out.size()) {
    return Corrupt("zstd", absl::StrCat("the frame holds ", content,
                                        " bytes, the header announced ", out.size()));
  }
  const size_t frame = ZSTD_findFrameCompressedSize(encoded.data(), encoded.size());
  if (ZSTD_isError(frame)) return Corrupt("zstd", ZSTD_getErrorName(frame));
  if (frame != encoded.size()) return Corrupt("zstd", "bytes after the frame");
  const size_t written =
      ZSTD_decompressDCtx(ctx, out.data(), out.size(), encoded.data(), encoded.size());
  if (ZSTD_isError(written)) return Corrupt("zstd", ZSTD_getErrorName(written));
  if (written != out.size()) return Corrupt("zstd", "short frame");
  return absl::OkStatus();
}

}  // namespace

bool IsRaw(v1::Compression codec) {
  return codec == v1::COMPRESSION_NONE || codec == v1::COMPRESSION_UNSPECIFIED;
}

std::string CodecName(v1::Compression codec) {
  switch (codec) {
    case v1::COMPRESSION_UNSPECIFIED:
    case v1::COMPRESSION_NONE:
      return "none";
    case v1::COMPRESSION_LZ4:
      return "lz4";
    case v1::COMPRESSION_ZSTD:
      return "zstd";
    default:
      return absl::StrCat("unknown(", static_cast<int>(codec), ")");
  }
}

absl::StatusOr<v1::CompressionChoice> ParseCompressionChoice(absl::string_view text,
                                                             absl::string_view field) {
  v1::CompressionChoice choice;
  const size_t colon = text.find(':');
  const absl::string_view name = text.substr(0, colon);
  if (name == "none" && colon == absl::string_view::npos) {
    choice.set_codec(v1::COMPRESSION_NONE);
  } else if (name == "lz4" && colon == absl::string_view::npos) {
    choice.set_codec(v1::COMPRESSION_LZ4);
  } else if (name == "zstd") {
    choice.set_codec(v1::COMPRESSION_ZSTD);
    int level = 0;
    if (colon != absl::string_view::npos &&
        (!absl::SimpleAtoi(text.substr(colon + 1), &level) || level == 0)) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": bad zstd level in '", text,
                                                     "' (want ", kMinZstdLevel, "..", kMaxZstdLevel,
                                                     ", not 0)"));
    }
    choice.set_level(level);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": unknown compression '", text, "' (want one of ", kNames, ")"));
  }
  if (absl::Status valid = ValidateCompressionChoice(choice, field); !valid.ok()) return valid;
  return choice;
}

std::string CompressionChoiceName(const v1::CompressionChoice& choice) {
  if (choice.codec() == v1::COMPRESSION_ZSTD && choice.level() != 0) {
    return absl::StrCat("zstd:", choice.level());
  }
  return CodecName(choice.codec());
}

absl::Status ValidateCompressionChoice(const v1::CompressionChoice& choice,
                                       absl::string_view field) {
  switch (choice.codec()) {
    case v1::COMPRESSION_UNSPECIFIED:
    case v1::COMPRESSION_NONE:
    case v1::COMPRESSION_LZ4:
      if (choice.level() != 0) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".level: ", CodecName(choice.codec()),
                                                       " takes no level, got ", choice.level()));
      }
      return absl::OkStatus();
    case v1::COMPRESSION_ZSTD:
      if (choice.level() < kMinZstdLevel || choice.level() > kMaxZstdLevel) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".level: zstd level ", choice.level(),
                                                       " is outside ", kMinZstdLevel, "..",
                                                       kMaxZstdLevel));
      }
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrCat(field, ".codec: unknown compression codec ",
                                                     static_cast<int>(choice.codec())));
  }
}

void PayloadBuffer::Reserve(size_t n) {
  if (n <= capacity_) return;
  bytes_.reset(new uint8_t[n]);  // default-initialized: no zero fill
  capacity_ = n;
  size_ = 0;
}

absl::Status CompressPayload(const v1::CompressionChoice& choice, absl::Span<const uint8_t> raw,
                             PayloadBuffer* out) {
  switch (choice.codec()) {
    case v1::COMPRESSION_LZ4:
      return CompressLz4(raw, out);
    case v1::COMPRESSION_ZSTD:
      return CompressZstd(choice.level(), raw, out);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("cannot compress with ", CodecName(choice.codec())));
  }
}

absl::Status DecompressPayload(v1::Compression codec, absl::Span<const uint8_t> encoded,
                               absl::Span<uint8_t> out) {
  switch (codec) {
    case v1::COMPRESSION_LZ4:
      return DecompressLz4(encoded, out);
    case v1::COMPRESSION_ZSTD:
      return DecompressZstd(encoded, out);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("compression: cannot decompress ", CodecName(codec)));
  }
}

}  // namespace stoker
