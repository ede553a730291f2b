#ifndef STOKER_AUGMENT_OP_H_
#define STOKER_AUGMENT_OP_H_

// An op is one step of the augmentation pipeline: a thin adapter (DALI's operator) between the
// pipeline executor and a kernel (augment/kernels/, a pure function on image views). An op is
// created by the registry (augment/op_registry.h) from its proto, for one input shape, after its
// arguments have been validated; it then knows its output shape and only runs the kernel.
//
// Randomness and the determinism contract (DESIGN.md §3). Each op draws from the sample's
// CounterRng, in pipeline order, exactly the draws listed here, whatever their outcome, so the
// output depends only on (seed, epoch, sample index) and the compiled pipeline:
//
//   to_float         no draw.
//   gaussian_blur    fixed sigma: no draw. Range: one rng->UniformFloat(sigma_min, sigma_max);
//                    the same sigma is used along both axes (like torchvision).
//   random_crop      two draws: top = rng->UniformInt(H - h + 1), then
//                    left = rng->UniformInt(W - w + 1) (UniformInt(1) still draws, returning 0).
//   horizontal_flip  one draw: flip when rng->UniformFloat() < p (also drawn when p is 0 or 1).
//   normalize        no draw.
//
// Changing the order or number of draws changes every augmented sample of every job: don't,
// except in a new op.

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "augment/image.h"
#include "common/counter_rng.h"

namespace stoker {

// Immutable after creation: Apply may run concurrently from many threads as long as each call
// has its own rng, scratch and output.
class Op {
 public:
  virtual ~Op() = default;
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  // The registry name ("gaussian_blur").
  const std::string& name() const { return name_; }
  // The shape the op was validated for, and the shape it produces from it.
  const ImageShape& input_shape() const { return input_shape_; }
  const ImageShape& output_shape() const { return output_shape_; }

  // True when Apply accepts out.data == in.data (an in-place run).
  virtual bool SupportsInPlace() const { return false; }

  // Transforms `in` into `out`, drawing randomness from `rng` as documented above. `scratch` is a
  // per-thread buffer the op may Reshape and overwrite (it never shrinks, so steady state does not
  // allocate).
  // REQUIRES: in.shape == input_shape(); out.shape == output_shape(); out.data is in.data only
  //   when SupportsInPlace(), otherwise the two do not overlap; `scratch` is not `in` or `out`.
  // Errors: INTERNAL when a kernel fails (none of today's kernels can).
  virtual absl::Status Apply(const ImageView& in, CounterRng* rng, ImageBuffer* scratch,
                             const ImageView& out) const = 0;

 protected:
  Op(std::string name, const ImageShape& input_shape, const ImageShape& output_shape)
      : name_(std::move(name)), input_shape_(input_shape), output_shape_(output_shape) {}

 private:
  const std::string name_;
  const ImageShape input_shape_;
  const ImageShape output_shape_;
};

}  // namespace stoker

#endif  // STOKER_AUGMENT_OP_H_
