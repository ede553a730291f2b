// stoker-keda-loop: what KEDA and a Deployment do, in one process, for the closed-loop scaling
// test (tests/chaos/scaler_loop_test.py): every interval it asks the coordinator's
// externalscaler.ExternalScaler service, as KEDA's external trigger does (IsActive, then
// GetMetrics with target 1 per replica), and starts or stops worker processes (the command after
// `--`) until as many run as the metric says; inactive means none. Stopping sends SIGTERM to the
// newest worker (it drains) and waits for it. One JSON line per poll to --log:
//   {"t": seconds since start, "active": true, "metric": 3, "workers": 3}
// Runs until SIGTERM/SIGINT or --duration-s, then stops every worker it started.
//
// --policy=cpu replaces KEDA's metric by the HPA's default policy, for comparison: the workers'
// mean busy fraction (GetStatus) against --cpu-target, desired = ceil(n × busy / target) unless
// within 10% of n, at least 1 (an HPA never scales to zero), falls only --cooldown-ms after the
// last change; "metric" is then that count and "active" always true.
//
//   stoker-keda-loop --coordinator=127.0.0.1:7070 --tls-cert=scaler.pem ... --log=loop.jsonl
//       -- build/worker/stoker-worker --coordinator=127.0.0.1:7070 --listen=127.0.0.1:0 ...

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/flags.h"
#include "common/tls/grpc_tls.h"
#include "common/tls/tls_config.h"
#include "externalscaler/externalscaler.grpc.pb.h"
#include "stoker/v1/coordinator.grpc.pb.h"

namespace stoker {
namespace {

volatile sig_atomic_t stop_requested = 0;
void RequestStop(int) { stop_requested = 1; }

struct LoopOptions {
  std::string coordinator = "127.0.0.1:7070";
  std::string pool;
  absl::Duration interval = absl::Milliseconds(500);
  uint32_t max_workers = 8;
  absl::Duration duration = absl::Seconds(300);
  std::string log;
  std::string policy = "keda";
  double cpu_target = 0.8;
  absl::Duration cooldown = absl::Seconds(3);
};

pid_t StartWorker(const std::vector<std::string>& command) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

void StopWorker(pid_t pid) {
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
}

// The metric for `ref`: 0 when inactive, else GetMetrics's value; -1 when a call failed.
int64_t AskLikeKeda(externalscaler::ExternalScaler::Stub* stub,
                    const externalscaler::ScaledObjectRef& ref, bool* active) {
  grpc::ClientContext is_active_context;
  is_active_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  externalscaler::IsActiveResponse is_active;
  if (!stub->IsActive(&is_active_context, ref, &is_active).ok()) return -1;
  *active = is_active.result();
  if (!*active) return 0;
  grpc::ClientContext metrics_context;
  metrics_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  externalscaler::GetMetricsRequest request;
  *request.mutable_scaledobjectref() = ref;
  request.set_metricname("s0-stoker-workers");
  externalscaler::GetMetricsResponse metrics;
  if (!stub->GetMetrics(&metrics_context, request, &metrics).ok() ||
      metrics.metricvalues_size() != 1) {
    return -1;
  }
  return metrics.metricvalues(0).metricvalue();  // target 1 per replica: replicas = value
}

// The CPU-utilization policy's count for `running` workers (see the header); -1 when GetStatus
// failed. Holds falls until `cooldown` after `*changed`.
int64_t AskLikeAnHpa(stoker::v1::Coordinator::Stub* stub, const LoopOptions& options,
                     size_t running, Clock* clock, absl::Time* changed) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  stoker::v1::GetStatusResponse status;
  if (!stub->GetStatus(&context, stoker::v1::GetStatusRequest(), &status).ok()) return -1;
  if (running == 0 || status.workers_size() == 0) return std::max<size_t>(running, 1);
  double busy = 0;
  for (const stoker::v1::WorkerStatus& worker : status.workers()) busy += worker.busy_fraction();
  const double ratio = busy / status.workers_size() / options.cpu_target;
  if (std::abs(ratio - 1) <= 0.1) return running;  // the HPA's tolerance
  const int64_t desired = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(running * ratio)));
  const bool fall = desired < static_cast<int64_t>(running);
  if (fall && clock->Now() - *changed < options.cooldown) return running;
  if (desired != static_cast<int64_t>(running)) *changed = clock->Now();
  return desired;
}

