#include "data/sample_fields.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/target_fields.h"

namespace stoker {
namespace {

bool IsNameChar(char c) {
  return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '.' || c == '_' || c == '-';
}

// Why `name` cannot be a field, or empty when it can.
std::string NameProblem(absl::string_view name) {
  if (name.empty()) return "must not be empty";
  if (name.size() > kMaxFieldNameBytes) {
    return absl::StrCat("longer than ", kMaxFieldNameBytes, " bytes");
  }
  if (name.front() == '.' || !std::all_of(name.begin(), name.end(), IsNameChar)) {
    return absl::StrCat("\"", name, "\" is not a field name (lowercase a-z, 0-9, '.', '_', '-')");
  }
  if (name == "txt") return "\"txt\": a WebDataset .txt is the field \"text\"";
  if (name == "cls") return "\"cls\": a WebDataset .cls is the field \"label\"";
  return "";
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SourceFields(const stoker::v1::JobSpec& spec) {
  if (static_cast<uint64_t>(spec.fields_size()) > kMaxJobFields) {
    return absl::InvalidArgumentError(
        absl::StrCat("fields: ", spec.fields_size(), " names, at most ", kMaxJobFields));
  }
  std::vector<std::string> read;
  bool image = false, boxes = false;
  int box_labels_at = -1;
  for (int i = 0; i < spec.fields_size(); ++i) {
    const std::string& name = spec.fields(i);
    std::string problem = NameProblem(name);
    for (int j = 0; j < i && problem.empty(); ++j) {
      if (spec.fields(j) == name) problem = absl::StrCat("\"", name, "\" is named twice");
    }
    if (!problem.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("fields[", i, "]: ", problem));
    }
    if (name == kImageField) {
      image = true;
    } else if (name != kLabelField) {
      read.push_back(name);
    }
    boxes = boxes || name == kBoxesField;
    if (name == kBoxLabelsField) box_labels_at = i;
  }
  if (box_labels_at >= 0 && !boxes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fields[", box_labels_at, "]: \"box_labels\" needs \"boxes\" (labels belong to boxes)"));
  }
  if (spec.fields_size() > 0 && !image) {
    return absl::InvalidArgumentError(
        "fields: must name \"image\" (the pipeline's output) when fields are named");
  }
  return read;
}

bool NamesTypedTargets(const stoker::v1::JobSpec& spec) {
  return std::any_of(spec.fields().begin(), spec.fields().end(),
                     [](const std::string& name) { return IsTargetField(name); });
}

std::string WebDatasetExtension(absl::string_view field) {
  if (field == kTextField) return "txt";
  if (field == kSemanticMaskField) return "seg.png";
  return std::string(field);
}

}  // namespace stoker
