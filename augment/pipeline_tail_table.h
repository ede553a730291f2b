#ifndef STOKER_AUGMENT_PIPELINE_TAIL_TABLE_H_
#define STOKER_AUGMENT_PIPELINE_TAIL_TABLE_H_

// Pipeline::Compile's fused tail (augment/pipeline.h, "Fused tails"): which ops at the end a
// table replaces, and the table.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "stoker/v1/pipeline.pb.h"

namespace stoker {

class Op;  // augment/op.h

// The first op of the run at the end of `ops` (from `first` on) that a table can replace: ops
// that map elements per channel, the first of them taking uint8; ops.size() when there is none.
size_t TableTailStart(const std::vector<std::unique_ptr<Op>>& ops, size_t first);

// What ops[start..] give each uint8 value of each channel (ConvertThroughTable's table): the ops
// themselves run on a probe image whose pixels hold the values 0..255 in every channel, of the
// first op's own width where it is fixed (normalize keeps per-row constants), as many rows as it
// takes; so the table equals their output bit for bit.
absl::StatusOr<std::vector<float>> TailTable(const std::vector<std::unique_ptr<Op>>& ops,
                                             size_t start);

// The float16 or bfloat16 bits of each entry: what FloatToFloat16 / FloatToBfloat16 give them
// (every variant of those gives the scalar definition's bits).
std::vector<uint16_t> NarrowedTable(const std::vector<float>& table, stoker::v1::DType dtype);

}  // namespace stoker

#endif  // STOKER_AUGMENT_PIPELINE_TAIL_TABLE_H_