int Loop(const LoopOptions& options, const TlsConfig& tls,
         const std::vector<std::string>& command) {
  FILE* log = std::fopen(options.log.c_str(), "w");
  if (log == nullptr) {
    std::fprintf(stderr, "stoker-keda-loop: cannot write %s\n", options.log.c_str());
    return 1;
  }
  const auto channel =
      grpc::CreateChannel(options.coordinator, ChannelCredentials(tls, {Role::kCoordinator}));
  auto stub = externalscaler::ExternalScaler::NewStub(channel);
  auto status_stub = stoker::v1::Coordinator::NewStub(channel);
  Clock* const clock = Clock::Real();
  absl::Time changed = clock->Now();
  externalscaler::ScaledObjectRef ref;
  ref.set_name("stoker-worker");
  ref.set_namespace_("test");
  if (!options.pool.empty()) (*ref.mutable_scalermetadata())["pool"] = options.pool;
  std::vector<pid_t> workers;
  const absl::Time start = clock->Now();
  while (!stop_requested && clock->Now() - start < options.duration) {
    bool active = true;
    const int64_t metric = options.policy == "cpu" ? AskLikeAnHpa(status_stub.get(), options,
                                                                  workers.size(), clock, &changed)
                                                   : AskLikeKeda(stub.get(), ref, &active);
    if (metric >= 0) {
      const size_t want = std::min<uint64_t>(metric, options.max_workers);
      while (workers.size() < want) workers.push_back(StartWorker(command));
      while (workers.size() > want) {
        StopWorker(workers.back());
        workers.pop_back();
      }
    }
    std::fprintf(log, "{\"t\": %.3f, \"active\": %s, \"metric\": %lld, \"workers\": %zu}\n",
                 absl::ToDoubleSeconds(clock->Now() - start), active ? "true" : "false",
                 static_cast<long long>(metric), workers.size());
    std::fflush(log);
    clock->SleepFor(options.interval);
  }
  for (pid_t pid : workers) StopWorker(pid);
  std::fclose(log);
  return 0;
}

int Run(int argc, char** argv) {
  int split = 1;
  while (split < argc && std::string(argv[split]) != "--") ++split;
  const std::vector<std::string> command(argv + std::min(split + 1, argc), argv + argc);
  LoopOptions options;
  FlagSet flags("stoker-keda-loop",
                "Scales worker processes as KEDA would, from the coordinator's external scaler.");
  flags.Add("coordinator", &options.coordinator, "host:port of the coordinator");
  flags.Add("pool", &options.pool, "the pool to scale (scalerMetadata pool; empty: all)");
  flags.Add("interval-ms", &options.interval, absl::Milliseconds(1),
            "time between polls (KEDA's pollingInterval)");
  flags.Add("max-workers", &options.max_workers, "most workers (maxReplicaCount)");
  flags.Add("duration-s", &options.duration, absl::Seconds(1),
            "stop after this long at the latest");
  flags.Add("log", &options.log, "JSON lines, one per poll");
  flags.Add("policy", &options.policy, "keda (the external scaler) or cpu (an HPA on CPU)");
  flags.Add("cpu-target", &options.cpu_target, "cpu policy: the workers' target busy fraction");
  flags.Add("cooldown-ms", &options.cooldown, absl::Milliseconds(1),
            "cpu policy: no fall sooner after a change");
  TlsFlags tls_flags;  // The scaler role's certificate (or --insecure).
  tls_flags.AddTo(&flags, /*calls=*/true, /*serves=*/false);
  if (auto exit_code = flags.Parse(split, argv)) return *exit_code;
  absl::StatusOr<TlsConfig> tls = tls_flags.Build();
  if (!tls.ok()) return flags.Fail(tls.status());
  if (command.empty() || options.log.empty() || options.interval <= absl::ZeroDuration() ||
      (options.policy != "keda" && options.policy != "cpu") || !(options.cpu_target > 0)) {
    return flags.Fail(absl::InvalidArgumentError(
        "--log, --interval-ms > 0, --policy keda|cpu, --cpu-target > 0 and a worker command "
        "after -- are required"));
  }
  signal(SIGTERM, RequestStop);
  signal(SIGINT, RequestStop);
  return Loop(options, *tls, command);
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Run(argc, argv); }
