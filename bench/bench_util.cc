#include "bench/bench_util.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "common/clock.h"

namespace stoker {
namespace bench {

double ItemsPerSecond(const std::function<void()>& item, absl::Duration length, TimeBase base) {
  auto now = [base] {
    return base == TimeBase::kWall ? Clock::Real()->Now() - absl::UnixEpoch() : ThreadCpuTime();
  };
  item();  // Warm-up: sizes buffers, faults pages in.
  const absl::Duration start = now();
  absl::Duration elapsed;
  int64_t items = 0;
  while (elapsed < length) {
    item();
    ++items;
    elapsed = now() - start;
  }
  return static_cast<double>(items) / absl::ToDoubleSeconds(elapsed);
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
    const absl::Duration start = ThreadCpuTime();  // a descheduled thread does not slow it
    for (int64_t b = 0; b < blocks; ++b) {
      asm volatile(".rept 1000\n\timulq %1, %0\n\t.endr" : "+r"(x) : "r"(factor));
    }
    const double hz = static_cast<double>(blocks * kMultipliesPerBlock) * kCyclesPerMultiply /
                      absl::ToDoubleSeconds(ThreadCpuTime() - start);
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
