// stoker-trace-check: checks that a file is a batch timeline in Chrome Trace Event format, as
// `stoker-ctl trace` writes it (trace/chrome_trace_validator.h), for tests and scripts:
//
//   stoker-trace-check trace.json
//
// Prints one line per process ("pid 2 worker 10.0.0.5:7000: 812 spans") and a total. Exit
// codes: 0 valid, 1 invalid or unreadable (the reason printed), 2 bad arguments.

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "trace/chrome_trace_validator.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: stoker-trace-check TRACE.json\n");
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "stoker-trace-check: cannot read %s\n", argv[1]);
    return 1;
  }
  std::stringstream text;
  text << file.rdbuf();
  const absl::StatusOr<stoker::trace::ChromeTraceSummary> summary =
      stoker::trace::ValidateChromeTrace(text.str());
  if (!summary.ok()) {
    std::fprintf(stderr, "stoker-trace-check: %s: %s\n", argv[1],
                 std::string(summary.status().message()).c_str());
    return 1;
  }
  long long spans = 0;
  for (const auto& [pid, name] : summary->process_names) {
    const auto it = summary->complete_events.find(pid);
    const long long count = it == summary->complete_events.end() ? 0 : it->second;
    spans += count;
    std::printf("pid %lld %s: %lld spans\n", static_cast<long long>(pid), name.c_str(), count);
  }
  std::printf("ok: %zu processes, %lld spans, %lld instants\n", summary->process_names.size(),
              spans, static_cast<long long>(summary->instant_events));
  return 0;
}
