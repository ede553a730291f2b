// scripts/bench.sh price: the advisor's dollars per epoch against measurement, the post's
// experiment in dollars. A GPU-like consumer (a fixed step per batch) demands about 1.5 producer
// threads' worth of the advisor's blur job (tests/testing/advisor_scenario.h: 20 blurs of
// 64x64x3, lighter than the post's ten 224x224 blurs so that it fits these 2 cores); for each
// worker count n it runs a fresh cluster with n one-thread workers for kRunSeconds, measures
// the samples/s the consumer took over the last kMeasureSeconds and prices them at the post's
// rates ($1.408/h a GPU node, $0.816/h a worker):
//   measured $/epoch(n) = (1.408 + n × 0.816) × samples_per_epoch / samples_per_second / 3600.
// The prediction for every n comes from the 1-worker run's advice (JobAdvice.predicted).
// Prints a table and
//   RESULT name=price predicted_1=... measured_1=... ratio_1=... predicted_2=... ...
//          max_error=E within_15pct=0|1

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "tests/testing/advisor_scenario.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

constexpr double kGpuDollarsPerHour = 1.408;
constexpr double kWorkerDollarsPerHour = 0.816;
constexpr int kMaxWorkers = 2;  // the machine's cores
constexpr absl::Duration kRunTime = absl::Seconds(12);
constexpr absl::Duration kMeasureTime = absl::Seconds(6);

struct Run {
  double samples_per_second = 0;  // what the consumer took, measured here
  v1::JobStatus status;           // the coordinator's view at the end
};

absl::StatusOr<Run> RunWith(int workers, absl::Duration step) {
  TestClusterOptions options;
  options.workers = workers;
  options.coordinator.advisor.prices.gpu_node_dollars_per_hour = kGpuDollarsPerHour;
  options.coordinator.advisor.prices.worker_dollars_per_hour = kWorkerDollarsPerHour;
  ASSIGN_OR_RETURN(std::unique_ptr<TestCluster> cluster, TestCluster::Start(options));
  LoaderOptions loader_options;
  loader_options.coordinator_address = cluster->coordinator_address();
  loader_options.tls = cluster->tls_for(Role::kTrainer);
  loader_options.job_name = absl::StrCat("price-", workers);
  loader_options.spec = AdvisorBlurJob();
  loader_options.heartbeat_interval = absl::Milliseconds(100);
  ASSIGN_OR_RETURN(std::unique_ptr<Loader> loader, Loader::Open(loader_options));
  const absl::Time start = absl::Now();
  const absl::Time measure_from = start + kRunTime - kMeasureTime;
  uint64_t measured_batches = 0;
  while (absl::Now() < start + kRunTime) {
    RETURN_IF_ERROR(loader->Next().status());
    absl::SleepFor(step);
    if (absl::Now() >= measure_from) ++measured_batches;
  }
  Run run;
  run.samples_per_second =
      measured_batches * kAdvisorBatchSize / absl::ToDoubleSeconds(absl::Now() - measure_from);
  run.status = cluster->coordinator()->coordinator()->GetStatus().jobs(0);
  loader->Stop();
  return run;
}

double DollarsPerEpoch(int workers, double samples_per_second, double samples_per_epoch) {
  return (kGpuDollarsPerHour + workers * kWorkerDollarsPerHour) * samples_per_epoch /
         samples_per_second / 3600;
}

int Main() {
  absl::StatusOr<double> capacity = MeasureProducerCapacity(AdvisorBlurJob());
  if (!capacity.ok()) {
    std::fprintf(stderr, "price_bench: %s\n", capacity.status().ToString().c_str());
    return 1;
  }
  const absl::Duration step = absl::Seconds(kAdvisorBatchSize / (1.5 * *capacity));
  std::printf("one producer thread: %.0f samples per CPU-second; consumer step %s\n", *capacity,
              absl::FormatDuration(step).c_str());
  std::map<int, Run> runs;
  for (int n = 1; n <= kMaxWorkers; ++n) {
    absl::StatusOr<Run> run = RunWith(n, step);
    if (!run.ok()) {
      std::fprintf(stderr, "price_bench: %d workers: %s\n", n, run.status().ToString().c_str());
      return 1;
    }
    runs[n] = *std::move(run);
  }
  const v1::JobStatus& base = runs[1].status;
  if (!base.advice().measured()) {
    std::fprintf(stderr, "price_bench: the 1-worker run has no measured advice: %s\n",
                 base.advice().explanation().c_str());
    return 1;
  }
  const double samples_per_epoch =
      static_cast<double>(base.batches_per_epoch_per_rank()) * base.batch_size();
  std::string result = "RESULT name=price";
  double max_error = 0;
  std::printf("%-7s %12s %12s %8s\n", "workers", "predicted $", "measured $", "ratio");
  for (const v1::WorkerCountCost& point : base.advice().predicted()) {
    const auto it = runs.find(static_cast<int>(point.workers()));
    if (it == runs.end()) continue;
    const double measured =
        DollarsPerEpoch(it->first, it->second.samples_per_second, samples_per_epoch);
    const double ratio = point.dollars_per_epoch() / measured;
    max_error = std::max(max_error, std::abs(ratio - 1));
    std::printf("%-7d %12.2f %12.2f %8.3f\n", it->first, point.dollars_per_epoch(), measured,
                ratio);
    absl::StrAppendFormat(&result, " predicted_%d=%.4f measured_%d=%.4f ratio_%d=%.3f", it->first,
                          point.dollars_per_epoch(), it->first, measured, it->first, ratio);
  }
  absl::StrAppendFormat(&result, " max_error=%.3f within_15pct=%d", max_error,
                        max_error <= 0.15 ? 1 : 0);
  std::printf("%s\n", result.c_str());
  return 0;
}

}  // namespace
}  // namespace stoker

int main() { return stoker::Main(); }
