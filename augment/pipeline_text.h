#ifndef STOKER_AUGMENT_PIPELINE_TEXT_H_
#define STOKER_AUGMENT_PIPELINE_TEXT_H_

// A one-line text form of a pipeline's ops, for command lines and configs:
//
//   to_float, gaussian_blur(ksize=11)*10, random_crop(height=200, width=200),
//   horizontal_flip(p=0.5), normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])
//
//   decode, random_resized_crop(height=224, width=224), horizontal_flip, to_float,
//   normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])      (encoded input)
//
// Grammar (whitespace allowed between tokens):
//   pipeline := [op ("," op)*]
//   op       := NAME ["(" [arg ("," arg)*] ")"] ["*" N]     N: repeat count, 1..1000
//   arg      := NAME "=" value
//   value    := NUMBER | "[" [NUMBER ("," NUMBER)*] "]"     lists only for list arguments
//             | "[" [op ("," op)*] "]"                      op lists: the combinators' ops
//
// Combinators take their ops as an op list, nested at most 8 deep, e.g.
//   random_apply(ops=[color_jitter(brightness=0.4), grayscale(channels=3)], p=0.8),
//   random_choice(ops=[invert, solarize(threshold=128)], p=[0.3, 0.7]),
//   random_order(ops=[vertical_flip(p=1), rand_augment(num_ops=1)])
//
// Op and argument names and types come from the op registry (augment/op_registry.h); this only
// fills the proto, and Pipeline::Compile validates the values against the image. The output
// layout and dtype are not part of the text: the caller sets them on the returned spec.
// Thread-safe.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

// Parses `text` into a PipelineSpec with only `ops` set. Empty (or blank) text gives no ops.
// Errors: INVALID_ARGUMENT naming what is wrong and where (column, 1-based), e.g.
//   "pipeline text, column 1: unknown op 'blur'; known ops: to_float, gaussian_blur, ..."
//   "pipeline text, column 15: gaussian_blur has no argument 'k'; its arguments: ksize, ..."
//   "pipeline text, column 21: gaussian_blur.ksize: expected an integer in ..., got 'x'"
absl::StatusOr<stoker::v1::PipelineSpec> ParsePipelineText(std::string_view text);

// A multi-line description of every op (name, arguments with types and defaults, docs) and of
// the text syntax, for --help.
std::string PipelineOpsHelp();

}  // namespace stoker

#endif  // STOKER_AUGMENT_PIPELINE_TEXT_H_
