#ifndef STOKER_BENCH_BENCH_UTIL_H_
#define STOKER_BENCH_BENCH_UTIL_H_

// Helpers shared by the benchmarks: timing loops and the machine's measured clock.
// Not thread-safe beyond what each function says; benchmarks are single-threaded mains.

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace stoker {
namespace bench {

// What ItemsPerSecond's time is: the real clock's (Clock::Real()), or the calling thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID: what a core pays, less exposed to other processes on a shared
// machine than wall time, though not to their use of shared caches and memory).
enum class TimeBase { kWall, kThreadCpu };

// Calls `item` (which processes one image) repeatedly for about `length` (of `base`) after one
// warm-up call; returns items per second.
double ItemsPerSecond(const std::function<void()>& item, absl::Duration length,
                      TimeBase base = TimeBase::kWall);

// The core clock in Hz, measured with a chain of dependent 64-bit integer multiplies over about
// 0.2 s of the thread's CPU time (wall time read the clock low whenever other processes took the
// core, e.g. 1.7 GHz instead of 3.6 on a loaded 2-core machine). Each takes 3 cycles on every
// x86-64 core since Intel Core 2 and AMD Zen, and unlike a chain of immediate adds (which newer
// Intel cores fold, reading 5-7x the clock) no core shortens it. 0 where that cannot be measured
// (not x86-64).
double MeasuredClockHz();

// The clock the system reports, in Hz: /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq,
// else the first "cpu MHz" of /proc/cpuinfo; 0 when neither is there. For printing beside the
// measured one (VMs often report the nominal clock).
double ReportedClockHz();

// The first three fields of /proc/loadavg ("1.20 0.80 0.50"), "?" where it cannot be read: the
// benches on shared machines print it at their start and end.
std::string LoadAverage();

// Median of `values` (the mean of the middle two for an even count); 0 when empty.
double Median(std::vector<double> values);

}  // namespace bench
}  // namespace stoker

#endif  // STOKER_BENCH_BENCH_UTIL_H_
