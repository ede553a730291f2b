// Protocol benchmarks (DESIGN.md §9; scripts/bench.sh cluster | straggler | data-wait):
// a real coordinator, real workers and a real trainer client over gRPC on loopback in one
// process (TestCluster), with simulated production (worker/simulated_batch.h): each worker's
// single producer thread emits a ready batch of the job's shape every `period`, so the
// figures measure leasing, credit, balancing and streaming, not the blur.
//
//   --mode=cluster    K workers for K in --workers: delivered batches/s vs K x the K=1 rate
//                     measured in the same run (scaling_efficiency_K).
//   --mode=straggler  4 workers, one at 1/--slow-factor speed: delivered / sum of the workers'
//                     rates (straggler_efficiency), over several epoch boundaries; and, in
//                     alternating rounds, the same with credit balancing off (the negative
//                     control: straggler_efficiency_balancing_off must come out lower).
//   --mode=data-wait  a consumer with a fixed step time; the workers' capacity is --capacity x
//                     its demand: the consumer's data-wait fraction (data_wait_fraction); and,
//                     in alternating rounds, at 0.9x demand (the negative control: about 0.10).
// The producers sleep for their batch time (simulated_batch.h): they measure the protocol, not
// a CPU-bound worker sharing the client's cores.
// Each mode ends with its RESULT line.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "common/flags.h"
#include "common/logging.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

struct Shape {
  uint32_t batch_size = 16;
  uint32_t height = 16;
  uint32_t width = 16;
};

pb::JobSpec SimulatedJob(const Shape& shape, uint64_t batches_per_epoch, uint32_t epochs) {
  pb::JobSpec spec;
  auto* synthetic = spec.mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(batches_per_epoch * shape.batch_size);
  synthetic->set_height(shape.height);
  synthetic->set_width(shape.width);
  synthetic->set_channels(3);
  synthetic->set_num_classes(1000);
  // No ops: the batch is the source's uint8 HWC images (what ships on the wire, DESIGN §9).
  spec.set_batch_size(shape.batch_size);
  spec.set_seed(1);
  spec.set_shuffle(pb::SHUFFLE_MODE_NONE);
  spec.set_world_size(1);
  spec.set_epochs(epochs);
  spec.set_drop_last(true);
  return spec;
}

struct Run {
  std::vector<absl::Duration> periods;  // one per worker
  pb::JobSpec spec;
  uint64_t prefetch_batches = 64;
  absl::Duration warmup = absl::Seconds(1.5);
  absl::Duration measure = absl::Seconds(4);
  absl::Duration step = absl::ZeroDuration();  // consumer's step time per batch
  bool balance = true;  // LoaderOptions::balance_credit (false: the negative control)
};

struct Measured {
  double batches_per_second = 0;
  double bytes_per_second = 0;
  double data_wait_fraction = 0;
  uint64_t batch_bytes = 0;
  LoaderStats stats;  // at the end of the window
};

