// scripts/bench.sh price: the advisor's dollars per epoch against measurement, the post's
// experiment in dollars. A GPU-like consumer (a fixed step per batch) demands about 1.5 producer
// threads' worth of the advisor's blur job (tests/testing/advisor_scenario.h: 20 blurs of
// 64x64x3, lighter than the post's ten 224x224 blurs so that it fits these 2 cores); for each
// worker count n it runs a fresh cluster with n one-thread workers for kRunTime, measures
// the samples/s the consumer took over the last kMeasureTime and prices them at the post's
// rates ($1.408/h a GPU node, $0.816/h a worker):
//   measured $/epoch(n) = (1.408 + n × 0.816) × samples_per_epoch / samples_per_second / 3600.
// The prediction for every n comes from the 1-worker run's advice (JobAdvice.predicted).
// --max_workers (default 2, this VM's cores) and --demand (producer threads' worth, default 1.5)
// let a larger host run the curve across its knee, one core per worker.
// Beside each measurement, the host's idle CPU over the same seconds (/proc/stat): near 0, the
// machine, not the n workers, set the rate (the model assumes each worker brings its cores).
// Prints the 1-worker advice, a table and
//   RESULT name=price predicted_1=... measured_1=... ratio_1=... host_idle_1=... ...
//          max_error=E within_15pct=0|1

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/status_macros.h"
#include "tests/testing/advisor_scenario.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

constexpr double kGpuDollarsPerHour = 1.408;
constexpr double kWorkerDollarsPerHour = 0.816;
// The measured seconds are those the advice's figures cover (the workers' and ranks' last ~10
// s), so that the 1-worker prediction and the measurement see the same contention on a shared
// host; the first 4 s (streams opening, queues filling) are not measured.
constexpr absl::Duration kRunTime = absl::Seconds(14);
constexpr absl::Duration kMeasureTime = absl::Seconds(10);

struct Run {
  double samples_per_second = 0;  // what the consumer took, measured here
  double host_idle_fraction = 0;  // of the host's CPU time over the same seconds
  v1::JobStatus status;           // the coordinator's view at the end
};

// The host's CPU time so far, in clock ticks (/proc/stat's first line; zeros where unreadable).
struct HostCpu {
  double idle = 0;  // idle and iowait
  double total = 0;
};

HostCpu ReadHostCpu() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  stat >> cpu;
  HostCpu host;
  double ticks = 0;
  for (int field = 0; field < 8 && stat >> ticks; ++field) {
    host.total += ticks;
    if (field == 3 || field == 4) host.idle += ticks;
  }
  return host;
}

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
  Clock* const clock = Clock::Real();
  const absl::Time start = clock->Now();
  const absl::Time measure_from = start + kRunTime - kMeasureTime;
  uint64_t measured_batches = 0;
  HostCpu host_from;
  while (clock->Now() < start + kRunTime) {
    RETURN_IF_ERROR(loader->Next().status());
    clock->SleepFor(step);
    if (clock->Now() < measure_from) continue;
    if (measured_batches++ == 0) host_from = ReadHostCpu();
  }
  Run run;
  run.samples_per_second =
      measured_batches * kAdvisorBatchSize / absl::ToDoubleSeconds(clock->Now() - measure_from);
  const HostCpu host_to = ReadHostCpu();
  if (host_to.total > host_from.total) {
    run.host_idle_fraction = (host_to.idle - host_from.idle) / (host_to.total - host_from.total);
  }
  run.status = cluster->coordinator()->coordinator()->GetStatus().jobs(0);
  loader->Stop();
  return run;
}

double DollarsPerEpoch(int workers, double samples_per_second, double samples_per_epoch) {
  return (kGpuDollarsPerHour + workers * kWorkerDollarsPerHour) * samples_per_epoch /
         samples_per_second / 3600;
}

int Main(int argc, char** argv) {
  int64_t max_workers = 2;
  double demand = 1.5;
  FlagSet flags("price_bench", "The advisor's dollars per epoch against measurement.");
  flags.Add("max_workers", &max_workers, "Run 1..N one-thread workers (one core each)");
  flags.Add("demand", &demand, "The consumer's demand, in producer threads' worth");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (max_workers < 1 || max_workers > 64 || !(demand > 0)) {
    std::fprintf(stderr, "price_bench: max_workers must be 1..64 and demand > 0\n");
    return 2;
  }
  absl::StatusOr<double> capacity = MeasureProducerCapacity(AdvisorBlurJob());
  if (!capacity.ok()) {
    std::fprintf(stderr, "price_bench: %s\n", capacity.status().ToString().c_str());
    return 1;
  }
  const absl::Duration step = absl::Seconds(kAdvisorBatchSize / (demand * *capacity));
  std::printf("one producer thread: %.0f samples per CPU-second; consumer step %s\n", *capacity,
              absl::FormatDuration(step).c_str());
  std::map<int, Run> runs;
  for (int n = 1; n <= static_cast<int>(max_workers); ++n) {
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
  std::printf("advice with 1 worker: %s\n", base.advice().explanation().c_str());
  const double samples_per_epoch =
      static_cast<double>(base.batches_per_epoch_per_rank()) * base.batch_size();
  std::string result = "RESULT name=price";
  double max_error = 0;
  std::printf("%-7s %12s %12s %8s %10s\n", "workers", "predicted $", "measured $", "ratio",
              "host idle");
  for (const v1::WorkerCountCost& point : base.advice().predicted()) {
    const auto it = runs.find(static_cast<int>(point.workers()));
    if (it == runs.end()) continue;
    const double measured =
        DollarsPerEpoch(it->first, it->second.samples_per_second, samples_per_epoch);
    const double ratio = point.dollars_per_epoch() / measured;
    max_error = std::max(max_error, std::abs(ratio - 1));
    std::printf("%-7d %12.2f %12.2f %8.3f %9.0f%%\n", it->first, point.dollars_per_epoch(),
                measured, ratio, 100 * it->second.host_idle_fraction);
    absl::StrAppendFormat(&result,
                          " predicted_%d=%.4f measured_%d=%.4f ratio_%d=%.3f host_idle_%d=%.2f",
                          it->first, point.dollars_per_epoch(), it->first, measured, it->first,
                          ratio, it->first, it->second.host_idle_fraction);
  }
  absl::StrAppendFormat(&result, " max_error=%.3f within_15pct=%d", max_error,
                        max_error <= 0.15 ? 1 : 0);
  std::printf("%s\n", result.c_str());
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Main(argc, argv); }
