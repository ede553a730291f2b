#include "augment/ops/nested.h"

#include <array>
#include <cstring>
#include <deque>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "augment/op_registry.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

std::string ShapeText(const ImageShape& s) {
  return absl::StrCat(s.height, "x", s.width, "x", s.channels, " ", PixelTypeName(s.type));
}

struct NestedLevels {
  std::deque<std::array<ImageBuffer, NestedScratch::kImages>> levels;  // Stable addresses.
  size_t depth = 0;
};

NestedLevels& ThreadLevels() {
  thread_local NestedLevels levels;
  return levels;
}

}  // namespace

NestedScratch::NestedScratch() {
  NestedLevels& t = ThreadLevels();
  if (t.depth == t.levels.size()) t.levels.emplace_back();
  images_ = t.levels[t.depth++].data();
}

NestedScratch::~NestedScratch() { --ThreadLevels().depth; }

ImageBuffer& NestedScratch::image(int i) { return images_[i]; }

absl::Status RunSteps(int count, const ImageView& in, const ImageView& out, StepFn step) {
  if (count == 0) {
    std::memcpy(out.data, in.data, in.shape.bytes());
    return absl::OkStatus();
  }
  NestedScratch scratch;
  ImageView current = in;
  for (int i = 0; i < count; ++i) {
    ImageView target = out;
    if (i + 1 < count) {
      ImageBuffer& buffer = scratch.image(i & 1);
      buffer.Reshape(in.shape);
      target = buffer.view();
    }
    RETURN_IF_ERROR(step(i, current, target));
    current = target;
  }
  return absl::OkStatus();
}

void ShuffleFromBack(int* order, int n, CounterRng* rng) {
  for (int i = n - 1; i > 0; --i) {
    std::swap(order[i], order[rng->UniformInt(static_cast<uint64_t>(i) + 1)]);
  }
}

absl::StatusOr<std::vector<std::unique_ptr<Op>>> CreateNestedOps(
    const google::protobuf::RepeatedPtrField<v1::Op>& ops, const ImageShape& input) {
  if (ops.empty()) return absl::InvalidArgumentError("ops: give at least one op");
  std::vector<std::unique_ptr<Op>> created;
  for (int i = 0; i < ops.size(); ++i) {
    const OpSchema* schema = FindOpSchema(ops[i].op_case());
    if (schema == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("ops[", i, "]: no op set (one of: ", KnownOpNames(), ")"));
    }
    const std::string prefix = absl::StrCat("ops[", i, "] (", schema->name, "): ");
    if (ops[i].has_decode()) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, "decode must be the first op of the pipeline, not nested"));
    }
    absl::StatusOr<std::unique_ptr<Op>> op = schema->factory(ops[i], input);
    if (!op.ok()) return PrefixStatus(prefix, op.status());
    if ((*op)->DrawsOutputSize()) {
      return absl::InvalidArgumentError(absl::StrCat(
          prefix, "a nested op must keep the image's shape; it draws its output size"));
    }
    if ((*op)->output_shape() != input) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, "a nested op must keep the image's shape; it turns ",
                       ShapeText(input), " into ", ShapeText((*op)->output_shape())));
    }
    created.push_back(*std::move(op));
  }
  return created;
}

absl::Status CheckNestedShapes(const std::vector<std::unique_ptr<Op>>& ops, const ImageShape& in) {
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::StatusOr<ImageShape> shape = ops[i]->OutputShapeFor(in);
    if (!shape.ok()) {
      return PrefixStatus(absl::StrCat("ops[", i, "] (", ops[i]->name(), "): "), shape.status());
    }
    if (*shape != in) {
      return absl::InvalidArgumentError(
          absl::StrCat("ops[", i, "] (", ops[i]->name(), "): a nested op must keep the image's ",
                       "shape; it turns ", ShapeText(in), " into ", ShapeText(*shape)));
    }
  }
  return absl::OkStatus();
}

}  // namespace stoker
