#ifndef STOKER_AUGMENT_OPS_NESTED_H_
#define STOKER_AUGMENT_OPS_NESTED_H_

// What the ops that run other steps share (the combinators random_apply, random_choice,
// random_order, and the policies rand_augment, trivial_augment_wide, auto_augment, aug_mix):
// thread-local scratch images per nesting level, a runner of a sequence of shape-keeping steps,
// and the creation of nested ops from their protos.

#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "augment/op.h"
#include "common/counter_rng.h"
#include "image/image.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// Scratch images of the calling thread for one nesting level: constructing one enters a level
// (an op nested inside gets the next level's images, never these), destroying it leaves it.
// The images never shrink, so steady state allocates nothing. Thread-compatible: use on the
// thread that made it, in stack order.
class NestedScratch {
 public:
  static constexpr int kImages = 4;
  NestedScratch();
  ~NestedScratch();
  NestedScratch(const NestedScratch&) = delete;
  NestedScratch& operator=(const NestedScratch&) = delete;

  // Image i (< kImages) of this level.
  ImageBuffer& image(int i);

 private:
  ImageBuffer* images_;
};

// One step: reads `in`, writes `out` (same shape, never overlapping `in`).
using StepFn = absl::FunctionRef<absl::Status(int step, const ImageView& in, const ImageView& out)>;

// Runs steps 0..count-1 from `in` to `out`, each reading the previous one's output, through
// images 0 and 1 of a new NestedScratch level; count 0 copies `in` to `out`.
// REQUIRES: out.shape == in.shape; `out` does not overlap `in`.
// Errors: the first step's error.
absl::Status RunSteps(int count, const ImageView& in, const ImageView& out, StepFn step);

// Shuffles order[0..n) as Python's random.shuffle (and torchvision's ColorJitter order): for
// i = n-1 down to 1, swap order[i] with order[rng->UniformInt(i + 1)].
void ShuffleFromBack(int* order, int n, CounterRng* rng);

// Creates the ops of a combinator (its `ops` field) for an input of shape `input`, each of
// which must keep that shape. Errors: INVALID_ARGUMENT prefixed "ops[i] (name): ", for an
// empty list ("ops: give at least one op"), an op that changes the shape, decode, or an op's
// own argument errors.
absl::StatusOr<std::vector<std::unique_ptr<Op>>> CreateNestedOps(
    const google::protobuf::RepeatedPtrField<v1::Op>& ops, const ImageShape& input);

// OK when every op keeps `in` (a run-time shape). Errors: INVALID_ARGUMENT "ops[i] (name): ...".
absl::Status CheckNestedShapes(const std::vector<std::unique_ptr<Op>>& ops, const ImageShape& in);

}  // namespace stoker

#endif  // STOKER_AUGMENT_OPS_NESTED_H_
