#include "bench/bench_util.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace stoker {
namespace bench {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double ThreadCpuNow() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

double ItemsPerSecond(const std::function<void()>& item, double seconds, TimeBase base) {
  const auto now = base == TimeBase::kWall ? &Now : &ThreadCpuNow;
  item();  // Warm-up: sizes buffers, faults pages in.
  const double start = now();
  double elapsed = 0;
  int64_t items = 0;
  while (elapsed < seconds) {
    item();
    ++items;
    elapsed = now() - start;
  }
  return static_cast<double>(items) / elapsed;
}

double MeasuredClockHz() {
#if defined(__x86_64__)
  constexpr int64_t kMultipliesPerBlock = 1000;
  constexpr double kCyclesPerMultiply = 3;
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    const int64_t blocks = 15'000;
    uint64_t x = 1;
    const uint64_t factor = 3;
    const double start = ThreadCpuNow();  // CPU time: a descheduled thread does not slow it
    for (int64_t b = 0; b < blocks; ++b) {
      asm volatile(".rept 1000\n\timulq %1, %0\n\t.endr" : "+r"(x) : "r"(factor));
    }
    const double hz = static_cast<double>(blocks * kMultipliesPerBlock) * kCyclesPerMultiply /
                      (ThreadCpuNow() - start);
    if (hz > best) best = hz;
  }
  return best;
#else
  return 0;
#endif
}

double ReportedClockHz() {
  std::ifstream max_freq("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (max_freq >> khz && khz > 0) return khz * 1e3;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return 0;
    return std::strtod(line.c_str() + colon + 1, nullptr) * 1e6;
  }
  return 0;
}

std::string LoadAverage() {
  std::ifstream loadavg("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(loadavg >> one >> five >> fifteen)) return "?";
  return one + " " + five + " " + fifteen;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace bench
}  // namespace stoker
