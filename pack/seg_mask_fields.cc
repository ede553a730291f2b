#include "pack/seg_mask_fields.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "augment/kernels/decode.h"
#include "augment/kernels/decode_png_webp.h"
#include "common/status_macros.h"
#include "common/target_fields.h"
#include "data/storage.h"
#include "data/storage_backend.h"
#include "image/image.h"

namespace stoker {
namespace {

// INVALID_ARGUMENT "FILE: WHY": a label map stops the run (a worker would drop every sample).
absl::Status BadLabelMap(const std::string& file, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", why));
}

}  // namespace

std::string SegMaskSidecar(const std::string& image_path) {
  return std::filesystem::path(image_path).replace_extension(".seg.png").string();
}

std::vector<std::string> SegMaskFields::names() const { return {std::string(kSemanticMaskField)}; }

absl::Status SegMaskFields::Read(const Storage& storage, size_t index, const PackInput& input,
                                 RecordFields* fields, SkippedInput* skip) const {
  const std::string sidecar = SegMaskSidecar(input.path);
  absl::StatusOr<std::string> read = storage.ReadAll(sidecar);
  if (absl::IsNotFound(read.status())) {
    *skip = SkippedInput{input.path, "missing_seg_mask", absl::StrCat("no label map ", sidecar)};
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(read.status());  // UNAVAILABLE: the run stops, a rerun resumes.
  const absl::Span<const uint8_t> png(reinterpret_cast<const uint8_t*>(read->data()), read->size());
  absl::StatusOr<EncodedFormat> format = SniffFormat(png);
  if (!format.ok() || *format != EncodedFormat::kPng) {
    return BadLabelMap(sidecar, "not a PNG (label maps are stored losslessly, as PNG)");
  }
  absl::StatusOr<EncodedHeader> header = ReadNonJpegHeader(png, EncodedFormat::kPng);
  if (!header.ok()) return BadLabelMap(sidecar, header.status().message());
  // Decoded once here, so that a bit depth or colour type a worker refuses stops the run.
  const ImageShape shape{header->height, header->width, 1, PixelType::kUint8};
  if (shape.bytes() > kMaxSampleMaskBytes) {
    return BadLabelMap(
        sidecar, absl::StrCat("is ", header->width, "x", header->height, ", over the bound of ",
                              kMaxSampleMaskBytes, " bytes"));
  }
  std::vector<uint8_t> labels(shape.bytes());
  RETURN_IF_ERROR(PrefixStatus(absl::StrCat(sidecar, ": "),
                               DecodePngLabels(png, ImageView{labels.data(), shape})));
  sizes_[index].store(uint64_t{header->height} << 32 | header->width);
  *fields = {{std::string(kSemanticMaskField), *std::move(read)}};
  return absl::OkStatus();
}

absl::Status SegMaskFields::CheckStoredImage(size_t index, const PackInput& input,
                                             absl::Span<const uint8_t> image, InputChecker* checker,
                                             SkippedInput* skip) const {
  absl::StatusOr<EncodedHeader> header = checker->ReadHeader(image);
  if (!header.ok()) {
    *skip = SkippedInput{input.path, "decode_error", std::string(header.status().message())};
    return absl::OkStatus();
  }
  const uint64_t size = sizes_[index].load();
  const uint32_t height = static_cast<uint32_t>(size >> 32), width = static_cast<uint32_t>(size);
  if (header->height != height || header->width != width) {
    return BadLabelMap(SegMaskSidecar(input.path),
                       absl::StrCat("is ", width, "x", height, ", its image ", input.path, " is ",
                                    header->width, "x", header->height));
  }
  return absl::OkStatus();
}

}  // namespace stoker
