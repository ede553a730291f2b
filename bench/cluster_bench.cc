// Protocol benchmarks (bench/README.md; scripts/bench.sh cluster | straggler | data-wait):
// a real coordinator, real workers and a real trainer client over gRPC on loopback in one
// process (TestCluster), with simulated production (worker/simulated_batch.h): each worker's
// single producer thread emits a batch of the job's shape every `period` at most.
//
// How the producers spend that period (--simulate-batch-mode):
//   burn   (the default) each producer thread spends part of every period as its own CPU time
//          writing the payload, then waits out the rest; the parts add up to --producer-cores
//          cores when every producer runs at its nominal rate (one batch per period). So the
//          producers compete with the coordinator, the workers' gRPC and the client for the
//          machine's cores as real producers would, while their total demand stays below the
//          cores (a 2-core machine cannot host 32 CPU-bound producers: each stands for a worker
//          machine of which only this part of the CPU lands here).
//   sleep  the producer threads wait: no CPU, so the figures isolate the protocol.
//
//   --mode=cluster    K workers for K in --workers: delivered batches/s vs the sum of the
//                     producers' nominal rates (K / period; scaling_efficiency_K), the process's
//                     cores in use and its CPU per batch beside the producers' burn; --rounds
//                     alternating rounds, medians. Negative control (burn mode), in each round:
//                     the largest K with the producers asking for 1.5x the machine's cores: the
//                     efficiency must read at most ~0.67 (cores / demand), which it could not if
//                     the burn did not compete for cores.
//   --mode=straggler  4 workers, one at 1/--slow-factor speed: delivered / sum of the workers'
//                     rates (straggler_efficiency), over several epoch boundaries; and, in
//                     alternating rounds, the same with credit balancing off (the negative
//                     control: straggler_efficiency_balancing_off must come out lower).
//   --mode=data-wait  a consumer with a fixed step time; the workers' capacity is --capacity x
//                     its demand: the consumer's data-wait fraction (data_wait_fraction); and,
//                     in alternating rounds, at 0.9x demand (the negative control: about 0.10).
// Each mode prints the producers' mode and the load average at its start and end, and ends with
// its RESULT line.

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "bench/bench_util.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/logging.h"
#include "tests/testing/test_cluster.h"
#include "trainer_client/loader.h"
#include "worker/simulated_batch.h"

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
  // No ops: the batch is the source's uint8 HWC images (what ships on the wire).
  spec.set_batch_size(shape.batch_size);
  spec.set_seed(1);
  spec.set_shuffle(pb::SHUFFLE_MODE_NONE);
  spec.set_world_size(1);
  spec.set_epochs(epochs);
  spec.set_drop_last(true);
  return spec;
}

// How the simulated producers spend their batch time (--simulate-batch-mode, --producer-cores).
struct Producers {
  SimulatedBatchMode mode = SimulatedBatchMode::kBurn;
  double cores = 0.5;  // burn: the CPU all producers burn together at their nominal rates

  // The fraction of its period that each of `workers` producers burns.
  double BurnFraction(size_t workers) const {
    return mode == SimulatedBatchMode::kBurn ? cores / static_cast<double>(workers) : 0;
  }
  std::string Describe() const {
    if (mode == SimulatedBatchMode::kSleep) return "producers sleep for their batch time (no CPU)";
    return absl::StrCat("producers burn CPU for ", absl::SixDigits(cores),
                        " cores in all at their nominal rates (writing the payload)");
  }
};

// What every mode is run with.
struct Common {
  Producers producers;
  absl::Duration window = absl::Seconds(4);  // the measured window (per run)
  uint32_t rounds = 3;                       // alternating rounds; medians count
};

// " producer_cores=X" for burning producers, "" for sleeping ones: for the RESULT lines.
std::string ProducerCoresKey(const Producers& producers) {
  if (producers.mode != SimulatedBatchMode::kBurn) return "";
  return absl::StrCat(" producer_cores=", absl::SixDigits(producers.cores));
}

// CPU seconds (user + system) of this process so far.
double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Run {
  std::vector<absl::Duration> periods;  // one per worker
  SimulatedBatchMode mode = SimulatedBatchMode::kSleep;
  double burn_fraction = 0;  // burn: of each worker's period, as its producer's CPU time
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
  double process_cores = 0;  // this process's CPU seconds per second over the window
  uint64_t batch_bytes = 0;
  LoaderStats stats;  // at the end of the window
};

