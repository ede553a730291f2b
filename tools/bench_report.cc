#include "tools/bench_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/json_text.h"

namespace stoker {
namespace {

double PerSecond(double count, double seconds) { return seconds > 0 ? count / seconds : 0; }

}  // namespace

std::string FormatBenchReport(const BenchRun& run) {
  const LoaderStats& stats = run.stats;
  std::string out = absl::StrFormat(
      "job %s (id %d), rank %d of %d: %d batches, %d images in %.2f s\n", run.job_name, run.job_id,
      run.rank, run.world_size, run.batches, run.images, run.wall_seconds);
  absl::StrAppendFormat(&out, "  throughput  %.1f images/s, %.2f batches/s\n",
                        PerSecond(run.images, run.wall_seconds),
                        PerSecond(run.batches, run.wall_seconds));
  absl::StrAppendFormat(&out, "  data wait   %.1f%% of wall time (%.2f s blocked in Next)\n",
                        run.wall_seconds > 0 ? 100.0 * stats.wait_seconds / run.wall_seconds : 0,
                        stats.wait_seconds);
  absl::StrAppendFormat(&out, "  mean step   %.2f ms (simulated step %.2f ms)\n",
                        run.batches > 0 ? 1000.0 * stats.step_seconds / run.batches : 0,
                        absl::ToDoubleMilliseconds(run.step));
  absl::StrAppendFormat(&out, "  duplicates  %d dropped; %d stream failures\n",
                        stats.duplicates_dropped, stats.stream_failures);
  for (const WorkerReceiveStats& worker : stats.workers) {
    absl::StrAppendFormat(&out, "  worker %d (%s): %d batches, %.1f images/s\n", worker.worker_id,
                          worker.address.empty() ? "?" : worker.address, worker.batches,
                          PerSecond(worker.samples, run.wall_seconds));
  }
  return out;
}

std::string FormatBenchReportJson(const BenchRun& run) {
  const LoaderStats& stats = run.stats;
  std::string out = absl::StrFormat(
      "{\"job\":%s,\"job_id\":%d,\"rank\":%d,\"world_size\":%d,\"batches\":%d,\"images\":%d,"
      "\"wall_seconds\":%.6f,\"images_per_second\":%.3f,\"batches_per_second\":%.4f,"
      "\"data_wait_fraction\":%.6f,\"wait_seconds\":%.6f,\"mean_step_ms\":%.4f,"
      "\"step_ms\":%.4f,\"duplicates_dropped\":%d,\"stream_failures\":%d,"
      "\"corrupt_payloads\":%d,\"decode_seconds\":%.6f,\"steady_images\":%d,"
      "\"steady_cpu_seconds\":%.6f,\"workers\":[",
      JsonQuoted(run.job_name), run.job_id, run.rank, run.world_size, run.batches, run.images,
      run.wall_seconds, PerSecond(run.images, run.wall_seconds),
      PerSecond(run.batches, run.wall_seconds),
      run.wall_seconds > 0 ? stats.wait_seconds / run.wall_seconds : 0, stats.wait_seconds,
      run.batches > 0 ? 1000.0 * stats.step_seconds / run.batches : 0,
      absl::ToDoubleMilliseconds(run.step), stats.duplicates_dropped, stats.stream_failures,
      stats.corrupt_payloads, stats.decode_seconds, run.steady_images, run.steady_cpu_seconds);
  for (size_t i = 0; i < stats.workers.size(); ++i) {
    const WorkerReceiveStats& worker = stats.workers[i];
    absl::StrAppendFormat(&out,
                          "%s{\"worker_id\":%d,\"address\":%s,\"batches\":%d,\"images\":%d,"
                          "\"images_per_second\":%.3f,\"bytes\":%d,\"wire_bytes\":%d}",
                          i == 0 ? "" : ",", worker.worker_id, JsonQuoted(worker.address),
                          worker.batches, worker.samples,
                          PerSecond(worker.samples, run.wall_seconds), worker.bytes,
                          worker.wire_bytes);
  }
  return out + "]}";
}

std::string FormatIndicesLine(const Batch& batch, uint32_t rank) {
  return absl::StrCat("{\"epoch\":", batch.epoch(), ",\"rank\":", rank,
                      ",\"batch\":", batch.batch_index(), ",\"samples\":[",
                      absl::StrJoin(batch.sample_indices(), ","), "]}");
}

}  // namespace stoker
