#ifndef STOKER_AUGMENT_OPS_POLICY_SPACE_H_
#define STOKER_AUGMENT_OPS_POLICY_SPACE_H_

// The operation tables of torchvision's augmentation policies (torchvision/transforms/
// autoaugment.py, 0.14, equal in later versions): for each policy the operations it picks
// from, in torchvision's order (a drawn index means the same operation), whether a magnitude
// gets a random sign, and the magnitude of each bin, computed as torch.linspace does in
// float32. Also the draws shared by the policy ops (augment/ops/policy_ops.cc). Thread-safe.

#include <array>
#include <cstdint>

#include "absl/types/span.h"
#include "augment/kernels/policy.h"
#include "common/counter_rng.h"

namespace stoker {

struct PolicyOpSpec {
  enum class Scale : uint8_t {
    kNone,       // A single magnitude, 0 (torch.tensor(0.0)).
    kLinear,     // linspace(start, end, bins)
    kWidth,      // linspace(0, end * image width, bins)
    kHeight,     // linspace(0, end * image height, bins)
    kPosterize,  // start - round(bin / ((bins - 1) / end)), as int
  };
  PolicyOp op;
  bool is_signed;
  Scale scale;
  double start;
  double end;
};

// The magnitude of `bin` (< num_bins, num_bins >= 2) for an image of height × width, as the
// policy's _augmentation_space tensor holds it (float32, then a Python float).
double PolicyMagnitude(const PolicyOpSpec& spec, int bin, int num_bins, uint32_t height,
                       uint32_t width);

absl::Span<const PolicyOpSpec> RandAugmentSpace();         // 14 operations
absl::Span<const PolicyOpSpec> TrivialAugmentWideSpace();  // 14
absl::Span<const PolicyOpSpec> AutoAugmentSpace();         // 14 (no Identity; Invert)
absl::Span<const PolicyOpSpec> AugMixSpace(bool all_ops);  // 13, or the first 9

// One operation of an AutoAugment sub-policy: applied when its drawn probability <= p, at
// magnitude bin `bin` (-1: none) of AutoAugmentSpace with 10 bins.
struct SubPolicyStep {
  PolicyOp op;
  float p;
  int bin;
};
using SubPolicy = std::array<SubPolicyStep, 2>;
absl::Span<const SubPolicy> ImageNetPolicy();  // 25 sub-policies
// The spec of `op` in AutoAugmentSpace. REQUIRES: op is not kIdentity.
const PolicyOpSpec& AutoAugmentSpec(PolicyOp op);

// One operation drawn by a policy: its index in the policy's table, the magnitude bin (0 when
// the operation has none) and the signed magnitude.
struct PolicyStep {
  int index = 0;
  int bin = 0;
  double magnitude = 0;
};
// The magnitude of `spec` at `bin`, negated when the spec is signed and one more draw,
// rng->UniformInt(2), is 1 (torchvision's `if signed and torch.randint(2, (1,))`); unsigned
// specs draw nothing here.
double SignedMagnitude(const PolicyOpSpec& spec, int bin, int num_bins, uint32_t height,
                       uint32_t width, CounterRng* rng);

// A Gamma(alpha, 1) variate (Marsaglia and Tsang's method; for alpha < 1 boosted by
// U^(1/alpha)), from standard normals by Box-Muller on pairs of UniformDouble draws and
// UniformDouble draws. The number of draws varies (rejection), deterministically.
// REQUIRES: alpha > 0.
double SampleGamma(double alpha, CounterRng* rng);

}  // namespace stoker

#endif  // STOKER_AUGMENT_OPS_POLICY_SPACE_H_