// The consumer's training step: a sleep of `step`, less what the earlier ones overslept (a
// loaded machine wakes a sleeper late), so that over a run the steps average `step` and the
// consumer's demand stays 1 / step. Thread-compatible.
class ConsumerStep {
 public:
  ConsumerStep(absl::Duration step, Clock* clock) : step_(step), clock_(clock) {}
  void Take() {
    const absl::Duration target = step_ - overslept_;  // <= 0: still paying off a late wake-up
    const absl::Time start = clock_->Now();
    if (target > absl::ZeroDuration()) clock_->SleepFor(target);
    overslept_ = (clock_->Now() - start) - target;
  }

 private:
  const absl::Duration step_;
  Clock* const clock_;
  absl::Duration overslept_;
};

absl::StatusOr<Measured> Measure(const Run& run, const std::string& job_name) {
  TestClusterOptions options;
  options.workers = static_cast<int>(run.periods.size());
  options.threads_per_worker = 1;
  options.insecure = true;  // Plaintext loopback, as the other benches.
  options.coordinator.lease_duration = absl::Minutes(10);
  options.configure_worker = [&run](size_t index, WorkerConfig* config) {
    config->simulate_batch_period = run.periods[index];
    config->simulate_batch_mode = run.mode;
    if (run.mode == SimulatedBatchMode::kBurn) {
      config->simulate_batch_cpu = run.periods[index] * run.burn_fraction;
    }
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

  Clock* const clock = Clock::Real();
  const absl::Time start = clock->Now();
  const absl::Time window_start = start + run.warmup;
  const absl::Time window_end = window_start + run.measure;
  std::optional<LoaderStats> first;
  absl::Time first_at;
  double first_cpu = 0;
  ConsumerStep step(run.step, clock);
  Measured result;
  result.batch_bytes = batch_bytes;
  while (true) {
    absl::StatusOr<Batch> batch = (*loader)->Next();
    if (!batch.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the job ran out or failed before the window ended (make it longer): ",
                       batch.status().ToString()));
    }
    const absl::Time now = clock->Now();
    if (!first.has_value() && now >= window_start) {
      first = (*loader)->stats();
      first_at = now;
      first_cpu = ProcessCpuSeconds();
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
      result.process_cores = (ProcessCpuSeconds() - first_cpu) / seconds;
      result.stats = last;
      break;
    }
    if (run.step > absl::ZeroDuration()) step.Take();
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

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "cluster_bench: %s\n", status.ToString().c_str());
  return 1;
}

// One K of the cluster mode: K workers at one batch per `period` each.
absl::StatusOr<Measured> MeasureCluster(int k, const Producers& producers, absl::Duration period,
                                        absl::Duration window, const std::string& job_name) {
  Run run;
  run.periods.assign(k, period);
  run.mode = producers.mode;
  run.burn_fraction = std::min(1.0, producers.BurnFraction(k));
  const double nominal = k / absl::ToDoubleSeconds(period);
  const uint64_t batches =
      static_cast<uint64_t>(nominal * absl::ToDoubleSeconds(window + absl::Seconds(4))) + 200;
  run.spec = SimulatedJob(Shape{}, batches, 1);
  run.prefetch_batches = 4 * static_cast<uint64_t>(k) + 16;
  run.measure = window;
  return Measure(run, job_name);
}

// The figures of one cluster run; returns the efficiency (delivered / nominal).
struct ClusterFigures {
  double efficiency = 0;
  double other_cpu_us_per_batch = 0;  // process CPU per batch beyond the producers' burn
};

ClusterFigures PrintCluster(const char* label, int k, const Measured& measured, double nominal,
                            absl::Duration burn_per_batch) {
  ClusterFigures figures;
  figures.efficiency = measured.batches_per_second / nominal;
  const double burn_cores = measured.batches_per_second * absl::ToDoubleSeconds(burn_per_batch);
  figures.other_cpu_us_per_batch =
      (measured.process_cores - burn_cores) / measured.batches_per_second * 1e6;
  std::printf(
      "  %sK=%2d: %7.1f batches/s of %7.1f nominal: efficiency %.3f; process %.2f cores, of "
      "which producers' burn %.2f; the rest %.0f us CPU per batch\n",
      label, k, measured.batches_per_second, nominal, figures.efficiency, measured.process_cores,
      burn_cores, figures.other_cpu_us_per_batch);
  std::fflush(stdout);
  return figures;
}

