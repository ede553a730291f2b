// control_plane_bench: one driver process of `scripts/bench.sh control-plane` (bench/
// control-plane.sh). It plays `--workers` simulated workers and `--ranks` trainer ranks of one
// job against a real coordinator over gRPC, doing per task what the real ones do:
//
//   leases      LeaseTasks(a worker, job, rank, 32), then, once it answers, the rank's
//               ClientHeartbeat reporting the leased tasks consumed (the one report that
//               completes a task, journaled) — a worker and a client whose batches cost nothing;
//   heartbeats  every simulated worker heartbeats every --heartbeat-ms (their phases spread
//               evenly over the interval), carrying the tasks it "delivered" since (releasing
//               their leases).
//
// The calls are asynchronous (gRPC's callback API), so the driver needs no thread per
// outstanding call and a call's latency is not inflated by the driver's own threads waiting for
// a core. Paced (--tasks-per-s > 0, open loop): a lease starts every 32/rate seconds for the
// next rank with nothing in flight, whether or not earlier ones have answered (the pacing
// thread wakes every 5 ms and starts what fell due); saturated (0): --lanes chains of lease +
// heartbeat run back to back.
//
// It prints one line: `DRIVER tasks=N seconds=S leases=L errors=E skipped=K lease_us=<latency
// samples>`; the script merges the drivers' lines into the RESULT line. Not a test.

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/grpc_settings.h"
#include "common/tls/grpc_tls.h"
#include "coordinator/coordinator_client.h"
#include "stoker/v1/coordinator.grpc.pb.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

constexpr uint32_t kTasksPerLease = 32;
// How often the pacing loops wake (each makes the calls that fell due since).
constexpr absl::Duration kTick = absl::Milliseconds(5);

struct Options {
  std::string coordinator;
  std::string job = "control-plane";
  uint32_t world_size = 256;
  uint32_t first_rank = 0;
  uint32_t ranks = 128;
  uint32_t workers = 500;
  uint32_t lanes = 8;
  absl::Duration heartbeat = absl::Milliseconds(500);
  absl::Duration length = absl::Seconds(5);
  // Paced load: this driver aims at this many tasks/s (a lease of 32 every 32/rate seconds);
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

// One call in flight; deleted by its callback.
template <typename Request, typename Response>
struct Call {
  grpc::ClientContext context;
  Request request;
  Response response;
  absl::Time start;
};

// Thread-safe.
class Driver {
 public:
  Driver(const Options& o, std::shared_ptr<grpc::Channel> channel, uint64_t job,
         std::vector<uint64_t> worker_ids, Clock* clock)
      : o_(o),
        clock_(clock),
        stub_(pb::Coordinator::NewStub(std::move(channel))),
        job_(job),
        worker_ids_(std::move(worker_ids)),
        delivered_(worker_ids_.size()),
        rank_busy_(o.ranks) {}

  // Drives until `until` (of the driver's clock), then waits for the calls in flight; prints the
  // DRIVER line.
  void Run(absl::Time until) {
    const absl::Time start = clock_->Now();
    until_ = until;
    std::thread heartbeats([this] { HeartbeatLoop(); });
    if (o_.tasks_per_s > 0) {
      PacedLeases();
    } else {
      for (uint32_t lane = 0; lane < std::min(o_.lanes, o_.ranks); ++lane) StartLease(lane);
    }
    heartbeats.join();
    absl::MutexLock lock(&mu_);
    auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; };
    clock_->AwaitWithTimeout(&mu_, absl::Condition(&idle), absl::Seconds(60));
    const double seconds = absl::ToDoubleSeconds(clock_->Now() - start);
    std::printf("DRIVER tasks=%llu seconds=%.3f leases=%llu errors=%llu skipped=%llu lease_us=%s\n",
                static_cast<unsigned long long>(tasks_), seconds,
                static_cast<unsigned long long>(leases_), static_cast<unsigned long long>(errors_),
                static_cast<unsigned long long>(skipped_), absl::StrJoin(lease_us_, ",").c_str());
  }

