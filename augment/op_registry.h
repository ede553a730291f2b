#ifndef STOKER_AUGMENT_OP_REGISTRY_H_
#define STOKER_AUGMENT_OP_REGISTRY_H_

// The registry of pipeline ops: for each op a declarative schema (name, doc, arguments with
// types, defaults and docs) and a factory that validates a stoker::v1::Op against an input shape
// and creates the Op (augment/op.h).
//
// The schema's op names are the field names of the `op` oneof in stoker.v1.Op, and its argument
// names are the field names of the op's message (GaussianBlurOp.ksize ...): the pipeline text
// parser (augment/pipeline_text.h) relies on it and op_registry_test checks it.
//
// The schema is the one description of an op: docs/augmentations.md's op tables are generated
// from it (augment/op_docs.h, `stoker-ctl pipeline ops --markdown`; op_docs_drift_test fails when
// the checked-in tables differ), and stoker.from_torchvision checks argument names and ranges
// against it at run time (stoker._stoker.op_schemas()).
//
// The registry is a fixed table built on first use (no static-initialization registration, which
// static libraries drop); everything here is thread-safe.

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "augment/op.h"
#include "image/image.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

enum class ArgType {
  kInt,        // An integer (int32 or uint32 proto field).
  kFloat,      // A float.
  kFloatList,  // A list of floats (repeated float).
  kOpList,     // A list of ops (repeated stoker.v1.Op), for the combinators.
};
const char* ArgTypeName(ArgType type);  // "int", "float", "float list", "op list"

// The interval an argument's values must lie in, whatever the input and the other arguments; an
// unbounded end is infinite. Tools check values against it before the op is created (the Python
// translator names the torchvision transform that gave a bad value); the factory checks the same
// values again, with the input, and op_registry_test keeps the two in agreement.
struct ArgRange {
  double min = -std::numeric_limits<double>::infinity();
  bool min_open = false;  // min itself is excluded ("> 0").
  double max = std::numeric_limits<double>::infinity();
  bool max_open = false;

  bool Contains(double value) const;
  // "[0, 1]", ">= 1", "> 0", "[-0.5, 0.5]".
  std::string Text() const;
};
ArgRange Closed(double min, double max);  // [min, max]
ArgRange AtLeast(double min);             // >= min
ArgRange Above(double min);               // > min

struct ArgSchema {
  std::string name;
  ArgType type;
  // Shown in help texts; empty when the argument is required.
  std::string default_value;
  std::string doc;
  // Set where the valid values are one fixed interval (for a list, each element's); unset where
  // they depend on the input or on other arguments (the factory alone checks those).
  std::optional<ArgRange> range = std::nullopt;
};

// What an op corresponds to in torchvision (or timm) and how closely: the columns of
// docs/augmentations.md's op tables, in Markdown.
struct TorchvisionReference {
  std::string counterpart;  // "`RandomHorizontalFlip` / `F.hflip`"
  std::string dtypes;       // The pixel types the op takes: "uint8, float32", "any".
  std::string tested;       // What equivalence with torchvision is tested, and where.
};

// What an op does to a sample's targets (boxes, masks, keypoints: augment/targets/), as
// torchvision.transforms.v2 does; docs/augmentations.md's "Targets" column.
enum class TargetSupport {
  kUnchanged,  // Photometric (or no pixel moves): the targets stay where they are.
  kMoves,      // Geometric: boxes, masks and keypoints move with the image (Op::DrawTargetMoves).
  kAsNested,   // A combinator: as each of the ops it runs.
  kRefused,    // Moves pixels but cannot move targets: refused in a pipeline with targets.
};
// "unchanged", "moved", "as nested ops", "refused".
const char* TargetSupportName(TargetSupport support);

// Whether an op draws from the sample's CounterRng (augment/op.h's list of draws). Ops that never
// draw, on uint8, may belong to a pipeline's deterministic prefix (augment/pipeline.h, decoded
// prefix). Starts at 1 so that a schema leaving it out (0) fails op_registry_test.
enum class RngDraws {
  kNever = 1,  // No draw, whatever the arguments.
  kAlways,     // Draws with any arguments (combinators; ops that draw even at p 0 or 1).
  kByArgs,     // Depends on the arguments (gaussian_blur: a sigma range); Op::Draws() says.
};
// "never", "always", "by arguments".
const char* RngDrawsName(RngDraws draws);

// Validates `op` (whose oneof case is the schema's) for an image of shape `input` and creates it.
// Errors: INVALID_ARGUMENT naming the field, without the "pipeline.ops[i] (name): " prefix,
// which CreateOp adds.
using OpFactory = absl::StatusOr<std::unique_ptr<Op>> (*)(const stoker::v1::Op& op,
                                                          const ImageShape& input);

struct OpSchema {
  std::string name;
  stoker::v1::Op::OpCase op_case;
  std::string doc;
  std::vector<ArgSchema> args;
  OpFactory factory;
  TorchvisionReference torchvision;
  // Required: a new op states what it does to targets.
  TargetSupport targets;
  // Required: a new op states whether it draws (op.h's list is the truth to match).
  RngDraws draws;

  // nullptr when the op has no argument of that name.
  const ArgSchema* FindArg(std::string_view arg_name) const;
};

// Every op, in documentation order.
const std::vector<OpSchema>& OpSchemas();

// nullptr when unknown.
const OpSchema* FindOpSchema(std::string_view name);
const OpSchema* FindOpSchema(stoker::v1::Op::OpCase op_case);

// "to_float, gaussian_blur, ...", for error messages.
std::string KnownOpNames();

// Validates op number `index` of a pipeline for an input of shape `input` and creates it.
// Errors: INVALID_ARGUMENT, message prefixed "pipeline.ops[<index>] (<name>): ", e.g.
// "pipeline.ops[3] (gaussian_blur): ksize must be odd and > 0, got 4"; an op whose oneof is
// unset gives "pipeline.ops[<index>]: no op set (one of: ...)".
absl::StatusOr<std::unique_ptr<Op>> CreateOp(const stoker::v1::Op& op, int index,
                                             const ImageShape& input);

}  // namespace stoker

#endif  // STOKER_AUGMENT_OP_REGISTRY_H_
