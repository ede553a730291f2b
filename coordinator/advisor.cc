#include "coordinator/advisor.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace stoker {
namespace {

// 1030.4 → "1,030".
std::string Thousands(double value) {
  std::string digits = absl::StrCat(static_cast<int64_t>(std::llround(std::max(value, 0.0))));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

std::string Percent(double fraction) { return absl::StrCat(std::llround(fraction * 100), "%"); }

std::string Workers(uint32_t n) { return absl::StrCat(n, n == 1 ? " worker" : " workers"); }

// A reported figure in [0, max]: NaN and negatives are 0, +infinity is max.
double Bounded(double value, double max) { return value > 0 ? std::min(value, max) : 0; }

// The input with every figure bounded (see the header).
AdvisorInput Sanitized(AdvisorInput input) {
  for (RankDemand& rank : input.ranks) {
    rank.data_wait_fraction = Bounded(rank.data_wait_fraction, 1);
    rank.step_seconds =
        rank.step_seconds > 0 ? std::max(Bounded(rank.step_seconds, 1e9), kMinStepSeconds) : 0;
  }
  for (WorkerSupply& worker : input.workers) {
    worker.samples_per_second = Bounded(worker.samples_per_second, kMaxReportedRate);
    worker.busy_fraction = Bounded(worker.busy_fraction, 1);
    worker.occupied_fraction = Bounded(worker.occupied_fraction, 1);
    worker.process_cpu_fraction = Bounded(worker.process_cpu_fraction, 1);
    worker.all_jobs_samples_per_second =
        Bounded(worker.all_jobs_samples_per_second, kMaxReportedRate);
  }
  return input;
}

double MaxWait(const std::vector<RankDemand>& ranks) {
  double wait = 0;
  for (const RankDemand& rank : ranks) wait = std::max(wait, rank.data_wait_fraction);
  return wait;
}

// "rank 0 waits 41% of its step" for the rank that waits most.
std::string WaitClause(const std::vector<RankDemand>& ranks) {
  const RankDemand& worst =
      *std::max_element(ranks.begin(), ranks.end(), [](const RankDemand& a, const RankDemand& b) {
        return a.data_wait_fraction < b.data_wait_fraction;
      });
  const std::string who = ranks.size() == 1 ? absl::StrCat("rank ", worst.rank)
                                            : absl::StrCat("rank ", worst.rank, " (most)");
  return absl::StrCat(who, " waits ", Percent(worst.data_wait_fraction), " of its step");
}

double MeanWait(const std::vector<RankDemand>& ranks) {
  double sum = 0;
  for (const RankDemand& rank : ranks) sum += rank.data_wait_fraction;
  return ranks.empty() ? 0 : sum / static_cast<double>(ranks.size());
}

// The cost model of a measured job (capacity_per_worker > 0).
CostModel CostModelOf(const AdvisorInput& input, const AdvisorConfig& config, const Advice& advice,
                      double capacity_per_worker) {
  CostModel model;
  model.demand_samples_per_second = advice.demand_samples_per_second;
  model.capacity_per_worker = capacity_per_worker;
  model.samples_per_epoch = input.samples_per_epoch;
  model.gpu_nodes = static_cast<uint32_t>(input.ranks.size());
  model.gpu_node_dollars_per_hour = config.prices.gpu_node_dollars_per_hour;
  // The job's workers' mean price: a candidate count keeps today's mix of pools.
  double worker_prices = 0;
  for (const WorkerSupply& worker : input.workers) {
    worker_prices += config.prices.WorkerDollarsPerHour(worker.pool);
  }
  model.worker_dollars_per_hour = worker_prices / static_cast<double>(input.workers.size());
  model.priced = config.prices.priced();
  model.workers_now = advice.workers_now;
  model.workers_desired = advice.workers_desired;
  model.supply_now = advice.supply_samples_per_second;
  model.data_wait_now = MeanWait(input.ranks);
  return model;
}

// "; an epoch costs $1.23 now, $0.98 at the knee (4 workers), the least at 3 ($0.97)".
std::string CostClause(const CostAdvice& cost) {
  const CostPoint* knee = nullptr;
  const CostPoint* cheapest = nullptr;
  for (const CostPoint& point : cost.by_workers) {
    if (point.workers == cost.knee_workers) knee = &point;
    if (point.workers == cost.cheapest_workers) cheapest = &point;
  }
  return absl::StrFormat(
      "; an epoch costs $%.2f now, $%.2f at the knee (%s), the least at %d "
      "($%.2f)",
      cost.now.dollars_per_epoch, knee->dollars_per_epoch, Workers(knee->workers),
      cheapest->workers, cheapest->dollars_per_epoch);
}

}  // namespace

double WorkerUse(const WorkerSupply& worker) {
  // A worker's own process counts all its CPU, and a new worker brings CPUs of its own: its
  // wall time, which also reflects other workers on its host, is not extrapolated (that asked
  // for ever more workers as they shared one host). Inside another program the process's CPU
  // is not the worker's, and the wall time is what it gets of that program's host.
  return std::max(worker.busy_fraction, worker.process_cpu_fraction > 0
                                            ? worker.process_cpu_fraction
                                            : worker.occupied_fraction);
}

Advice AdviseWorkers(const AdvisorInput& raw_input, const AdvisorConfig& config) {
  const AdvisorInput input = Sanitized(raw_input);
  Advice advice;
  advice.workers_now = static_cast<uint32_t>(input.workers.size());
  advice.workers_desired = advice.workers_now;

  bool all_ranks_measured = !input.ranks.empty();
  for (const RankDemand& rank : input.ranks) {
    if (rank.step_seconds > 0) {
      advice.demand_samples_per_second += input.batch_size / rank.step_seconds;
    } else {
      all_ranks_measured = false;
    }
  }
  double busy_sum = 0;
  uint32_t measured_workers = 0;
  bool busy_elsewhere = false;  // a busy worker that produced nothing for this job
  for (const WorkerSupply& worker : input.workers) {
    advice.supply_samples_per_second += worker.samples_per_second;
    const double use = WorkerUse(worker);
    busy_sum += use;
    if (use < config.min_busy_fraction) continue;
    if (worker.samples_per_second == 0) {
      busy_elsewhere = true;
      continue;
    }
    advice.capacity_samples_per_second +=
        std::max(worker.samples_per_second, worker.all_jobs_samples_per_second) / use;
    ++measured_workers;
  }
  if (!all_ranks_measured) {
    advice.explanation = "waiting for every rank to report its step time";
    return advice;
  }
  if (measured_workers == 0) {
    advice.explanation =
        input.workers.empty() ? "no workers: start at least one to measure what one supplies"
        : busy_elsewhere
            ? "the busy workers produced nothing for this job (they work for other jobs): "
              "add workers to measure what one supplies to it"
            : "waiting for a worker to report production";
    return advice;
  }

  advice.measured = true;
  const double capacity_per_worker = advice.capacity_samples_per_second / measured_workers;
  // Finite and positive: capacity_per_worker > 0 (measured workers produced), demand bounded.
  const double needed =
      std::min(advice.demand_samples_per_second * config.headroom / capacity_per_worker,
               static_cast<double>(kMaxWorkersDesired));
  advice.workers_desired = std::max<uint32_t>(1, static_cast<uint32_t>(std::ceil(needed - 1e-9)));

  const double mean_busy = busy_sum / static_cast<double>(input.workers.size());
  std::string verdict;
  if (advice.workers_desired > advice.workers_now) {
    verdict = absl::StrCat("add ", advice.workers_desired - advice.workers_now);
  } else if (advice.workers_desired < advice.workers_now) {
    verdict = absl::StrCat(Workers(advice.workers_desired),
                           advice.workers_desired == 1 ? " suffices" : " suffice", ", remove ",
                           advice.workers_now - advice.workers_desired);
  } else {
    verdict = absl::StrCat("keep ", advice.workers_now);
  }
  advice.explanation =
      absl::StrCat(WaitClause(input.ranks), "; ", Workers(advice.workers_now), " at ",
                   Percent(mean_busy), " busy supply ", Thousands(advice.supply_samples_per_second),
                   " samples/s of ", Thousands(advice.demand_samples_per_second),
                   " demanded (one worker can do ", Thousands(capacity_per_worker), "): ", verdict);
  advice.cost = PredictCosts(CostModelOf(input, config, advice, capacity_per_worker));
  if (config.prices.priced()) absl::StrAppend(&advice.explanation, CostClause(advice.cost));
  // The documents' other case: trainers wait while workers idle. More workers will not help.
  if (advice.workers_desired <= advice.workers_now && MaxWait(input.ranks) > config.max_wait &&
      mean_busy < config.idle_busy_fraction) {
    absl::StrAppend(&advice.explanation,
                    "; the workers are mostly idle while the trainer waits, so the limit is "
                    "elsewhere: the network or the trainer host receiving batches (ship uint8), "
                    "or too little prefetch");
  }
  return advice;
}

}  // namespace stoker
