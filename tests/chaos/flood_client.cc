// stoker-flood-client: the flood of the chaos scenario flood_open_jobs_and_streams
// (tests/chaos/chaos_test.py; docs/security.md, "Limits"). As a trainer it sends
// --open-jobs OpenJob calls for new jobs from --threads threads (every tenth with a name over
// the limit, every hundredth a request over the coordinator's receive limit), then opens
// --streams StreamBatches streams on the worker, all held at once, for rank 0 of --hold-job
// without credit (they take no batch), and closes them. Prints one JSON line of counts by
// status code: {"open_jobs": {"OK": n, ...}, "streams": {"OK": n, ...}}.

#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/flags.h"
#include "common/grpc_status.h"
#include "common/tls/grpc_tls.h"
#include "stoker/v1/coordinator.grpc.pb.h"
#include "stoker/v1/worker.grpc.pb.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

struct FloodConfig {
  std::string coordinator;
  std::string worker;
  std::string hold_job;
  uint32_t open_jobs = 10000;
  uint32_t streams = 1000;
  uint32_t threads = 8;
  uint32_t streams_per_connection = 100;
  TlsFlags tls;
};

// Counts of status codes by name. Thread-safe.
class Tally {
 public:
  void Add(grpc::StatusCode code) {
    absl::MutexLock lock(&mu_);
    ++counts_[std::string(absl::StatusCodeToString(static_cast<absl::StatusCode>(code)))];
  }
  std::string Json() const {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> parts;
    for (const auto& [code, n] : counts_) parts.push_back(absl::StrCat("\"", code, "\": ", n));
    return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, uint64_t> counts_ ABSL_GUARDED_BY(mu_);
};

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(30);
}

pb::OpenJobRequest FloodJob(uint32_t i) {
  pb::OpenJobRequest request;
  request.set_name(absl::StrCat("flood-", i));
  if (i % 10 == 3) request.set_name(std::string(300, 'n'));       // Over --max-job-name-bytes.
  if (i % 100 == 7) request.set_name(std::string(5 << 20, 'n'));  // Over --max-request-bytes.
  auto* synthetic = request.mutable_spec()->mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(16);
  synthetic->set_height(4);
  synthetic->set_width(4);
  synthetic->set_channels(1);
  synthetic->set_num_classes(2);
  request.mutable_spec()->set_batch_size(4);
  request.mutable_spec()->set_world_size(1);
  request.mutable_spec()->set_epochs(1);
  return request;
}

void FloodOpenJobs(const FloodConfig& config, const std::shared_ptr<grpc::Channel>& channel,
                   Tally* tally) {
  auto stub = pb::Coordinator::NewStub(channel);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < config.threads; ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t i = t; i < config.open_jobs; i += config.threads) {
        grpc::ClientContext context;
        context.set_deadline(Deadline());
        pb::OpenJobResponse response;
        tally->Add(stub->OpenJob(&context, FloodJob(i), &response).error_code());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

absl::StatusOr<uint64_t> FindJob(const std::shared_ptr<grpc::Channel>& channel,
                                 const std::string& name) {
  grpc::ClientContext context;
  context.set_deadline(Deadline());
  pb::GetStatusResponse status;
  grpc::Status result =
      pb::Coordinator::NewStub(channel)->GetStatus(&context, pb::GetStatusRequest(), &status);
  if (!result.ok()) return FromGrpcStatus(result, "GetStatus");
  for (const pb::JobStatus& job : status.jobs()) {
    if (job.name() == name) return job.job_id();
  }
  return absl::NotFoundError(absl::StrCat("no job named ", name));
}

// Opens every stream (on connections of streams_per_connection each), waits until the worker
// has decided on each (an admitted stream gets its initial metadata, a refused one ends), so
// that no admitted stream is closed while others still wait for admission, then half-closes
// each and counts how it ended: OK for an admitted stream, RESOURCE_EXHAUSTED beyond
// --max-streams.
void FloodStreams(const FloodConfig& config, const std::shared_ptr<grpc::ChannelCredentials>& creds,
                  uint64_t job_id, Tally* tally) {
  struct Stream {
    std::unique_ptr<grpc::ClientContext> context;
    std::unique_ptr<grpc::ClientReaderWriter<pb::ClientMessage, pb::BatchMessage>> rw;
  };
  std::vector<std::unique_ptr<pb::Worker::Stub>> stubs;
  std::vector<Stream> streams;
  pb::ClientMessage open;
  open.mutable_open()->set_job_id(job_id);
  open.mutable_open()->set_client_id("flood");
  for (uint32_t i = 0; i < config.streams; ++i) {
    if (i % config.streams_per_connection == 0) {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // A connection of its own.
      stubs.push_back(pb::Worker::NewStub(grpc::CreateCustomChannel(config.worker, creds, args)));
    }
    Stream& stream = streams.emplace_back();
    stream.context = std::make_unique<grpc::ClientContext>();
    stream.context->set_deadline(Deadline());
    stream.rw = stubs.back()->StreamBatches(stream.context.get());
    stream.rw->Write(open);
  }
  for (Stream& stream : streams) stream.rw->WaitForInitialMetadata();
  for (Stream& stream : streams) {
    stream.rw->WritesDone();
    pb::BatchMessage ignored;
    while (stream.rw->Read(&ignored)) {
    }
    tally->Add(stream.rw->Finish().error_code());
  }
}

int Run(int argc, char** argv) {
  FloodConfig config;
  FlagSet flags("stoker-flood-client", "Floods a coordinator and a worker (chaos test).");
  flags.Add("coordinator", &config.coordinator, "host:port of the coordinator");
  flags.Add("worker", &config.worker, "host:port of the worker");
  flags.Add("hold-job", &config.hold_job, "name of the job whose rank 0 the streams open");
  flags.Add("open-jobs", &config.open_jobs, "OpenJob calls");
  flags.Add("streams", &config.streams, "streams held at once");
  flags.Add("threads", &config.threads, "threads calling OpenJob");
  flags.Add("streams-per-connection", &config.streams_per_connection, "streams per connection");
  config.tls.AddTo(&flags, /*calls=*/true, /*serves=*/false);
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (config.threads == 0 || config.streams_per_connection == 0) {
    return flags.Fail(absl::InvalidArgumentError("threads: must be > 0"));
  }
  absl::StatusOr<TlsConfig> tls = config.tls.Build();
  if (!tls.ok()) return flags.Fail(tls.status());
  auto coordinator =
      grpc::CreateChannel(config.coordinator, ChannelCredentials(*tls, {Role::kCoordinator}));
  Tally jobs, streams;
  FloodOpenJobs(config, coordinator, &jobs);
  absl::StatusOr<uint64_t> job_id = FindJob(coordinator, config.hold_job);
  if (!job_id.ok()) {
    std::fprintf(stderr, "stoker-flood-client: %s\n", job_id.status().ToString().c_str());
    return 1;
  }
  FloodStreams(config, ChannelCredentials(*tls, {Role::kWorker}), *job_id, &streams);
  std::printf("{\"open_jobs\": %s, \"streams\": %s}\n", jobs.Json().c_str(),
              streams.Json().c_str());
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Run(argc, argv); }
