// The combinators, torchvision's RandomApply, RandomChoice and RandomOrder: ops that run a
// nested list of ops (each keeping the image's shape) with probability p, one of them, or all
// in a random order. Nested ops draw from the same per-sample RNG, after the combinator's own
// draws and only when they run.

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "augment/op_params.h"
#include "augment/ops/nested.h"
#include "augment/ops/ops.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

constexpr int kMaxNestedOps = 64;

class CombinatorOp : public Op, public DrawsParams {
 public:
  absl::StatusOr<ImageShape> OutputShapeFor(const ImageShape& in) const override {
    RETURN_IF_ERROR(CheckNestedShapes(ops_, in));
    return in;
  }

  absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                     const ImageView& out) const override {
    std::array<int, kMaxNestedOps> order;
    const int count = Draw(rng, order.data());
    return RunSteps(count, in, out, [&](int i, const ImageView& from, const ImageView& to) {
      return ops_[order[i]]->Apply(from, rng, scratch, to);
    });
  }

  absl::Status CheckMovesTargets() const override {
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (absl::Status s = ops_[i]->CheckMovesTargets(); !s.ok()) {
        return PrefixStatus(absl::StrCat("ops[", i, "] (", ops_[i]->name(), "): "), s);
      }
    }
    return absl::OkStatus();
  }

  // Apply, each op that runs tracked in turn (DrawTargetMoves alone could not make the draws of
  // nested photometric ops, which the executor never asks for).
  absl::Status ApplyTracked(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                            const ImageView& out, TargetMoves* moves) const override {
    std::array<int, kMaxNestedOps> order;
    const int count = Draw(rng, order.data());
    return RunSteps(count, in, out, [&](int i, const ImageView& from, const ImageView& to) {
      return ops_[order[i]]->ApplyTracked(from, rng, scratch, to, moves);
    });
  }

  // The indices of the ops that run, in order.
  std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const override {
    std::array<int, kMaxNestedOps> order;
    const int count = Draw(rng, order.data());
    return std::vector<double>(order.begin(), order.begin() + count);
  }

 protected:
  CombinatorOp(std::string name, const ImageShape& input, std::vector<std::unique_ptr<Op>> ops)
      : Op(std::move(name), input, input), ops_(std::move(ops)) {}

  int size() const { return static_cast<int>(ops_.size()); }

 private:
  // Makes the combinator's draws; writes the indices of the ops to run, in order, to `order`
  // and returns their count.
  virtual int Draw(CounterRng* rng, int* order) const = 0;

  const std::vector<std::unique_ptr<Op>> ops_;
};

// random_apply: one draw, rng->UniformFloat(); all ops in order when it is < p.
class RandomApplyCombinator final : public CombinatorOp {
 public:
  RandomApplyCombinator(const ImageShape& input, std::vector<std::unique_ptr<Op>> ops, float p)
      : CombinatorOp("random_apply", input, std::move(ops)), p_(p) {}

 private:
  int Draw(CounterRng* rng, int* order) const override {
    if (!(rng->UniformFloat() < p_)) return 0;
    for (int i = 0; i < size(); ++i) order[i] = i;
    return size();
  }
  const float p_;
};

// random_choice: one draw, u = rng->UniformDouble() × Σ weights; the first op whose cumulative
// weight exceeds u (Python's random.choices).
class RandomChoiceCombinator final : public CombinatorOp {
 public:
  RandomChoiceCombinator(const ImageShape& input, std::vector<std::unique_ptr<Op>> ops,
                         std::vector<double> cumulative)
      : CombinatorOp("random_choice", input, std::move(ops)), cumulative_(std::move(cumulative)) {}

 private:
  int Draw(CounterRng* rng, int* order) const override {
    const double u = rng->UniformDouble() * cumulative_.back();
    order[0] = static_cast<int>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) -
                                cumulative_.begin());
    order[0] = std::min(order[0], size() - 1);
    return 1;
  }
  const std::vector<double> cumulative_;
};

// random_order: Fisher-Yates from the back (Python's random.shuffle): for i = n-1 .. 1,
// j = rng->UniformInt(i + 1), swap(order[i], order[j]).
class RandomOrderCombinator final : public CombinatorOp {
 public:
  RandomOrderCombinator(const ImageShape& input, std::vector<std::unique_ptr<Op>> ops)
      : CombinatorOp("random_order", input, std::move(ops)) {}

