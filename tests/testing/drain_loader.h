#ifndef STOKER_TESTS_TESTING_DRAIN_LOADER_H_
#define STOKER_TESTS_TESTING_DRAIN_LOADER_H_

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "trainer_client/batch.h"
#include "trainer_client/loader.h"

namespace stoker {

// Takes every batch `loader` still has, calling `on_batch` on each, until Next() reports the end
// of the data (OUT_OF_RANGE, which is OK here). Returns the first other error of Next() or the
// first non-OK status of `on_batch` (and stops there).
absl::Status DrainLoader(Loader& loader, absl::FunctionRef<absl::Status(Batch&)> on_batch);

}  // namespace stoker

#endif  // STOKER_TESTS_TESTING_DRAIN_LOADER_H_
