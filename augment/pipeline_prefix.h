#ifndef STOKER_AUGMENT_PIPELINE_PREFIX_H_
#define STOKER_AUGMENT_PIPELINE_PREFIX_H_

// Pipeline::Compile's part of the decoded prefix (augment/pipeline.h, "Decoded prefix"): where it
// ends and its fingerprint. The two-part run (RunPrefix, RunSuffix) is in pipeline_prefix.cc.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "image/sample_input.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

class Op;  // augment/op.h

// The end of the decoded prefix of `ops`: decode, then each op that never draws, maps uint8 to
// uint8, does not choose from boxes or draw its size, and comes before `tail`.
size_t DecodedPrefixEnd(const std::vector<std::unique_ptr<Op>>& ops, size_t tail);

// Pipeline::prefix_fingerprint() of spec.ops(0, end) for `input`: kDecodedPrefixVersion, the
// input format (its encoded flag, and a decoded input's shape), then per op its deterministic
// protobuf bytes (StableFingerprint: integers little-endian, strings length-prefixed).
uint64_t DecodedPrefixFingerprint(const stoker::v1::PipelineSpec& spec, const InputFormat& input,
                                  size_t end);

}  // namespace stoker

#endif  // STOKER_AUGMENT_PIPELINE_PREFIX_H_
