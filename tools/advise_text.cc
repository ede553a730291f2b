#include "tools/advise_text.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "tools/status_text.h"

namespace stoker {
namespace {

// 1234567 → "1.23M", 12345 → "12.3k", 950 → "950".
std::string Short(double value) {
  if (value >= 1e6) return absl::StrFormat("%.3gM", value / 1e6);
  if (value >= 1e4) return absl::StrFormat("%.3gk", value / 1e3);
  return absl::StrFormat("%.0f", value);
}

// 0.1 → "0.1s", 4000 → "1h6m40s"; 0 (nothing delivered) → "-".
std::string Epoch(double seconds) {
  if (seconds <= 0) return "-";
  if (seconds < 60) return absl::StrFormat("%.3gs", seconds);
  return absl::FormatDuration(absl::Seconds(std::llround(seconds)));
}

// One letter per mark, so that a count that is all four still fits kTextWidth; kMarkLegend says
// what they mean under the table.
constexpr absl::string_view kMarkLegend =
    "  mark: N now, K knee (fewest with no wait), C cheapest, A advised\n";
std::string Marks(const stoker::v1::JobAdvice& advice, uint32_t workers) {
  std::string marks;
  if (workers == advice.workers_now()) marks += 'N';
  if (workers == advice.knee_workers()) marks += 'K';
  if (workers == advice.cheapest_workers()) marks += 'C';
  if (workers == advice.workers_desired()) marks += 'A';
  return marks;
}

std::string Row(const std::string& label, const stoker::v1::WorkerCountCost& point,
                const std::string& marks) {
  return absl::StrCat(
      absl::StrFormat("  %-7s %9.0f %5s %8.2f %9s %8.2f %8.3f %9s", label,
                      point.samples_per_second(), RoundedPercent(point.data_wait_fraction()),
                      point.dollars_per_hour(), Epoch(point.epoch_seconds()),
                      point.dollars_per_epoch(), point.gpu_hours_lost_per_epoch(),
                      Short(point.samples_per_dollar())),
      marks.empty() ? "" : "  ", marks, "\n");
}

void AppendJobAdvice(const stoker::v1::JobStatus& job, std::string* out) {
  const stoker::v1::JobAdvice& advice = job.advice();
  absl::StrAppend(out, "job ", job.name(), " (id ", ShortId(job.job_id()),
                  "): ", advice.workers_now(), " workers now, ", advice.workers_desired(),
                  " advised\n");
  absl::StrAppend(out, WrapText(advice.explanation(), kTextWidth, "  "));
  if (!advice.measured()) return;
  absl::StrAppend(
      out, absl::StrFormat("  %-7s %9s %5s %8s %9s %8s %8s %9s  mark\n", "workers", "samples/s",
                           "wait", "$/hour", "epoch", "$/epoch", "GPU-h/ep", "samples/$"));
  absl::StrAppend(out, Row(absl::StrCat("now ", advice.now().workers()), advice.now(), ""));
  for (const stoker::v1::WorkerCountCost& point : advice.predicted()) {
    absl::StrAppend(out, Row(absl::StrCat(point.workers()), point, Marks(advice, point.workers())));
  }
  absl::StrAppend(out, kMarkLegend);
}

}  // namespace

std::string FormatAdvice(const stoker::v1::GetStatusResponse& status,
                         const std::string& coordinator) {
  const stoker::v1::ClusterCost& cluster = status.cluster();
  std::string out = absl::StrFormat(
      "coordinator %s: %d workers now, %d wanted by the running jobs\n"
      "cluster: %.0f samples/s, $%.2f/hour, %s samples/$, %.2f GPU-hours lost per hour\n",
      coordinator, cluster.workers_now(), cluster.workers_desired(), cluster.samples_per_second(),
      cluster.dollars_per_hour(), Short(cluster.samples_per_dollar()),
      cluster.gpu_hours_lost_per_hour());
  for (const stoker::v1::JobStatus& job : status.jobs()) {
    out += "\n";
    AppendJobAdvice(job, &out);
  }
  return out;
}

stoker::v1::GetStatusResponse AdviceOnly(const stoker::v1::GetStatusResponse& status) {
  stoker::v1::GetStatusResponse out;
  *out.mutable_cluster() = status.cluster();
  for (const stoker::v1::JobStatus& job : status.jobs()) {
    stoker::v1::JobStatus* trimmed = out.add_jobs();
    trimmed->set_job_id(job.job_id());
    trimmed->set_name(job.name());
    trimmed->set_state(job.state());
    *trimmed->mutable_advice() = job.advice();
  }
  return out;
}

}  // namespace stoker
