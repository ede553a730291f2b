#include "bench/bench_util.h"

#include <chrono>
#include <cstdint>

namespace stoker {
namespace bench {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

double ItemsPerSecond(const std::function<void()>& item, double seconds) {
  item();  // Warm-up: sizes buffers, faults pages in.
  const double start = Now();
  double elapsed = 0;
  int64_t items = 0;
  while (elapsed < seconds) {
    item();
    ++items;
    elapsed = Now() - start;
  }
  return static_cast<double>(items) / elapsed;
}

double MeasuredClockHz() {
#if defined(__x86_64__)
  constexpr int64_t kAddsPerBlock = 1000;
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    const int64_t blocks = 40'000;
    uint64_t x = 0;
    const double start = Now();
    for (int64_t b = 0; b < blocks; ++b) {
      asm volatile(".rept 1000\n\taddq $1, %0\n\t.endr" : "+r"(x));
    }
    const double hz = static_cast<double>(blocks * kAddsPerBlock) / (Now() - start);
    if (hz > best) best = hz;
  }
  return best;
#else
  return 0;
#endif
}

}  // namespace bench
}  // namespace stoker