int ClusterMode(const std::vector<int>& ks, absl::Duration period, const Common& common) {
  const Producers& producers = common.producers;
  const double per_second = 1 / absl::ToDoubleSeconds(period);  // one worker's nominal rate
  const int rounds = static_cast<int>(common.rounds);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int k_max = *std::max_element(ks.begin(), ks.end());
  // The negative control: the producers ask for 1.5x the machine's cores.
  const Producers overloaded{SimulatedBatchMode::kBurn, 1.5 * cores};
  const bool control = producers.mode == SimulatedBatchMode::kBurn;
  std::printf(
      "cluster: simulated workers, one batch per %.1f ms each at most (16 x 16x16x3 uint8 = "
      "12 KB batches); %s; %.1f s window after 1.5 s warm-up; %d alternating rounds; %u cores; "
      "load average %s\n",
      absl::ToDoubleMilliseconds(period), producers.Describe().c_str(),
      absl::ToDoubleSeconds(common.window), rounds, cores, bench::LoadAverage().c_str());
  if (control) {
    std::printf("  control: K=%d, where %s (efficiency at most ~%.2f expected)\n", k_max,
                overloaded.Describe().c_str(), cores / overloaded.cores);
  } else {
    std::printf(
        "  no negative control: sleeping producers use no CPU, so the figure isolates the "
        "protocol and reads ~1 unless the protocol itself falls behind\n");
  }
  std::map<int, std::vector<double>> efficiency, rate, other_us;
  std::vector<double> overloaded_efficiency;
  for (int round = 1; round <= rounds; ++round) {
    std::printf(" round %d\n", round);
    for (int k : ks) {
      absl::StatusOr<Measured> measured = MeasureCluster(k, producers, period, common.window,
                                                         absl::StrCat("cluster-", round, "-", k));
      if (!measured.ok()) return Fail(measured.status());
      const absl::Duration burn = period * std::min(1.0, producers.BurnFraction(k));
      const ClusterFigures figures = PrintCluster("", k, *measured, k * per_second, burn);
      efficiency[k].push_back(figures.efficiency);
      rate[k].push_back(measured->batches_per_second);
      other_us[k].push_back(figures.other_cpu_us_per_batch);
    }
    if (!control) continue;
    absl::StatusOr<Measured> measured = MeasureCluster(k_max, overloaded, period, common.window,
                                                       absl::StrCat("cluster-overloaded-", round));
    if (!measured.ok()) return Fail(measured.status());
    const absl::Duration burn = period * std::min(1.0, overloaded.BurnFraction(k_max));
    overloaded_efficiency.push_back(
        PrintCluster("control ", k_max, *measured, k_max * per_second, burn).efficiency);
  }
  std::printf("load average at the end %s\n", bench::LoadAverage().c_str());
  std::string result =
      absl::StrCat("RESULT name=cluster producers=", SimulatedBatchModeName(producers.mode),
                   ProducerCoresKey(producers));
  for (int k : ks) {
    absl::StrAppend(&result, " batches_per_s_", k, "=", absl::SixDigits(bench::Median(rate[k])),
                    " scaling_efficiency_", k, "=", absl::SixDigits(bench::Median(efficiency[k])),
                    " other_cpu_us_per_batch_", k, "=",
                    absl::SixDigits(bench::Median(other_us[k])));
  }
  if (control) {
    absl::StrAppend(&result, " scaling_efficiency_", k_max,
                    "_overloaded=", absl::SixDigits(bench::Median(overloaded_efficiency)));
  }
  std::printf("%s\n", result.c_str());
  return 0;
}

