// control_plane_bench: one driver process of `scripts/bench.sh control-plane` (bench/
// control-plane.sh). It plays `--workers` simulated workers and `--ranks` trainer ranks of one
// job against a real coordinator over gRPC, the way the real ones talk to it:
//
//   lease threads   for each of its ranks in turn: LeaseTasks(a worker, job, rank, 32), then the
//                   rank's ClientHeartbeat reporting the leased tasks consumed (the one report
//                   that completes a task, journaled) — the work of a worker and a client whose
//                   batches cost nothing to make;
//   heartbeat       every simulated worker heartbeats every --heartbeat-ms, carrying the tasks it
//   threads         "delivered" since (releasing their leases).
//
// It prints one line: `DRIVER tasks=N seconds=S leases=L lease_us=<sorted latency samples>`;
// the script merges the drivers' lines into the RESULT line. Not a test: no assertions.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/flags.h"
#include "coordinator/coordinator_client.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

struct Options {
  std::string coordinator;
  std::string job = "control-plane";
  uint32_t world_size = 256;
  uint32_t first_rank = 0;
  uint32_t ranks = 128;
  uint32_t workers = 500;
  uint32_t lease_threads = 8;
  uint32_t heartbeat_threads = 2;
  int64_t heartbeat_ms = 500;
  double seconds = 5;
  // Paced load: this driver aims at this many tasks/s (leases of 32 spaced evenly per thread);
  // 0: as fast as the coordinator answers (saturation).
  double tasks_per_s = 0;
  std::string name = "driver";
};

pb::JobSpec Spec(uint32_t world_size) {
  pb::JobSpec spec;
  pb::SyntheticSource* source = spec.mutable_dataset()->mutable_synthetic();
  source->set_num_samples(uint64_t{world_size} * 1'000'000);  // never finishes in a run
  source->set_height(1);
  source->set_width(1);
  source->set_channels(1);
  source->set_num_classes(2);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.set_batch_size(1);
  spec.set_world_size(world_size);
  spec.set_epochs(1);
  spec.set_shuffle(pb::SHUFFLE_MODE_NONE);
  return spec;
}

// The simulated workers: ids and the tasks each "delivered" since its last heartbeat.
struct Workers {
  std::vector<uint64_t> ids;
  std::vector<std::mutex> mu;
  std::vector<std::vector<pb::TaskId>> delivered;
  explicit Workers(size_t n) : ids(n), mu(n), delivered(n) {}
};

struct Totals {
  std::atomic<uint64_t> tasks{0};
  std::atomic<uint64_t> leases{0};
  std::atomic<uint64_t> errors{0};
  std::mutex mu;
  std::vector<int64_t> lease_us;
};

void LeaseLoop(const Options& o, CoordinatorClient& client, uint64_t job, Workers& workers,
               uint32_t thread, absl::Time until, Totals& totals) {
  std::vector<int64_t> latencies;
  size_t next_worker = thread;
  const absl::Duration spacing = o.tasks_per_s > 0
                                     ? absl::Seconds(32.0 * o.lease_threads / o.tasks_per_s)
                                     : absl::ZeroDuration();
  absl::Time next_lease = absl::Now();
  for (uint64_t round = 0; absl::Now() < until; ++round) {
    for (uint32_t r = thread; r < o.ranks && absl::Now() < until; r += o.lease_threads) {
      if (spacing > absl::ZeroDuration()) {  // open loop: late leases do not shift the schedule
        absl::SleepFor(std::max(absl::ZeroDuration(), next_lease - absl::Now()));
        next_lease += spacing;
      }
      const size_t w = next_worker++ % workers.ids.size();
      pb::LeaseTasksRequest lease;
      lease.set_worker_id(workers.ids[w]);
      lease.set_job_id(job);
      lease.set_rank(o.first_rank + r);
      lease.set_max_tasks(32);
      const absl::Time start = absl::Now();
      absl::StatusOr<pb::LeaseTasksResponse> leased = client.LeaseTasks(lease);
      latencies.push_back(absl::ToInt64Microseconds(absl::Now() - start));
      if (!leased.ok()) {
        ++totals.errors;
        continue;
      }
      ++totals.leases;
      pb::ClientHeartbeatRequest beat;
      beat.set_job_id(job);
      beat.set_rank(o.first_rank + r);
      beat.set_client_id(absl::StrCat(o.name, "-rank", o.first_rank + r));
      for (const pb::Lease& l : leased->leases()) *beat.add_consumed() = l.task();
      {
        std::lock_guard<std::mutex> lock(workers.mu[w]);
        for (const pb::Lease& l : leased->leases()) workers.delivered[w].push_back(l.task());
      }
      if (client.ClientHeartbeat(beat).ok()) {
        totals.tasks += leased->leases_size();
      } else {
        ++totals.errors;
      }
    }
  }
  std::lock_guard<std::mutex> lock(totals.mu);
  totals.lease_us.insert(totals.lease_us.end(), latencies.begin(), latencies.end());
}

