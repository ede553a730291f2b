#ifndef STOKER_AUGMENT_OP_DOCS_H_
#define STOKER_AUGMENT_OP_DOCS_H_

// The parts of docs/augmentations.md generated from the op registry (augment/op_registry.h):
// the table of per-sample ops and the table of batch-level ops, each with the op's text syntax
// (argument names and defaults), its torchvision counterpart, pixel types and what is tested
// (OpSchema::torchvision), and what it does to targets (OpSchema::targets). They sit in the
// document between marker lines,
//
//   <!-- BEGIN GENERATED op-table ... -->
//   ...
//   <!-- END GENERATED op-table -->
//
// so that the registry stays the one place an op is described: `stoker-ctl pipeline ops
// --markdown` prints the blocks, `--update=docs/augmentations.md` rewrites them in place, and
// op_docs_drift_test fails when the checked-in blocks differ from what is generated now.
// Thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace stoker {

struct GeneratedBlock {
  std::string name;  // "op-table"
  // The whole block, marker lines included, ending in a newline.
  std::string text;
};

// "op-table" (OpSchemas(), in registry order) and "batch-op-table" (BatchOpSchemas()).
std::vector<GeneratedBlock> OpDocBlocks();

// `doc` with each block's lines, from its BEGIN marker line to its END marker line, replaced by
// the block. Errors: INVALID_ARGUMENT naming the block when its markers are missing, repeated or
// out of order.
absl::StatusOr<std::string> SpliceGeneratedBlocks(std::string_view doc,
                                                  const std::vector<GeneratedBlock>& blocks);

}  // namespace stoker

#endif  // STOKER_AUGMENT_OP_DOCS_H_