 private:
  using LeaseCall = Call<pb::LeaseTasksRequest, pb::LeaseTasksResponse>;
  using ClientCall = Call<pb::ClientHeartbeatRequest, pb::ClientHeartbeatResponse>;
  using WorkerCall = Call<pb::WorkerHeartbeatRequest, pb::WorkerHeartbeatResponse>;

  template <typename C>
  void Begin(C* call) {
    call->context.set_deadline(DeadlineAfter(absl::Seconds(30)));
    absl::MutexLock lock(&mu_);
    ++in_flight_;
  }
  // A call's last step: once in_flight_ reaches 0, Run returns and the driver is destroyed, so
  // nothing of the driver may be touched after it (Next before End, never after).
  void End(bool ok) {
    absl::MutexLock lock(&mu_);
    --in_flight_;
    if (!ok) ++errors_;
  }

  // Open loop: a lease every 32/rate seconds, for the next rank with nothing in flight.
  void PacedLeases() {
    uint32_t next_rank = 0;
    Every(absl::Seconds(kTasksPerLease / o_.tasks_per_s), [&] {
      uint32_t tried = 0;
      while (tried < o_.ranks && rank_busy_[next_rank].exchange(true)) {
        next_rank = (next_rank + 1) % o_.ranks;
        ++tried;
      }
      if (tried == o_.ranks) {
        absl::MutexLock lock(&mu_);
        ++skipped_;
        return;
      }
      StartLease(next_rank);
      next_rank = (next_rank + 1) % o_.ranks;
    });
  }

  // Calls `fn` once per `spacing` until until_, on schedule whatever `fn` took: every kTick the
  // loop makes the calls that fell due (waking once per call would cost the driver more CPU than
  // the calls themselves, on the core it shares with the other driver).
  template <typename Fn>
  void Every(absl::Duration spacing, Fn fn) {
    for (absl::Time next = clock_->Now(); next < until_;) {
      for (const absl::Time now = clock_->Now(); next <= now && next < until_; next += spacing) {
        fn();
      }
      clock_->SleepFor(std::max(next - clock_->Now(), kTick));
    }
  }

  // LeaseTasks for rank `r` (of this driver's), then its ClientHeartbeat; then, saturated, the
  // lease of the lane's next rank.
  void StartLease(uint32_t r) {
    auto* call = new LeaseCall;
    const size_t w = next_worker_.fetch_add(1) % worker_ids_.size();
    call->request.set_worker_id(worker_ids_[w]);
    call->request.set_job_id(job_);
    call->request.set_rank(o_.first_rank + r);
    call->request.set_max_tasks(kTasksPerLease);
    Begin(call);
    call->start = clock_->Now();
    stub_->async()->LeaseTasks(
        &call->context, &call->request, &call->response,
        [this, call, r, w](grpc::Status status) { OnLeased(call, r, w, status); });
  }

  void OnLeased(LeaseCall* call, uint32_t r, size_t w, const grpc::Status& status) {
    const int64_t us = absl::ToInt64Microseconds(clock_->Now() - call->start);
    {
      absl::MutexLock lock(&mu_);
      lease_us_.push_back(us);
      if (status.ok()) ++leases_;
    }
    std::unique_ptr<LeaseCall> done(call);
    if (!status.ok()) {
      Next(r);
      End(false);
      return;
    }
    auto* beat = new ClientCall;
    beat->request.set_job_id(job_);
    beat->request.set_rank(o_.first_rank + r);
    beat->request.set_client_id(absl::StrCat(o_.name, "-rank", o_.first_rank + r));
    {
      absl::MutexLock lock(&mu_);
      for (const pb::Lease& l : call->response.leases()) {
        *beat->request.add_received() = l.task();
        delivered_[w].push_back(l.task());
      }
    }
    const int leased = call->response.leases_size();
    Begin(beat);
    stub_->async()->ClientHeartbeat(&beat->context, &beat->request, &beat->response,
                                    [this, beat, r, leased](grpc::Status status) {
                                      delete beat;
                                      if (status.ok()) {
                                        absl::MutexLock lock(&mu_);
                                        tasks_ += leased;
                                      }
                                      Next(r);
                                      End(status.ok());
                                    });
    End(true);
  }

