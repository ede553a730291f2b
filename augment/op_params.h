#ifndef STOKER_AUGMENT_OP_PARAMS_H_
#define STOKER_AUGMENT_OP_PARAMS_H_

// A test and debug hook: the parameters a random op draws for one sample, without running it.
// The ops with random parameters implement DrawsParams with the very draw function their Apply
// uses, so a test can check the parameters' distribution against torchvision's get_params (or
// the analytic one) and feed the same parameters to torchvision's functional API. Nothing on the
// data path calls it. What each op returns is listed in docs/augmentations.md ("Drawn
// parameters").

#include <vector>

#include "absl/status/statusor.h"
#include "augment/op.h"
#include "common/counter_rng.h"
#include "image/image.h"

namespace stoker {

// Thread-safe like Op::Apply.
class DrawsParams {
 public:
  virtual ~DrawsParams() = default;
  // Makes exactly the draws Apply makes from `rng` for an input of shape `in`, and returns the
  // parameters they give, flattened.
  virtual std::vector<double> DrawParams(const ImageShape& in, CounterRng* rng) const = 0;
};

// `op`'s drawn parameters. Errors: FAILED_PRECONDITION when `op` has no random parameters
// ("<name> draws no parameters").
absl::StatusOr<std::vector<double>> DrawOpParams(const Op& op, const ImageShape& in,
                                                 CounterRng* rng);

}  // namespace stoker

#endif  // STOKER_AUGMENT_OP_PARAMS_H_