absl::StatusOr<Measured> Measure(const Run& run, const std::string& job_name) {
  TestClusterOptions options;
  options.workers = static_cast<int>(run.periods.size());
  options.threads_per_worker = 1;
  options.insecure = true;  // Plaintext loopback, as the other benches.
  options.coordinator.lease_duration = absl::Minutes(10);
  options.configure_worker = [&run](size_t index, WorkerConfig* config) {
    config->simulate_batch_period = run.periods[index];
  };
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster = TestCluster::Start(options);
  if (!cluster.ok()) return cluster.status();
  // Without ops the batch is uint8 HWC: batch_size x height x width x 3 bytes.
  const pb::SyntheticSource& source = run.spec.dataset().synthetic();
  const uint64_t batch_bytes =
      uint64_t{run.spec.batch_size()} * source.height() * source.width() * source.channels();
  LoaderOptions loader_options;
  loader_options.coordinator_address = (*cluster)->coordinator_address();
  loader_options.tls = (*cluster)->tls_for(Role::kTrainer);
  loader_options.job_name = job_name;
  loader_options.spec = run.spec;
  loader_options.prefetch_bytes = run.prefetch_batches * batch_bytes;
  loader_options.balance_credit = run.balance;
  absl::StatusOr<std::unique_ptr<Loader>> loader = Loader::Open(loader_options);
  if (!loader.ok()) return loader.status();
  if ((*loader)->batch_bytes() != batch_bytes) {
    return absl::InternalError(absl::StrCat("batch_bytes: expected ", batch_bytes, ", the job has ",
                                            (*loader)->batch_bytes()));
  }

  const absl::Time start = absl::Now();
  const absl::Time window_start = start + run.warmup;
  const absl::Time window_end = window_start + run.measure;
  std::optional<LoaderStats> first;
  absl::Time first_at;
  Measured result;
  result.batch_bytes = batch_bytes;
  while (true) {
    absl::StatusOr<Batch> batch = (*loader)->Next();
    if (!batch.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the job ran out or failed before the window ended (make it longer): ",
                       batch.status().ToString()));
    }
    const absl::Time now = absl::Now();
    if (!first.has_value() && now >= window_start) {
      first = (*loader)->stats();
      first_at = now;
    }
    if (now >= window_end) {
      const LoaderStats last = (*loader)->stats();
      const double seconds = absl::ToDoubleSeconds(now - first_at);
      const uint64_t batches = last.batches_delivered - first->batches_delivered;
      result.batches_per_second = static_cast<double>(batches) / seconds;
      result.bytes_per_second = result.batches_per_second * static_cast<double>(batch_bytes);
      const double wait = last.wait_seconds - first->wait_seconds;
      const double step = last.step_seconds - first->step_seconds;
      result.data_wait_fraction = wait + step > 0 ? wait / (wait + step) : 0;
      result.stats = last;
      break;
    }
    if (run.step > absl::ZeroDuration()) absl::SleepFor(run.step);
  }
  (*loader)->Stop();
  (*cluster)->Stop();
  return result;
}

void PrintWorkers(const Measured& measured) {
  for (const WorkerReceiveStats& worker : measured.stats.workers) {
    std::printf("    worker %llu: %llu batches, share now %u\n",
                static_cast<unsigned long long>(worker.worker_id),
                static_cast<unsigned long long>(worker.batches), worker.share);
  }
}

// Rounds of the modes with a negative control (straggler, data-wait); medians count.
constexpr int kRounds = 3;

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "cluster_bench: %s\n", status.ToString().c_str());
  return 1;
}

int ClusterMode(const std::vector<int>& ks, double period_ms, double seconds) {
  const absl::Duration period = absl::Microseconds(static_cast<int64_t>(period_ms * 1000));
  std::printf(
      "cluster: simulated workers, one batch per %.1f ms each (16 x 16x16x3 uint8 = "
      "12 KB batches); %.1f s window after 1.5 s warm-up\n",
      period_ms, seconds);
  double single = 0;
  std::string result = "RESULT name=cluster";
  for (int k : ks) {
    Run run;
    run.periods.assign(k, period);
    const double ideal = k * 1000.0 / period_ms;
    const uint64_t batches = static_cast<uint64_t>(ideal * (seconds + 4)) + 200;
    run.spec = SimulatedJob(Shape{}, batches, 1);
    run.prefetch_batches = 4 * static_cast<uint64_t>(k) + 16;
    run.measure = absl::Seconds(seconds);
    absl::StatusOr<Measured> measured = Measure(run, absl::StrCat("cluster-", k));
    if (!measured.ok()) return Fail(measured.status());
    if (k == ks.front()) single = measured->batches_per_second / k;
    const double efficiency = measured->batches_per_second / (k * single);
    std::printf(
        "  K=%2d: %8.1f batches/s delivered (nominal %7.1f); K x single-worker rate "
        "%8.1f; efficiency %.3f\n",
        k, measured->batches_per_second, ideal, k * single, efficiency);
    std::fflush(stdout);
    absl::StrAppend(&result, " batches_per_s_", k, "=",
                    absl::SixDigits(measured->batches_per_second), " scaling_efficiency_", k, "=",
                    absl::SixDigits(efficiency));
  }
  std::printf("%s\n", result.c_str());
  return 0;
}

