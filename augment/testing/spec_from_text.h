#ifndef STOKER_AUGMENT_TESTING_SPEC_FROM_TEXT_H_
#define STOKER_AUGMENT_TESTING_SPEC_FROM_TEXT_H_

// For tests: a PipelineSpec written in the pipeline text form. A parse error fails the calling
// test (and gives an empty spec).

#include <string_view>

#include "augment/pipeline_text.h"
#include "gtest/gtest.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

inline v1::PipelineSpec SpecFromText(std::string_view text) {
  absl::StatusOr<v1::PipelineSpec> spec = ParsePipelineText(text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : v1::PipelineSpec();
}

}  // namespace stoker

#endif  // STOKER_AUGMENT_TESTING_SPEC_FROM_TEXT_H_
