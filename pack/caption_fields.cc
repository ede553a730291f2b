#include "pack/caption_fields.h"

#include <filesystem>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "data/sample_fields.h"
#include "data/storage.h"
#include "data/storage_backend.h"

namespace stoker {

std::vector<std::string> CaptionFields::names() const { return {std::string(kTextField)}; }

absl::Status CaptionFields::Read(const Storage& storage, size_t /*index*/, const PackInput& input,
                                 RecordFields* fields, SkippedInput* skip) const {
  std::string caption;
  if (table_.has_value()) {
    const std::string* listed = table_->Find(input.path);
    if (listed == nullptr) {
      *skip = SkippedInput{input.path, "missing_caption", "not in the captions file"};
      return absl::OkStatus();
    }
    caption = *listed;
  } else {
    const std::string sidecar = std::filesystem::path(input.path).replace_extension(".txt");
    absl::StatusOr<std::string> read = storage.ReadAll(sidecar);
    if (absl::IsNotFound(read.status())) {
      *skip = SkippedInput{input.path, "missing_caption", absl::StrCat("no caption ", sidecar)};
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(read.status());  // UNAVAILABLE: the run stops, a rerun resumes.
    caption = *std::move(read);
  }
  *fields = {{std::string(kTextField), std::move(caption)}};
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CaptionFields>> MakeCaptionFields(
    const Storage& storage, const PackOptions& options, const std::vector<PackInput>& inputs) {
  std::optional<CaptionTable> table;
  if (!options.captions_file.empty()) {
    ASSIGN_OR_RETURN(const CaptionTableFormat format,
                     CaptionTableFormatOf(options.captions_format, options.captions_file));
    absl::StatusOr<CaptionTable> read = ReadCaptionTable(storage, options.captions_file, format);
    if (!read.ok()) return PrefixStatus("captions_file: ", read.status());
    std::vector<std::string> paths;
    paths.reserve(inputs.size());
    for (const PackInput& input : inputs) paths.push_back(input.path);
    RETURN_IF_ERROR(PrefixStatus("captions_file: ", read->CheckListedAmong(paths)));
    table = *std::move(read);
  }
  return std::make_unique<CaptionFields>(std::move(table));
}

}  // namespace stoker
