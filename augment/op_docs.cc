#include "augment/op_docs.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "augment/batch_mix.h"
#include "augment/op_registry.h"

namespace stoker {
namespace {

constexpr char kBeginPrefix[] = "<!-- BEGIN GENERATED ";
constexpr char kEndPrefix[] = "<!-- END GENERATED ";

// "resize(height=0, width=0, shorter=0, interpolation=0)": required arguments bare, the others
// with their defaults, as the text syntax takes them.
std::string Signature(const OpSchema& schema) {
  if (schema.args.empty()) return schema.name;
  return absl::StrCat(
      schema.name, "(",
      absl::StrJoin(schema.args, ", ",
                    [](std::string* out, const ArgSchema& arg) {
                      out->append(arg.default_value.empty()
                                      ? arg.name
                                      : absl::StrCat(arg.name, "=", arg.default_value));
                    }),
      ")");
}

GeneratedBlock Table(const std::string& name, const std::string& first_column,
                     const std::string& counterpart_column, const std::vector<OpSchema>& schemas) {
  // The marker names the generator, so that whoever edits the table finds where to edit instead.
  std::string text = absl::StrCat(
      kBeginPrefix, name,
      ": made from the op registry (augment/ops/*.cc, augment/batch_mix.cc) by `stoker-ctl "
      "pipeline ops --update=docs/augmentations.md`; edit the registry, not this table -->\n",
      "| ", first_column, " | ", counterpart_column,
      " | dtype | tested against torchvision | boxes, masks, keypoints | draws |\n"
      "|---|---|---|---|---|---|\n");
  for (const OpSchema& schema : schemas) {
    absl::StrAppend(&text, "| `", Signature(schema), "` | ", schema.torchvision.counterpart, " | ",
                    schema.torchvision.dtypes, " | ", schema.torchvision.tested, " | ",
                    TargetSupportName(schema.targets), " | ", RngDrawsName(schema.draws), " |\n");
  }
  absl::StrAppend(&text, kEndPrefix, name, " -->\n");
  return GeneratedBlock{name, std::move(text)};
}

// The offset of the line starting with `prefix` + `name` followed by ':' or ' ' (so that
// "op-table" does not match "op-table-2"), or npos; INVALID_ARGUMENT when there are two.
absl::StatusOr<size_t> FindMarker(std::string_view doc, std::string_view prefix,
                                  std::string_view name) {
  const std::string marker = std::string(prefix) + std::string(name);
  size_t found = std::string_view::npos;
  for (size_t pos = doc.find(marker); pos != std::string_view::npos;
       pos = doc.find(marker, pos + 1)) {
    const size_t after = pos + marker.size();
    const bool line_start = pos == 0 || doc[pos - 1] == '\n';
    const bool name_end = after < doc.size() && (doc[after] == ':' || doc[after] == ' ');
    if (!line_start || !name_end) continue;
    if (found != std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("two '", marker, "' markers"));
    }
    found = pos;
  }
  return found;
}

}  // namespace

std::vector<GeneratedBlock> OpDocBlocks() {
  return {
      Table("op-table", "Stoker op (text syntax)", "torchvision", OpSchemas()),
      Table("batch-op-table", "batch op (text syntax)", "torchvision / timm", BatchOpSchemas())};
}

absl::StatusOr<std::string> SpliceGeneratedBlocks(std::string_view doc,
                                                  const std::vector<GeneratedBlock>& blocks) {
  std::string out(doc);
  for (const GeneratedBlock& block : blocks) {
    absl::StatusOr<size_t> begin = FindMarker(out, kBeginPrefix, block.name);
    if (!begin.ok()) return begin.status();
    absl::StatusOr<size_t> end = FindMarker(out, kEndPrefix, block.name);
    if (!end.ok()) return end.status();
    if (*begin == std::string::npos || *end == std::string::npos || *end < *begin) {
      return absl::InvalidArgumentError(absl::StrCat(
          "generated block '", block.name, "': expected a line starting '", kBeginPrefix,
          block.name, ":' and, after it, a line '", kEndPrefix, block.name, " -->'"));
    }
    size_t end_of_line = out.find('\n', *end);
    end_of_line = end_of_line == std::string::npos ? out.size() : end_of_line + 1;
    out.replace(*begin, end_of_line - *begin, block.text);
  }
  return out;
}

}  // namespace stoker
