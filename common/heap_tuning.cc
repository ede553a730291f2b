#include "common/heap_tuning.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "common/logging.h"

namespace stoker {

void RetainFreedHeapMemory() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) return;
    constexpr int kTrimThreshold = 1 << 30;
    if (mallopt(M_TRIM_THRESHOLD, kTrimThreshold) != 1) {
      STOKER_LOG(WARNING) << "mallopt(M_TRIM_THRESHOLD) failed; receiving may page-fault more";
    }
    // glibc's largest mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit): see the header.
    constexpr int kMmapThreshold = 32 << 20;
    if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) != 1) {
      STOKER_LOG(WARNING) << "mallopt(M_MMAP_THRESHOLD) failed; large batches may page-fault";
    }
  });
#endif
}

}  // namespace stoker
