#include "tools/status_text.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/ids.h"
#include "common/tls/principal.h"

namespace stoker {
namespace {

std::string Millis(int64_t ms) {
  return ms < 10'000 ? absl::StrCat(ms, "ms") : absl::StrCat(ms / 1000, "s");
}

const char* StateName(stoker::v1::JobState state) {
  switch (state) {
    case stoker::v1::JOB_STATE_RUNNING:
      return "running";
    case stoker::v1::JOB_STATE_FINISHED:
      return "finished";
    default:
      return "unknown";
  }
}

double WorkerRate(const stoker::v1::WorkerStatus& worker) {
  double total = 0;
  for (const stoker::v1::JobRate& rate : worker.job_rates()) total += rate.samples_per_second();
  return total;
}

void AppendJob(const stoker::v1::JobStatus& job, std::string* out) {
  // The tenant only where there are tenants (the default tenant's jobs read as before).
  const std::string tenant = job.tenant().empty() || job.tenant() == kDefaultTenant
                                 ? ""
                                 : absl::StrCat(", tenant ", job.tenant());
  absl::StrAppend(out, "job ", job.name(), " (id ", ShortId(job.job_id()), tenant,
                  "): ", StateName(job.state()), ", batch ", job.batch_size(), ", ",
                  job.batches_per_epoch_per_rank(), " batches/epoch/rank, ", job.epochs(),
                  " epochs\n");
  if (job.ranks_size() > 0) {
    absl::StrAppend(out, absl::StrFormat("  %-5s %5s %9s %8s %9s  %s\n", "rank", "wait", "step",
                                         "batch/s", "delivered", "reported"));
  }
  for (const stoker::v1::RankStatus& rank : job.ranks()) {
    const stoker::v1::ClientStats& stats = rank.stats();
    absl::StrAppend(out,
                    absl::StrFormat("  %-5d %5s %7.1fms %8.1f %9d  %s ago\n", rank.rank(),
                                    RoundedPercent(stats.data_wait_fraction()),
                                    stats.step_seconds() * 1000, stats.batches_per_second(),
                                    stats.batches_delivered(), Millis(rank.last_report_age_ms())));
  }
  const stoker::v1::JobAdvice& advice = job.advice();
  const std::string headline =
      advice.measured() ? absl::StrCat("advice: ", advice.workers_desired(), " workers (",
                                       advice.workers_now(), " now): ", advice.explanation())
                        : absl::StrCat("advice: none yet, ", advice.explanation());
  absl::StrAppend(out, WrapText(headline, kTextWidth, "  "));
}

}  // namespace

std::string RoundedPercent(double fraction) {
  return absl::StrCat(std::llround(fraction * 100), "%");
}

std::string WrapText(const std::string& text, size_t width, const std::string& indent) {
  std::string out;
  std::string line = indent;
  bool line_has_words = false;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (line_has_words && line.size() + 1 + word.size() > width) {
      absl::StrAppend(&out, line, "\n");
      line = absl::StrCat(indent, "  ");  // Continuation lines are indented further.
      line_has_words = false;
    }
    absl::StrAppend(&line, line_has_words ? " " : "", word);
    line_has_words = true;
  }
  if (line_has_words) absl::StrAppend(&out, line, "\n");
  return out;
}

std::string FormatStatus(const stoker::v1::GetStatusResponse& status,
                         const std::string& coordinator) {
  std::string out =
      absl::StrCat("coordinator ", coordinator, ": ", status.jobs_size(),
                   status.jobs_size() == 1 ? " job, " : " jobs, ", status.workers_size(),
                   status.workers_size() == 1 ? " worker\n" : " workers\n");
  for (const stoker::v1::JobStatus& job : status.jobs()) {
    out += "\n";
    AppendJob(job, &out);
  }
  if (status.workers_size() > 0) {
    absl::StrAppend(&out, "\n",
                    absl::StrFormat("%-6s %-21s %5s %5s %9s %6s  %s\n", "worker", "address",
                                    "cores", "busy", "samples/s", "leases", "heartbeat"));
  }
  for (const stoker::v1::WorkerStatus& worker : status.workers()) {
    absl::StrAppend(&out,
                    absl::StrFormat("%-6s %-21s %5d %5s %9.0f %6d  %s ago\n",
                                    ShortId(worker.info().worker_id()), worker.info().address(),
                                    worker.info().cores(), RoundedPercent(worker.busy_fraction()),
                                    WorkerRate(worker), worker.leases_held(),
                                    Millis(worker.last_heartbeat_age_ms())));
  }
  return out;
}

}  // namespace stoker
