// scripts/bench.sh trace-recorder: what one span costs the thread that records it
// (trace/span_recorder.h), tracing off, on for every task, and on for 1 in 64 tasks, against a
// control loop that makes the same task keys and records nothing. Alternating rounds of thread
// CPU time; prints `RESULT name=trace-recorder ...` with nanoseconds per span (medians).
//
// The budget it answers to (issue 26): tracing on costs <= 1% CPU per image, off costs nothing.
// A worker records ~15 spans per batch (of 64 images): at 1 ms per image, 1% is 640 us per
// batch, so spans must cost well under 40 us each.

#include <cstdio>
#include <vector>

#include "bench/bench_util.h"
#include "trace/span_recorder.h"

namespace stoker {
namespace {

constexpr int kSpansPerItem = 1000;

// Keeps `value` alive without a store the compiler could elide.
template <typename T>
void KeepAlive(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

double NanosPerSpan(const std::function<void()>& item) {
  const double items_per_second =
      bench::ItemsPerSecond(item, absl::Milliseconds(300), bench::TimeBase::kThreadCpu);
  return 1e9 / (items_per_second * kSpansPerItem);
}

void Run() {
  std::printf("load average at start: %s\n", bench::LoadAverage().c_str());
  trace::SpanRecorder recorder(trace::SpanRecorder::Options{});
  uint64_t batch = 0;
  const auto control_loop = [&] {
    for (int i = 0; i < kSpansPerItem; ++i) KeepAlive(trace::TaskKey{1, 0, ++batch});
  };
  const auto span_loop = [&] {
    for (int i = 0; i < kSpansPerItem; ++i) {
      trace::ScopedSpan span(&recorder, trace::Stage::kDecode, trace::TaskKey{1, 0, ++batch});
    }
  };
  std::vector<double> control_ns, off_ns, on_ns, one_in_64_ns;
  for (int round = 0; round < 5; ++round) {
    control_ns.push_back(NanosPerSpan(control_loop));
    recorder.SetSampling(0);
    off_ns.push_back(NanosPerSpan(span_loop));
    recorder.SetSampling(1);
    on_ns.push_back(NanosPerSpan(span_loop));
    recorder.SetSampling(64);
    one_in_64_ns.push_back(NanosPerSpan(span_loop));
    recorder.Drain(SIZE_MAX);
  }
  const double control = bench::Median(control_ns);
  const double off = bench::Median(off_ns);
  const double on = bench::Median(on_ns);
  const double one_in_64 = bench::Median(one_in_64_ns);
  std::printf("ns per span: control %.2f, off %.2f, on %.2f, 1 in 64 %.2f\n", control, off, on,
              one_in_64);
  std::printf("load average at end: %s\n", bench::LoadAverage().c_str());
  std::printf(
      "RESULT name=trace-recorder control_ns=%.2f off_ns=%.2f on_ns=%.2f one_in_64_ns=%.2f "
      "off_minus_control_ns=%.2f\n",
      control, off, on, one_in_64, off - control);
}

}  // namespace
}  // namespace stoker

int main() {
  stoker::Run();
  return 0;
}
