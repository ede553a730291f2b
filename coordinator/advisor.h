#ifndef STOKER_COORDINATOR_ADVISOR_H_
#define STOKER_COORDINATOR_ADVISOR_H_

// How many workers a job needs, from what both sides measure (the documents' heuristics: a
// trainer that waits for data while the workers are busy needs more workers; idle workers and
// trainers that never wait mean fewer will do).
//
//   demand    = Σ over ranks of batch_size / step_seconds: the samples/s the trainers would
//               consume if they never waited (step = time between Next() calls, wait excluded).
//   use       = per worker, the more used of what it produces with (worker/production_window.h):
//               its producer threads' CPU time, and its process's CPU time over the CPUs it may
//               use, or, for a worker inside another program (no process figure: hybrid mode,
//               in-process tests), its threads' wall time holding a task.
//   capacity  = per worker, samples_per_second / use: what it would produce once the first of
//               them runs out (docs/decisions/0054-worker-capacity-from-all-its-cpu.md).
//   desired   = ceil(demand × headroom / mean capacity), at least 1, at most kMaxWorkersDesired.
//
// Defined for every input: the figures come from peers' heartbeats, so a NaN or negative one
// counts as 0, an infinite or huge one as its cap (fractions 1, rates kMaxReportedRate, steps
// at least kMinStepSeconds). Only workers that produced for this job (rate > 0) at a measurable
// use are extrapolated: a worker busy with other jobs says nothing about this one.
// A worker's capacity is what it produced for every job per use (its use split among the jobs
// by their rates; the jobs' samples are taken to cost alike). "Busy" in the advice's words is
// this use.
//
// With a measured rate model the advice also says what the job delivers and costs now and at
// each candidate worker count (coordinator/advisor_costs.h), at the configured prices.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/advisor_costs.h"
#include "coordinator/prices.h"

namespace stoker {

// The most workers the advice asks for, whatever the figures say.
inline constexpr uint32_t kMaxWorkersDesired = 1 << 20;
// Caps on reported figures (samples per second; a step shorter than this counts as this).
inline constexpr double kMaxReportedRate = 1e9;
inline constexpr double kMinStepSeconds = 1e-6;

// One trainer rank's recent consumption.
struct RankDemand {
  uint32_t rank = 0;
  double data_wait_fraction = 0;  // [0, 1]
  double step_seconds = 0;        // 0: not measured yet
};

// One worker's recent production for the job.
struct WorkerSupply {
  uint64_t worker_id = 0;
  double samples_per_second = 0;
  double busy_fraction = 0;  // [0, 1]: CPU time of its producer threads
  std::string pool;          // its worker pool, for its price
  // What it produced for every job (>= samples_per_second; 0: this job only). Its use is
  // shared among the jobs in proportion, so a worker that just moved to this job from
  // another is not extrapolated from this job's first trickle over its whole use.
  double all_jobs_samples_per_second = 0;
  double occupied_fraction = 0;     // [0, 1]: wall time its producer threads held a task
  double process_cpu_fraction = 0;  // [0, 1]: its process's CPU of its CPUs (0: not reported)
};

// max(busy, process CPU), or max(busy, occupied) when the process CPU is not reported.
double WorkerUse(const WorkerSupply& worker);

struct AdvisorInput {
  uint32_t batch_size = 0;
  // Samples of one epoch over every rank (world size × batches per rank × batch size).
  uint64_t samples_per_epoch = 0;
  std::vector<RankDemand> ranks;
  std::vector<WorkerSupply> workers;
};

struct AdvisorConfig {
  // Capacity kept in reserve: desired workers supply demand × headroom.
  double headroom = 1.1;
  // Below this use (WorkerUse) a worker's capacity is not extrapolated (too little to measure).
  double min_busy_fraction = 0.05;
  // A rank waiting more than this while the workers' use is below idle_busy_fraction on
  // average means the bottleneck is not the workers' CPU; the advice says so.
  double max_wait = 0.10;
  double idle_busy_fraction = 0.5;
  // What GPU nodes and workers cost (unpriced by default: the cost figures carry no dollars).
  Prices prices;
};

struct Advice {
  // False while there is not enough measured to advise (no step time, no busy worker yet);
  // then workers_desired is workers_now and `explanation` says what is missing.
  bool measured = false;
  uint32_t workers_now = 0;
  uint32_t workers_desired = 0;
  double demand_samples_per_second = 0;
  double supply_samples_per_second = 0;    // what the workers deliver now
  double capacity_samples_per_second = 0;  // what they would deliver fully used
  // One sentence, e.g. "rank 0 waits 41% of its step; 3 workers at 95% busy supply 610
  // samples/s of 1,030 demanded: add 3 workers".
  std::string explanation;
  // Set when measured: delivery and cost now and per candidate worker count.
  CostAdvice cost;
};

Advice AdviseWorkers(const AdvisorInput& input, const AdvisorConfig& config = AdvisorConfig());

}  // namespace stoker

#endif  // STOKER_COORDINATOR_ADVISOR_H_
