#ifndef STOKER_TOOLS_BENCH_REPORT_H_
#define STOKER_TOOLS_BENCH_REPORT_H_

// Formatting for stoker-bench-client: the human report, the --report-json document and the
// --dump-indices lines. Pure functions; thread-safe.

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "trainer_client/batch.h"
#include "trainer_client/loader.h"

namespace stoker {

// What one bench run measured.
struct BenchRun {
  std::string job_name;
  uint64_t job_id = 0;
  uint32_t rank = 0;
  uint32_t world_size = 1;
  uint64_t batches = 0;  // consumed by the loop
  uint64_t images = 0;
  double wall_seconds = 0;  // from the first Next to the end of the loop
  absl::Duration step;      // the simulated step (--step-ms)
  // After the first --warmup-batches batches (start-up, the first connections): the images
  // consumed and this process's CPU seconds (user + system) from there to the end of the loop.
  uint64_t steady_images = 0;
  double steady_cpu_seconds = 0;
  LoaderStats stats;
};

// A few lines: images/s, batches/s, data-wait % of wall time, mean step, duplicates dropped and
// one line per worker (batches, images/s).
std::string FormatBenchReport(const BenchRun& run);

// The same figures as one JSON object (no trailing newline).
std::string FormatBenchReportJson(const BenchRun& run);

// {"epoch":E,"rank":R,"batch":B,"samples":[...]} with B the global batch index (no newline).
std::string FormatIndicesLine(const Batch& batch, uint32_t rank);

}  // namespace stoker

#endif  // STOKER_TOOLS_BENCH_REPORT_H_
