#ifndef STOKER_TRAINER_CLIENT_PYTHON_PIPELINE_BINDING_H_
#define STOKER_TRAINER_CLIENT_PYTHON_PIPELINE_BINDING_H_

// stoker._stoker.run_pipeline: one sample through a pipeline in this process, with the same
// executor and per-sample RNG the workers use, so a pipeline (e.g. one translated from
// torchvision by stoker.from_torchvision) can be compared with its original on one image.

#include <pybind11/pybind11.h>

#include "absl/status/status.h"

namespace stoker {

// Adds run_pipeline to `m`; errors are raised through `throw_status` (the module's Status to
// exception mapping).
void DefinePipelineFunctions(pybind11::module_& m,
                             void (*throw_status)(const absl::Status& status));

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_PYTHON_PIPELINE_BINDING_H_
