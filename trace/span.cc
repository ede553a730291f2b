#include "trace/span.h"

namespace stoker::trace {

absl::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kLeaseWait:
      return "lease_wait";
    case Stage::kShardRead:
      return "shard_read";
    case Stage::kCacheFetch:
      return "cache_fetch";
    case Stage::kDecode:
      return "decode";
    case Stage::kOp:
      return "op";
    case Stage::kOpGroup:
      return "op_group";
    case Stage::kTail:
      return "tail";
    case Stage::kEncode:
      return "encode";
    case Stage::kCompress:
      return "compress";
    case Stage::kQueue:
      return "queue";
    case Stage::kSend:
      return "send";
    case Stage::kDecodedCacheHit:
      return "decoded_cache_hit";
    case Stage::kReceive:
      return "receive";
    case Stage::kDecompress:
      return "decompress";
    case Stage::kBufferWait:
      return "buffer_wait";
    case Stage::kHandoff:
      return "handoff";
    case Stage::kH2D:
      return "h2d";
    case Stage::kConsumerStep:
      return "consumer_step";
    case Stage::kLeaseGranted:
      return "lease_granted";
    case Stage::kHedged:
      return "hedged";
    case Stage::kConsumedReport:
      return "consumed_report";
  }
  return "unknown";
}

int StageIndex(Stage stage) {
  for (int i = 0; i < kStageCount; ++i) {
    if (kAllStages[i] == stage) return i;
  }
  return -1;  // Unreachable for a Stage made by StageFromWire or a literal.
}

std::optional<Stage> StageFromWire(uint32_t value) {
  for (Stage stage : kAllStages) {
    if (static_cast<uint32_t>(stage) == value) return stage;
  }
  return std::nullopt;
}

Role StageRole(Stage stage) {
  const auto value = static_cast<uint8_t>(stage);
  if (value >= static_cast<uint8_t>(Stage::kLeaseGranted)) return Role::kCoordinator;
  if (value >= static_cast<uint8_t>(Stage::kReceive)) return Role::kClient;
  return Role::kWorker;
}

bool IsInstant(Stage stage) { return StageRole(stage) == Role::kCoordinator; }

}  // namespace stoker::trace
