#include "tests/testing/drain_loader.h"

namespace stoker {

absl::Status DrainLoader(Loader& loader, absl::FunctionRef<absl::Status(Batch&)> on_batch) {
  while (true) {
    absl::StatusOr<Batch> batch = loader.Next();
    if (batch.status().code() == absl::StatusCode::kOutOfRange) return absl::OkStatus();
    if (!batch.ok()) return batch.status();
    if (absl::Status status = on_batch(*batch); !status.ok()) return status;
  }
}

}  // namespace stoker