int StragglerMode(double period_ms, double slow_factor, double seconds) {
  const absl::Duration period = absl::Microseconds(static_cast<int64_t>(period_ms * 1000));
  Run run;
  run.periods = {period, period, period, period * slow_factor};
  const double sum_rates = (3 + 1 / slow_factor) * 1000.0 / period_ms;
  // Epochs of ~4 s, so that the window crosses several epoch boundaries.
  const uint64_t per_epoch = static_cast<uint64_t>(sum_rates * 4);
  const double total_seconds = seconds + 4;
  const uint32_t epochs = static_cast<uint32_t>(total_seconds * sum_rates / per_epoch) + 2;
  run.spec = SimulatedJob(Shape{}, per_epoch, epochs);
  run.prefetch_batches = 32;
  run.warmup = absl::Seconds(2);
  run.measure = absl::Seconds(seconds);
  std::printf(
      "straggler: 4 simulated workers at %.1f ms per batch, one at %.1fx that; epochs "
      "of %llu batches; %.1f s window\n",
      period_ms, slow_factor, static_cast<unsigned long long>(per_epoch), seconds);
  // Alternating rounds, balancing on and off (the negative control: even shares leave the slow
  // worker a full share of the credit); medians count.
  std::vector<double> on, off;
  for (int round = 0; round < kRounds; ++round) {
    for (bool balance : {true, false}) {
      run.balance = balance;
      absl::StatusOr<Measured> measured = Measure(run, absl::StrCat("straggler-", round, balance));
      if (!measured.ok()) return Fail(measured.status());
      const double efficiency = measured->batches_per_second / sum_rates;
      (balance ? on : off).push_back(efficiency);
      std::printf(
          "  round %d, balancing %s: delivered %.1f batches/s; sum of worker rates %.1f; "
          "efficiency %.3f; overdue reported %llu\n",
          round + 1, balance ? "on " : "off", measured->batches_per_second, sum_rates, efficiency,
          static_cast<unsigned long long>(measured->stats.overdue_reported));
      PrintWorkers(*measured);
      std::fflush(stdout);
    }
  }
  const double efficiency = bench::Median(on), unbalanced = bench::Median(off);
  std::printf(
      "RESULT name=straggler sum_of_rates=%.1f straggler_efficiency=%.4f "
      "straggler_efficiency_balancing_off=%.4f\n",
      sum_rates, efficiency, unbalanced);
  return 0;
}

absl::StatusOr<Measured> MeasureDataWait(double step_ms, double capacity, double seconds) {
  Run run;
  run.step = absl::Microseconds(static_cast<int64_t>(step_ms * 1000));
  // 4 workers whose rates sum to capacity x the consumer's demand (1 / step).
  const double worker_period_ms = 4 * step_ms / capacity;
  run.periods.assign(4, absl::Microseconds(static_cast<int64_t>(worker_period_ms * 1000)));
  const double demand = 1000.0 / step_ms;
  const uint64_t per_epoch = static_cast<uint64_t>(demand * 4);  // ~4 s epochs
  const uint32_t epochs = static_cast<uint32_t>((seconds + 4) * demand / per_epoch) + 2;
  run.spec = SimulatedJob(Shape{}, per_epoch, epochs);
  run.prefetch_batches = 32;
  run.warmup = absl::Seconds(2);
  run.measure = absl::Seconds(seconds);
  absl::StatusOr<Measured> measured = Measure(run, absl::StrCat("data-wait-", capacity));
  if (!measured.ok()) return measured.status();
  std::printf(
      "  capacity %.2fx demand (4 workers at %.1f ms per batch): delivered %.1f batches/s; "
      "data wait %.4f of the consumer's time\n",
      capacity, worker_period_ms, measured->batches_per_second, measured->data_wait_fraction);
  PrintWorkers(*measured);
  std::fflush(stdout);
  return measured;
}