int StragglerMode(absl::Duration period, double slow_factor, const Common& common) {
  Run run;
  run.periods = {period, period, period, period * slow_factor};
  run.mode = common.producers.mode;
  run.burn_fraction = common.producers.BurnFraction(run.periods.size());
  const double sum_rates = (3 + 1 / slow_factor) / absl::ToDoubleSeconds(period);
  // Epochs of ~4 s, so that the window crosses several epoch boundaries.
  const uint64_t per_epoch = static_cast<uint64_t>(sum_rates * 4);
  const double total_seconds = absl::ToDoubleSeconds(common.window) + 4;
  const uint32_t epochs = static_cast<uint32_t>(total_seconds * sum_rates / per_epoch) + 2;
  run.spec = SimulatedJob(Shape{}, per_epoch, epochs);
  run.prefetch_batches = 32;
  run.warmup = absl::Seconds(2);
  run.measure = common.window;
  std::printf(
      "straggler: 4 simulated workers at %.1f ms per batch, one at %.1fx that; %s; epochs "
      "of %llu batches; %.1f s window; %u alternating rounds; load average %s\n",
      absl::ToDoubleMilliseconds(period), slow_factor, common.producers.Describe().c_str(),
      static_cast<unsigned long long>(per_epoch), absl::ToDoubleSeconds(common.window),
      common.rounds, bench::LoadAverage().c_str());
  // Alternating rounds, balancing on and off (the negative control: even shares leave the slow
  // worker a full share of the credit); medians count.
  std::vector<double> on, off;
  for (uint32_t round = 0; round < common.rounds; ++round) {
    for (bool balance : {true, false}) {
      run.balance = balance;
      absl::StatusOr<Measured> measured = Measure(run, absl::StrCat("straggler-", round, balance));
      if (!measured.ok()) return Fail(measured.status());
      const double efficiency = measured->batches_per_second / sum_rates;
      (balance ? on : off).push_back(efficiency);
      std::printf(
          "  round %u, balancing %s: delivered %.1f batches/s; sum of worker rates %.1f; "
          "efficiency %.3f; overdue reported %llu; process %.2f cores\n",
          round + 1, balance ? "on " : "off", measured->batches_per_second, sum_rates, efficiency,
          static_cast<unsigned long long>(measured->stats.overdue_reported),
          measured->process_cores);
      PrintWorkers(*measured);
      std::fflush(stdout);
    }
  }
  const double efficiency = bench::Median(on), unbalanced = bench::Median(off);
  std::printf("load average at the end %s\n", bench::LoadAverage().c_str());
  std::printf(
      "RESULT name=straggler producers=%s%s sum_of_rates=%.1f straggler_efficiency=%.4f "
      "straggler_efficiency_balancing_off=%.4f\n",
      std::string(SimulatedBatchModeName(common.producers.mode)).c_str(),
      ProducerCoresKey(common.producers).c_str(), sum_rates, efficiency, unbalanced);
  return 0;
}

absl::StatusOr<Measured> MeasureDataWait(absl::Duration step, double capacity,
                                         const Common& common) {
  Run run;
  run.mode = common.producers.mode;
  run.burn_fraction = common.producers.BurnFraction(4);
  run.step = step;
  // 4 workers whose rates sum to capacity x the consumer's demand (1 / step).
  const absl::Duration worker_period = step * (4 / capacity);
  run.periods.assign(4, worker_period);
  const double demand = 1 / absl::ToDoubleSeconds(step);
  const uint64_t per_epoch = static_cast<uint64_t>(demand * 4);  // ~4 s epochs
  const uint32_t epochs =
      static_cast<uint32_t>((absl::ToDoubleSeconds(common.window) + 4) * demand / per_epoch) + 2;
  run.spec = SimulatedJob(Shape{}, per_epoch, epochs);
  run.prefetch_batches = 32;
  run.warmup = absl::Seconds(2);
  run.measure = common.window;
  absl::StatusOr<Measured> measured = Measure(run, absl::StrCat("data-wait-", capacity));
  if (!measured.ok()) return measured.status();
  std::printf(
      "  capacity %.2fx demand (4 workers at %.1f ms per batch): delivered %.1f batches/s; "
      "data wait %.4f of the consumer's time (1 - delivered / demand = %.4f); process %.2f "
      "cores\n",
      capacity, absl::ToDoubleMilliseconds(worker_period), measured->batches_per_second,
      measured->data_wait_fraction, std::max(0.0, 1 - measured->batches_per_second / demand),
      measured->process_cores);
  PrintWorkers(*measured);
  std::fflush(stdout);
  return measured;
}