  // Rank `r`'s lease and heartbeat are done: paced, the rank is free again; saturated, the lane
  // goes on with its next rank.
  void Next(uint32_t r) {
    if (o_.tasks_per_s > 0) {
      rank_busy_[r] = false;
    } else if (clock_->Now() < until_) {
      StartLease((r + o_.lanes) % o_.ranks);
    }
  }

  // Worker w heartbeats at start + (k + w / n) * interval, k = 0, 1, ...
  void HeartbeatLoop() {
    size_t w = 0;
    Every(o_.heartbeat / static_cast<double>(worker_ids_.size()), [&] {
      auto* call = new WorkerCall;
      call->request.set_worker_id(worker_ids_[w]);
      {
        absl::MutexLock lock(&mu_);
        for (pb::TaskId& task : delivered_[w]) *call->request.add_delivered() = std::move(task);
        delivered_[w].clear();
      }
      Begin(call);
      stub_->async()->WorkerHeartbeat(&call->context, &call->request, &call->response,
                                      [this, call](grpc::Status status) {
                                        delete call;
                                        End(status.ok());
                                      });
      w = (w + 1) % worker_ids_.size();
    });
  }

  const Options& o_;
  Clock* const clock_;
  const std::unique_ptr<pb::Coordinator::Stub> stub_;
  const uint64_t job_;
  const std::vector<uint64_t> worker_ids_;
  absl::Time until_;
  std::atomic<size_t> next_worker_{0};
  absl::Mutex mu_;
  // Tasks each worker "delivered" since its last heartbeat.
  std::vector<std::vector<pb::TaskId>> delivered_ ABSL_GUARDED_BY(mu_);
  std::vector<std::atomic<bool>> rank_busy_;  // a lease or heartbeat of the rank is in flight
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t tasks_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t leases_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t errors_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t skipped_ ABSL_GUARDED_BY(mu_) = 0;  // paced leases not sent: every rank was busy
  std::vector<int64_t> lease_us_ ABSL_GUARDED_BY(mu_);
};

// Opens the job and registers the workers (synchronously, before the clock starts).
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
  std::vector<uint64_t> worker_ids;
  for (uint32_t i = 0; i < o.workers; ++i) {
    pb::RegisterWorkerRequest reg;
    reg.set_address(absl::StrCat(o.name, "-w", i, ":1"));
    reg.set_cores(1);
    absl::StatusOr<pb::RegisterWorkerResponse> registered = client->RegisterWorker(reg);
    if (!registered.ok()) {
      std::fprintf(stderr, "control_plane_bench: %s\n", registered.status().ToString().c_str());
      return 1;
    }
    worker_ids.push_back(registered->worker_id());
  }
  grpc::ChannelArguments args;
  ApplyClientKeepalive(&args);
  Driver driver(
      o,
      grpc::CreateCustomChannel(
          o.coordinator, ChannelCredentials(TlsConfig::Plaintext(), {Role::kCoordinator}), args),
      job->job_id(), std::move(worker_ids), Clock::Real());
  driver.Run(Clock::Real()->Now() + o.length);
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
  flags.Add("lanes", &o.lanes, "saturated: chains of lease + heartbeat running back to back");
  flags.Add("heartbeat-ms", &o.heartbeat, absl::Milliseconds(1),
            "each worker's heartbeat interval");
  flags.Add("seconds", &o.length, absl::Seconds(1), "how long to drive");
  flags.Add("name", &o.name, "distinguishes this driver's workers and clients");
  flags.Add("tasks-per-s", &o.tasks_per_s, "paced load of this driver (0 = saturate)");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (o.coordinator.empty() || o.lanes == 0 || o.ranks == 0 || o.workers == 0 ||
      o.heartbeat <= absl::ZeroDuration() || o.first_rank + o.ranks > o.world_size) {
    std::fprintf(stderr,
                 "control_plane_bench: --coordinator must be set; lanes, ranks, workers and "
                 "heartbeat-ms > 0; first-rank + ranks <= world-size\n");
    return 2;
  }
  return stoker::Run(o);
}