// The consumer's data wait with the workers' capacity at --capacity x its demand, and, in
// alternating rounds of the same run, the negative control at 0.9x (wait ~ 1 - 0.9 = 10%).
int DataWaitMode(double step_ms, double capacity, double seconds) {
  constexpr double kShortCapacity = 0.9;
  const double demand = 1000.0 / step_ms;
  std::printf("data-wait: consumer step %.1f ms (demand %.1f batches/s); %.1f s windows\n", step_ms,
              demand, seconds);
  std::vector<double> enough, short_of;
  for (int round = 0; round < kRounds; ++round) {
    for (double c : {capacity, kShortCapacity}) {
      absl::StatusOr<Measured> measured = MeasureDataWait(step_ms, c, seconds);
      if (!measured.ok()) return Fail(measured.status());
      (c == capacity ? enough : short_of).push_back(measured->data_wait_fraction);
    }
  }
  std::printf(
      "RESULT name=data-wait demand_batches_per_s=%.1f capacity=%.2f data_wait_fraction=%.4f "
      "data_wait_fraction_capacity_0_9=%.4f\n",
      demand, capacity, bench::Median(enough), bench::Median(short_of));
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) {
  std::string mode = "cluster";
  std::string workers = "1,2,4,8,16,32";
  double period_ms = 40;
  double seconds = 4;
  double slow_factor = 4;
  double step_ms = 20;
  double capacity = 1.1;
  stoker::FlagSet flags("cluster_bench", "Stoker protocol benchmarks on simulated workers.");
  flags.Add("mode", &mode, "cluster | straggler | data-wait");
  flags.Add("workers", &workers, "cluster: comma-separated worker counts");
  flags.Add("period-ms", &period_ms, "cluster, straggler: ms per batch of a (fast) worker");
  flags.Add("seconds", &seconds, "length of the measured window (per K for cluster)");
  flags.Add("slow-factor", &slow_factor, "straggler: the slow worker takes this many periods");
  flags.Add("step-ms", &step_ms, "data-wait: the consumer's step time");
  flags.Add("capacity", &capacity, "data-wait: the workers' capacity / the consumer's demand");
  stoker::LogFlags log_flags;
  log_flags.AddTo(&flags);
  // Quiet unless STOKER_LOG_LEVEL says otherwise: the coordinator logs backup leases at INFO.
  if (std::getenv("STOKER_LOG_LEVEL") == nullptr) {
    stoker::SetMinLogLevel(stoker::LogLevel::kWarning);
  }
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (absl::Status status = log_flags.Apply(); !status.ok()) return flags.Fail(status);
  if (mode == "cluster") {
    std::vector<int> ks;
    for (absl::string_view part : absl::StrSplit(workers, ',')) {
      int k = 0;
      if (!absl::SimpleAtoi(part, &k) || k < 1 || k > 256) {
        return flags.Fail(absl::InvalidArgumentError(
            absl::StrCat("workers: expected counts in 1..256, got '", part, "'")));
      }
      ks.push_back(k);
    }
    return stoker::ClusterMode(ks, period_ms, seconds);
  }
  if (mode == "straggler") return stoker::StragglerMode(period_ms, slow_factor, seconds);
  if (mode == "data-wait") return stoker::DataWaitMode(step_ms, capacity, seconds);
  return flags.Fail(absl::InvalidArgumentError(
      absl::StrCat("mode: expected cluster, straggler or data-wait, got '", mode, "'")));
}