void HeartbeatLoop(const Options& o, CoordinatorClient& client, Workers& workers, uint32_t thread,
                   absl::Time until, Totals& totals) {
  while (absl::Now() < until) {
    const absl::Time next = absl::Now() + absl::Milliseconds(o.heartbeat_ms);
    for (size_t w = thread; w < workers.ids.size() && absl::Now() < until;
         w += o.heartbeat_threads) {
      pb::WorkerHeartbeatRequest beat;
      beat.set_worker_id(workers.ids[w]);
      {
        std::lock_guard<std::mutex> lock(workers.mu[w]);
        for (pb::TaskId& task : workers.delivered[w]) *beat.add_delivered() = std::move(task);
        workers.delivered[w].clear();
      }
      if (!client.WorkerHeartbeat(beat).ok()) ++totals.errors;
    }
    absl::SleepFor(std::max(absl::ZeroDuration(), next - absl::Now()));
  }
}

int Run(const Options& o) {
  std::unique_ptr<CoordinatorClient> client =
      NewGrpcCoordinatorClient(o.coordinator, absl::Seconds(30), TlsConfig::Plaintext());
  pb::OpenJobRequest open;
  open.set_name(o.job);
  *open.mutable_spec() = Spec(o.world_size);
  absl::StatusOr<pb::OpenJobResponse> job = client->OpenJob(open);
  if (!job.ok()) {
    std::fprintf(stderr, "control_plane_bench: %s\n", job.status().ToString().c_str());
    return 1;
  }
  Workers workers(o.workers);
  for (uint32_t i = 0; i < o.workers; ++i) {
    pb::RegisterWorkerRequest reg;
    reg.set_address(absl::StrCat(o.name, "-w", i, ":1"));
    reg.set_cores(1);
    absl::StatusOr<pb::RegisterWorkerResponse> registered = client->RegisterWorker(reg);
    if (!registered.ok()) {
      std::fprintf(stderr, "control_plane_bench: %s\n", registered.status().ToString().c_str());
      return 1;
    }
    workers.ids[i] = registered->worker_id();
  }
  Totals totals;
  const absl::Time start = absl::Now();
  const absl::Time until = start + absl::Seconds(o.seconds);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < o.lease_threads; ++t) {
    threads.emplace_back(
        [&, t] { LeaseLoop(o, *client, job->job_id(), workers, t, until, totals); });
  }
  for (uint32_t t = 0; t < o.heartbeat_threads; ++t) {
    threads.emplace_back([&, t] { HeartbeatLoop(o, *client, workers, t, until, totals); });
  }
  for (std::thread& thread : threads) thread.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::printf("DRIVER tasks=%llu seconds=%.3f leases=%llu errors=%llu lease_us=%s\n",
              static_cast<unsigned long long>(totals.tasks.load()), seconds,
              static_cast<unsigned long long>(totals.leases.load()),
              static_cast<unsigned long long>(totals.errors.load()),
              absl::StrJoin(totals.lease_us, ",").c_str());
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) {
  stoker::Options o;
  stoker::FlagSet flags("control_plane_bench",
                        "One driver of scripts/bench.sh control-plane (simulated workers and "
                        "trainer ranks against a real coordinator).");
  flags.Add("coordinator", &o.coordinator, "host:port of the coordinator");
  flags.Add("job", &o.job, "job name (every driver opens the same job)");
  flags.Add("world-size", &o.world_size, "ranks of the job");
  flags.Add("first-rank", &o.first_rank, "first rank this driver plays");
  flags.Add("ranks", &o.ranks, "ranks this driver plays");
  flags.Add("workers", &o.workers, "simulated workers this driver plays");
  flags.Add("lease-threads", &o.lease_threads, "threads leasing and reporting consumed tasks");
  flags.Add("heartbeat-threads", &o.heartbeat_threads, "threads sending worker heartbeats");
  flags.Add("heartbeat-ms", &o.heartbeat_ms, "each worker's heartbeat interval");
  flags.Add("seconds", &o.seconds, "how long to drive");
  flags.Add("name", &o.name, "distinguishes this driver's workers and clients");
  flags.Add("tasks-per-s", &o.tasks_per_s, "paced load of this driver (0 = saturate)");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (o.coordinator.empty() || o.lease_threads == 0 || o.heartbeat_threads == 0 || o.ranks == 0 ||
      o.workers == 0 || o.first_rank + o.ranks > o.world_size) {
    std::fprintf(stderr,
                 "control_plane_bench: --coordinator must be set; threads, ranks and "
                 "workers > 0; first-rank + ranks <= world-size\n");
    return 2;
  }
  return stoker::Run(o);
}