// The consumer's data wait with the workers' capacity at --capacity x its demand, and, in
// alternating rounds of the same run, the negative control at 0.9x (wait ~ 1 - 0.9 = 10%).
int DataWaitMode(absl::Duration step, double capacity, const Common& common) {
  constexpr double kShortCapacity = 0.9;
  const double demand = 1 / absl::ToDoubleSeconds(step);
  std::printf(
      "data-wait: consumer step %.1f ms (demand %.1f batches/s); %s; %.1f s windows; %u "
      "alternating rounds; load average %s\n",
      absl::ToDoubleMilliseconds(step), demand, common.producers.Describe().c_str(),
      absl::ToDoubleSeconds(common.window), common.rounds, bench::LoadAverage().c_str());
  std::vector<double> enough, short_of;
  for (uint32_t round = 0; round < common.rounds; ++round) {
    for (double c : {capacity, kShortCapacity}) {
      absl::StatusOr<Measured> measured = MeasureDataWait(step, c, common);
      if (!measured.ok()) return Fail(measured.status());
      (c == capacity ? enough : short_of).push_back(measured->data_wait_fraction);
    }
  }
  std::printf("load average at the end %s\n", bench::LoadAverage().c_str());
  std::printf(
      "RESULT name=data-wait producers=%s%s demand_batches_per_s=%.1f capacity=%.2f "
      "data_wait_fraction=%.4f data_wait_fraction_capacity_0_9=%.4f\n",
      std::string(SimulatedBatchModeName(common.producers.mode)).c_str(),
      ProducerCoresKey(common.producers).c_str(), demand, capacity, bench::Median(enough),
      bench::Median(short_of));
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) {
  std::string mode = "cluster";
  std::string workers = "1,2,4,8,16,32";
  absl::Duration period = absl::Milliseconds(40);
  double slow_factor = 4;
  absl::Duration step = absl::Milliseconds(20);
  double capacity = 1.1;
  std::string producers = "burn";
  stoker::Common common;
  stoker::FlagSet flags("cluster_bench", "Stoker protocol benchmarks on simulated workers.");
  flags.Add("mode", &mode, "cluster | straggler | data-wait");
  flags.Add("workers", &workers, "cluster: comma-separated worker counts");
  flags.Add("period-ms", &period, absl::Milliseconds(1),
            "cluster, straggler: time per batch of a (fast) worker");
  flags.Add("seconds", &common.window, absl::Seconds(1),
            "length of the measured window of each run");
  flags.Add("rounds", &common.rounds, "alternating rounds (medians count)");
  flags.Add("simulate-batch-mode", &producers,
            "burn (the producers burn CPU for part of each batch's time) or sleep (no CPU: "
            "the protocol alone)");
  flags.Add("producer-cores", &common.producers.cores,
            "burn: the CPU all producers burn together at their nominal rates, in cores (at "
            "most the smallest worker count)");
  flags.Add("slow-factor", &slow_factor, "straggler: the slow worker takes this many periods");
  flags.Add("step-ms", &step, absl::Milliseconds(1), "data-wait: the consumer's step time");
  flags.Add("capacity", &capacity, "data-wait: the workers' capacity / the consumer's demand");
  flags.MapField("simulate_batch_mode", "simulate-batch-mode");
  stoker::LogFlags log_flags;
  log_flags.AddTo(&flags);
  // Quiet unless STOKER_LOG_LEVEL says otherwise: the coordinator logs backup leases at INFO.
  if (std::getenv("STOKER_LOG_LEVEL") == nullptr) {
    stoker::SetMinLogLevel(stoker::LogLevel::kWarning);
  }
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (absl::Status status = log_flags.Apply(); !status.ok()) return flags.Fail(status);
  absl::StatusOr<stoker::SimulatedBatchMode> parsed = stoker::ParseSimulatedBatchMode(producers);
  if (!parsed.ok()) return flags.Fail(parsed.status());
  common.producers.mode = *parsed;
  if (common.rounds < 1) {
    return flags.Fail(
        absl::InvalidArgumentError(absl::StrCat("--rounds: must be >= 1, got ", common.rounds)));
  }
  std::vector<int> ks = {4};  // straggler and data-wait run 4 workers
  if (mode == "cluster") {
    ks.clear();
    for (absl::string_view part : absl::StrSplit(workers, ',')) {
      int k = 0;
      if (!absl::SimpleAtoi(part, &k) || k < 1 || k > 256) {
        return flags.Fail(absl::InvalidArgumentError(
            absl::StrCat("--workers: expected counts in 1..256, got '", part, "'")));
      }
      ks.push_back(k);
    }
  }
  const int fewest = *std::min_element(ks.begin(), ks.end());
  if (!(common.producers.cores > 0) || common.producers.cores > fewest) {
    return flags.Fail(absl::InvalidArgumentError(absl::StrCat(
        "--producer-cores: must be in (0, ", fewest,
        "] (a producer burns at most its whole period), got ", common.producers.cores)));
  }
  if (mode == "cluster") return stoker::ClusterMode(ks, period, common);
  if (mode == "straggler") return stoker::StragglerMode(period, slow_factor, common);
  if (mode == "data-wait") return stoker::DataWaitMode(step, capacity, common);
  return flags.Fail(absl::InvalidArgumentError(
      absl::StrCat("--mode: expected cluster, straggler or data-wait, got '", mode, "'")));
}
