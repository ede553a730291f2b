#ifndef STOKER_WIRE_TARGET_CHECK_H_
#define STOKER_WIRE_TARGET_CHECK_H_

// The typed target columns of a received batch (common/target_fields.h; their wire form is in
// augment/targets/target_codec.h), checked before a trainer sees them, so that a faulty or
// hostile worker cannot hand it a ragged tensor: every value a whole number of its elements, at
// most kMaxTargetInstances instances, and the columns of one sample agreeing on its instance
// count.

#include "absl/status/status.h"
#include "stoker/v1/worker.pb.h"
#include "wire/batch_payload.h"

namespace stoker {

// Checks each typed column of `header` over `payload`: a "boxes" value is a multiple of 16
// bytes, a "box_labels" value of 8, a "masks" value of the batch image's H × W (from the header's
// shape and layout), a "keypoints" value is empty or a u32 K (1..kMaxKeypointsPerInstance) then
// a multiple of 12 × K bytes, a "semantic_mask" value exactly H × W bytes (one label map, not tied
// to the boxes); at most kMaxTargetInstances instances each; "box_labels", "masks"
// and "keypoints" of a sample have as many instances as its "boxes" when the batch has both.
// DATA_LOSS naming the column and the sample ("header.fields[1] (\"boxes\") value 3: 20 bytes are
// not whole boxes of 16 bytes"). Reads the payload only for keypoints (gathering it when it
// arrived in chunks). REQUIRES: CheckBatchHeader(header, payload.size()) is OK.
absl::Status CheckTargetColumns(const v1::BatchHeader& header, const BatchPayload& payload);

}  // namespace stoker

#endif  // STOKER_WIRE_TARGET_CHECK_H_
