#include "common/read_wakeup_tuning.h"

#include <cstdlib>
#include <mutex>

namespace stoker {

void EnableGrpcReadExperiments() {
  static std::once_flag once;
  std::call_once(once, [] { setenv("GRPC_EXPERIMENTS", kGrpcReadExperiments, /*overwrite=*/0); });
}

}  // namespace stoker
