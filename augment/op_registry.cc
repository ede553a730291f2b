#include "augment/op_registry.h"

#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "augment/op_params.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {

const char* ArgTypeName(ArgType type) {
  switch (type) {
    case ArgType::kInt:
      return "int";
    case ArgType::kFloat:
      return "float";
    case ArgType::kFloatList:
      return "float list";
    case ArgType::kOpList:
      return "op list";
  }
  return "?";
}

const char* TargetSupportName(TargetSupport support) {
  switch (support) {
    case TargetSupport::kUnchanged:
      return "unchanged";
    case TargetSupport::kMoves:
      return "moved";
    case TargetSupport::kAsNested:
      return "as nested ops";
    case TargetSupport::kRefused:
      return "refused";
  }
  return "?";
}

const char* RngDrawsName(RngDraws draws) {
  switch (draws) {
    case RngDraws::kNever:
      return "never";
    case RngDraws::kAlways:
      return "always";
    case RngDraws::kByArgs:
      return "by arguments";
  }
  return "?";
}

bool ArgRange::Contains(double value) const {
  if (std::isnan(value)) return false;
  const bool above_min = min_open ? value > min : value >= min;
  const bool below_max = max_open ? value < max : value <= max;
  return above_min && below_max;
}

std::string ArgRange::Text() const {
  const bool has_min = std::isfinite(min);
  const bool has_max = std::isfinite(max);
  if (has_min && has_max) {
    return absl::StrCat(min_open ? "(" : "[", min, ", ", max, max_open ? ")" : "]");
  }
  if (has_min) return absl::StrCat(min_open ? "> " : ">= ", min);
  if (has_max) return absl::StrCat(max_open ? "< " : "<= ", max);
  return "any";
}

ArgRange Closed(double min, double max) { return ArgRange{min, false, max, false}; }

ArgRange AtLeast(double min) {
  ArgRange range;
  range.min = min;
  return range;
}

ArgRange Above(double min) {
  ArgRange range;
  range.min = min;
  range.min_open = true;
  return range;
}

const ArgSchema* OpSchema::FindArg(std::string_view arg_name) const {
  for (const ArgSchema& arg : args) {
    if (arg.name == arg_name) return &arg;
  }
  return nullptr;
}

const std::vector<OpSchema>& OpSchemas() {
  static const auto* const kSchemas = new std::vector<OpSchema>{
      DecodeOpSchema(),
      ResizeOpSchema(),
      CenterCropOpSchema(),
      RandomResizedCropOpSchema(),
      ToFloatOpSchema(),
      GaussianBlurOpSchema(),
      RandomCropOpSchema(),
      HorizontalFlipOpSchema(),
      NormalizeOpSchema(),
      ColorJitterOpSchema(),
      GrayscaleOpSchema(),
      VerticalFlipOpSchema(),
      InvertOpSchema(),
      PosterizeOpSchema(),
      SolarizeOpSchema(),
      AutocontrastOpSchema(),
      RandomGrayscaleOpSchema(),
      EqualizeOpSchema(),
      AdjustSharpnessOpSchema(),
      PadOpSchema(),
      RandomErasingOpSchema(),
      AdjustHueOpSchema(),
      AffineOpSchema(),
      RandomRotationOpSchema(),
      RandomAffineOpSchema(),
      RandomPerspectiveOpSchema(),
      RandomApplyOpSchema(),
      RandomChoiceOpSchema(),
      RandomOrderOpSchema(),
      RandAugmentOpSchema(),
      TrivialAugmentWideOpSchema(),
      AutoAugmentOpSchema(),
      AugMixOpSchema(),
      SanitizeBoxesOpSchema(),
      ZoomOutOpSchema(),
      RandomIouCropOpSchema(),
  };
  return *kSchemas;
}

const OpSchema* FindOpSchema(std::string_view name) {
  for (const OpSchema& schema : OpSchemas()) {
    if (schema.name == name) return &schema;
  }
  return nullptr;
}

const OpSchema* FindOpSchema(stoker::v1::Op::OpCase op_case) {
  for (const OpSchema& schema : OpSchemas()) {
    if (schema.op_case == op_case) return &schema;
  }
  return nullptr;
}

std::string KnownOpNames() {
  return absl::StrJoin(OpSchemas(), ", ",
                       [](std::string* out, const OpSchema& schema) { out->append(schema.name); });
}

absl::StatusOr<std::unique_ptr<Op>> CreateOp(const stoker::v1::Op& op, int index,
                                             const ImageShape& input) {
  const OpSchema* schema = FindOpSchema(op.op_case());
  if (schema == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("pipeline.ops[", index, "]: no op set (one of: ", KnownOpNames(), ")"));
  }
  absl::StatusOr<std::unique_ptr<Op>> created = schema->factory(op, input);
  if (!created.ok()) {
    return PrefixStatus(absl::StrCat("pipeline.ops[", index, "] (", schema->name, "): "),
                        created.status());
  }
  return created;
}

absl::StatusOr<std::vector<double>> DrawOpParams(const Op& op, const ImageShape& in,
                                                 CounterRng* rng) {
  const auto* draws = dynamic_cast<const DrawsParams*>(&op);
  if (draws == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(op.name(), " draws no parameters"));
  }
  return draws->DrawParams(in, rng);
}

}  // namespace stoker
