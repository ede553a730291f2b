#ifndef STOKER_PACK_CAPTION_FIELDS_H_
#define STOKER_PACK_CAPTION_FIELDS_H_

// Image-text pairs (stoker-pack --captions, --captions-file): each image's caption stored byte
// for byte as its "text" field; an image without one is skipped (reason "missing_caption").
// The caption is the table's (pack/caption_table.h) when there is one, else the image's sidecar,
// the file of the same name with extension .txt ("cat/001.jpg" → "cat/001.txt").
//
// Thread-safe; immutable once made.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pack/caption_table.h"
#include "pack/pack_fields.h"

namespace stoker {

class CaptionFields : public PackFields {
 public:
  // Captions from sidecars (`table` empty) or from `table`.
  explicit CaptionFields(std::optional<CaptionTable> table) : table_(std::move(table)) {}

  std::vector<std::string> names() const override;
  absl::Status Read(const Storage& storage, size_t index, const PackInput& input,
                    RecordFields* fields, SkippedInput* skip) const override;

 private:
  const std::optional<CaptionTable> table_;
};

// The captions of `options` (has_captions()): its table read through `storage`, in the format
// options.captions_format names, or sidecars. The table's errors, and a row naming an image
// that is not one of `inputs`, prefixed "captions_file: "; captions_format's.
absl::StatusOr<std::unique_ptr<CaptionFields>> MakeCaptionFields(
    const Storage& storage, const PackOptions& options, const std::vector<PackInput>& inputs);

}  // namespace stoker

#endif  // STOKER_PACK_CAPTION_FIELDS_H_