 private:
  int Draw(CounterRng* rng, int* order) const override {
    for (int i = 0; i < size(); ++i) order[i] = i;
    ShuffleFromBack(order, size(), rng);
    return size();
  }
};

absl::StatusOr<std::vector<std::unique_ptr<Op>>> NestedOps(
    const google::protobuf::RepeatedPtrField<v1::Op>& ops, const ImageShape& input) {
  if (ops.size() > kMaxNestedOps) {
    return absl::InvalidArgumentError(
        absl::StrCat("ops: at most ", kMaxNestedOps, " ops, got ", ops.size()));
  }
  return CreateNestedOps(ops, input);
}

absl::StatusOr<std::unique_ptr<Op>> CreateRandomApplyOp(const v1::Op& op, const ImageShape& input) {
  const v1::RandomApplyOp& a = op.random_apply();
  const float p = a.has_p() ? a.p() : 0.5f;
  if (!(p >= 0.0f && p <= 1.0f)) {
    return absl::InvalidArgumentError(absl::StrCat("p must be in [0, 1], got ", p));
  }
  ASSIGN_OR_RETURN(auto ops, NestedOps(a.ops(), input));
  return std::make_unique<RandomApplyCombinator>(input, std::move(ops), p);
}

absl::StatusOr<std::unique_ptr<Op>> CreateRandomChoiceOp(const v1::Op& op,
                                                         const ImageShape& input) {
  const v1::RandomChoiceOp& a = op.random_choice();
  ASSIGN_OR_RETURN(auto ops, NestedOps(a.ops(), input));
  if (a.p_size() != 0 && a.p_size() != a.ops_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("p takes one weight per op (", a.ops_size(), "), got ", a.p_size()));
  }
  std::vector<double> cumulative;
  double total = 0;
  for (int i = 0; i < a.ops_size(); ++i) {
    const double w = a.p_size() == 0 ? 1.0 : a.p(i);
    if (!(w >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat("p[", i, "] must be >= 0, got ", w));
    }
    cumulative.push_back(total += w);
  }
  if (!(total > 0)) return absl::InvalidArgumentError("p: the weights sum to 0");
  return std::make_unique<RandomChoiceCombinator>(input, std::move(ops), std::move(cumulative));
}

absl::StatusOr<std::unique_ptr<Op>> CreateRandomOrderOp(const v1::Op& op, const ImageShape& input) {
  ASSIGN_OR_RETURN(auto ops, NestedOps(op.random_order().ops(), input));
  return std::make_unique<RandomOrderCombinator>(input, std::move(ops));
}

ArgSchema OpsArg() {
  return {"ops", ArgType::kOpList, "",
          "The nested ops, in brackets: [op, op(arg=value), ...]; each must keep the image's "
          "shape (size, channels, pixel type)."};
}

}  // namespace

OpSchema RandomApplyOpSchema() {
  return OpSchema{
      "random_apply",
      v1::Op::kRandomApply,
      "torchvision RandomApply: runs ops, in order, with probability p.",
      {OpsArg(), {"p", ArgType::kFloat, "0.5", "Probability in [0, 1].", Closed(0, 1)}},
      &CreateRandomApplyOp,
      {"`RandomApply(transforms, p)`", "any (the ops keep the shape)", "applied fraction: χ²"},
      TargetSupport::kAsNested,
      RngDraws::kAlways};
}

OpSchema RandomChoiceOpSchema() {
  return OpSchema{
      "random_choice",
      v1::Op::kRandomChoice,
      "torchvision RandomChoice: runs one of ops, picked with weights p (equal "
      "when empty).",
      {OpsArg(),
       {"p", ArgType::kFloatList, "[]", "One weight >= 0 per op (need not sum to 1).", AtLeast(0)}},
      &CreateRandomChoiceOp,
      {"`RandomChoice(transforms, p)`", "any", "choice: χ² against the weights"},
      TargetSupport::kAsNested,
      RngDraws::kAlways};
}

OpSchema RandomOrderOpSchema() {
  return OpSchema{"random_order",
                  v1::Op::kRandomOrder,
                  "torchvision RandomOrder: runs all of ops in a random order.",
                  {OpsArg()},
                  &CreateRandomOrderOp,
                  {"`RandomOrder(transforms)`", "any", "order: χ² over the n! permutations"},
                  TargetSupport::kAsNested,
                  RngDraws::kAlways};
}

}  // namespace stoker
