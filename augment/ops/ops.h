#ifndef STOKER_AUGMENT_OPS_OPS_H_
#define STOKER_AUGMENT_OPS_OPS_H_

// The built-in ops, one file each: each returns its schema, whose factory validates the proto
// and creates the Op. Used by augment/op_registry.cc only; everything else goes through the
// registry.

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "augment/image.h"
#include "augment/op_registry.h"

namespace stoker {

OpSchema ToFloatOpSchema();
OpSchema GaussianBlurOpSchema();
OpSchema RandomCropOpSchema();
OpSchema HorizontalFlipOpSchema();
OpSchema NormalizeOpSchema();

// OK when `input` has pixels of `type`; otherwise INVALID_ARGUMENT
// "requires <type> input, got <other><hint>".
inline absl::Status RequirePixelType(const ImageShape& input, PixelType type,
                                     absl::string_view hint = "") {
  if (input.type == type) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("requires ", PixelTypeName(type), " input, got ",
                                                 PixelTypeName(input.type), hint));
}

}  // namespace stoker

#endif  // STOKER_AUGMENT_OPS_OPS_H_
