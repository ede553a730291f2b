#ifndef STOKER_BENCH_BENCH_UTIL_H_
#define STOKER_BENCH_BENCH_UTIL_H_

// Helpers shared by the benchmarks: timing loops and the machine's measured clock.
// Not thread-safe beyond what each function says; benchmarks are single-threaded mains.

#include <functional>

namespace stoker {
namespace bench {

// Calls `item` (which processes one image) repeatedly for about `seconds` after one warm-up
// call; returns items per second.
double ItemsPerSecond(const std::function<void()>& item, double seconds);

// The core clock in Hz, measured with a chain of dependent integer adds (one per cycle on
// current x86-64 cores) over about 0.2 s; 0 where that cannot be measured (not x86-64).
double MeasuredClockHz();

}  // namespace bench
}  // namespace stoker

#endif  // STOKER_BENCH_BENCH_UTIL_H_
