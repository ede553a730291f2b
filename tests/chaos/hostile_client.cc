// stoker-hostile-client: an authenticated trainer that attacks the cluster (the chaos suite
// hostile_peers, tests/chaos/hostile_test.py; docs/security.md, "Authenticated peers"). With a
// trainer certificate it runs one --attack and prints one JSON line of what each step answered:
//
//   open-job  OpenJob with world_size 4,000,000,000 over a 1-sample dataset, then the same spec
//             with a hand-made same-world resume token whose universe sits just under the
//             epoch's index limit (the pair once aborted the coordinator with bad_alloc);
//             then GetStatus, to show the coordinator still answers.
//   acks      --acks acknowledgements of random tasks no stream was ever sent, --acks-per-message
//             in each Ack, on the worker: a refused stream is replaced by a new one until every
//             message was written; prints how each stream ended.
//   credit    one stream granting credit 2^32-1 for a job of large batches, never reading, for
//             --hold-seconds; then it cancels the stream.
//   other-tenant
//             with one tenant's trainer certificate, every call that names --victim-job-id,
//             another tenant's job: GetStatus (does it list the job or rates of it?), GetJob,
//             ClientHeartbeat reporting the victim's first batch received (with its own client
//             id and with --victim-client-id), StartTrace, GetTrace, and a worker stream with
//             credit 64 (with either client id), counting the batches and bytes it receives.
//             GetJob of a job id that never existed, for the answer to compare with.
//
// Every attack ends with GetStatus: "workers" (live) and "workers_lost" (ever removed).

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/flags.h"
#include "common/grpc_status.h"
#include "common/tls/grpc_tls.h"
#include "plan/epoch_plan.h"
#include "plan/resume_token.h"
#include "stoker/v1/coordinator.grpc.pb.h"
#include "stoker/v1/worker.grpc.pb.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;

struct HostileConfig {
  std::string attack;
  std::string coordinator;
  std::string worker;
  uint64_t acks = 2'000'000;
  uint32_t acks_per_message = 50'000;
  uint32_t hold_seconds = 20;
  uint64_t victim_job_id = 0;
  std::string victim_client_id;
  TlsFlags tls;
};

std::string CodeName(const grpc::Status& status) {
  return std::string(absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())));
}

std::chrono::system_clock::time_point Deadline(int seconds = 30) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

// A synthetic job of `num_samples` images of h x w x 3 uint8 (no ops).
pb::OpenJobRequest SyntheticJob(const std::string& name, uint64_t num_samples, uint32_t side,
                                uint32_t batch_size, uint32_t world_size) {
  pb::OpenJobRequest request;
  request.set_name(name);
  pb::JobSpec* spec = request.mutable_spec();
  auto* synthetic = spec->mutable_dataset()->mutable_synthetic();
  synthetic->set_num_samples(num_samples);
  synthetic->set_height(side);
  synthetic->set_width(side);
  synthetic->set_channels(3);
  synthetic->set_num_classes(10);
  spec->set_batch_size(batch_size);
  spec->set_world_size(world_size);
  spec->set_epochs(1);
  return request;
}

class Attacker {
 public:
  Attacker(const HostileConfig& config, const TlsConfig& tls)
      : config_(config),
        coordinator_(pb::Coordinator::NewStub(grpc::CreateChannel(
            config.coordinator, ChannelCredentials(tls, {Role::kCoordinator})))),
        worker_credentials_(ChannelCredentials(tls, {Role::kWorker})) {}

  // Each attack adds its results to `out` (key -> JSON value).
  void OpenJobAttack(std::map<std::string, std::string>* out) {
    constexpr uint32_t kWorld = 4'000'000'000u;
    pb::OpenJobRequest request = SyntheticJob("hostile-world", 1, 1, 1, kWorld);
    (*out)["world_size"] = Quote(CodeName(OpenJob(request).status));

    // Same world size as the token: the coordinator deals the token's universe itself.
    pb::ResumeToken token;
    token.set_version(kResumeTokenVersion);
    token.set_job_name(request.name());
    token.set_spec_fingerprint(SpecFingerprint(request.spec()));
    token.set_world_size(kWorld);
    token.set_rank(0);
    token.set_epoch(0);
    token.set_universe(BatchIndexLimit(/*global_batches=*/kWorld, kWorld) - 1);
    request.add_resume_tokens(token.SerializeAsString());
    request.set_rank(0);
    (*out)["world_size_with_token"] = Quote(CodeName(OpenJob(request).status));
  }

  void AckAttack(std::map<std::string, std::string>* out) {
    absl::StatusOr<uint64_t> job_id = OpenOwnJob(SyntheticJob("hostile-acks", 16, 4, 4, 1));
    if (!job_id.ok()) {
      (*out)["open_job"] = Quote(job_id.status().ToString());
      return;
    }
    std::mt19937_64 random(20261126);
    const uint64_t messages =
        (config_.acks + config_.acks_per_message - 1) / config_.acks_per_message;
    std::map<std::string, uint64_t> stream_ends;
    auto stub = pb::Worker::NewStub(grpc::CreateChannel(config_.worker, worker_credentials_));
    uint64_t written = 0;
    // Bounded: each stream writes at least its Open or ends; at most one stream per message
    // plus one, and every write is on a deadline.
    for (uint64_t streams = 0; written < messages && streams <= messages; ++streams) {
      grpc::ClientContext context;
      context.set_deadline(Deadline());
      auto stream = stub->StreamBatches(&context);
      bool open = stream->Write(OpenMessage(*job_id, "hostile-acks"));
      while (open && written < messages) {
        pb::ClientMessage ack;
        for (uint32_t i = 0; i < config_.acks_per_message; ++i) {
          pb::TaskId* task = ack.mutable_ack()->add_tasks();
          task->set_job_id(*job_id);
          task->set_epoch(static_cast<uint32_t>(random() % 4));
          task->set_batch_index(random() % 1'000'000);
        }
        open = stream->Write(ack);
        if (open) ++written;
      }
      stream->WritesDone();
      pb::BatchMessage ignored;
      while (stream->Read(&ignored)) {
      }
      ++stream_ends[CodeName(stream->Finish())];
    }
    (*out)["ack_messages_written"] = absl::StrCat(written);
    (*out)["ack_streams"] = CountsJson(stream_ends);
  }

  void CreditAttack(std::map<std::string, std::string>* out) {
    // 256 images of 224 x 224 x 3 bytes: 38.5 MB a batch, a million samples.
    absl::StatusOr<uint64_t> job_id =
        OpenOwnJob(SyntheticJob("hostile-credit", 1'000'000, 224, 256, 1));
    if (!job_id.ok()) {
      (*out)["open_job"] = Quote(job_id.status().ToString());
      return;
    }
    auto stub = pb::Worker::NewStub(grpc::CreateChannel(config_.worker, worker_credentials_));
    grpc::ClientContext context;
    context.set_deadline(Deadline(static_cast<int>(config_.hold_seconds) + 30));
    auto stream = stub->StreamBatches(&context);
    pb::ClientMessage credit;
    credit.mutable_credit()->set_n(std::numeric_limits<uint32_t>::max());
    const bool written =
        stream->Write(OpenMessage(*job_id, "hostile-credit")) && stream->Write(credit);
    (*out)["credit_written"] = written ? "true" : "false";
    // Never reads: whatever the worker sends waits in its own memory.
    std::this_thread::sleep_for(std::chrono::seconds(config_.hold_seconds));
    context.TryCancel();
    (*out)["credit_stream"] = Quote(CodeName(stream->Finish()));
  }

  void OtherTenantAttack(std::map<std::string, std::string>* out) {
    const uint64_t victim = config_.victim_job_id;
    {
      grpc::ClientContext context;
      context.set_deadline(Deadline());
      pb::GetStatusResponse status;
      grpc::Status result = coordinator_->GetStatus(&context, pb::GetStatusRequest(), &status);
      uint64_t mentions = 0;
      for (const pb::JobStatus& job : status.jobs()) mentions += job.job_id() == victim;
      for (const pb::WorkerStatus& worker : status.workers()) {
        for (const pb::JobRate& rate : worker.job_rates()) mentions += rate.job_id() == victim;
      }
      (*out)["status"] = Quote(CodeName(result));
      (*out)["status_jobs"] = absl::StrCat(status.jobs_size());
      (*out)["status_victim_mentions"] = absl::StrCat(mentions);
    }
    // A job id of the victim's incarnation that was never handed out.
    const uint64_t never = victim + 100000;
    for (const auto& [key, job_id] : {std::pair<std::string, uint64_t>{"get_job", victim},
                                      std::pair<std::string, uint64_t>{"get_job_never", never}}) {
      grpc::ClientContext context;
      context.set_deadline(Deadline());
      pb::GetJobRequest request;
      request.set_job_id(job_id);
      pb::GetJobResponse response;
      grpc::Status result = coordinator_->GetJob(&context, request, &response);
      (*out)[key] = Quote(CodeName(result));
      (*out)[key + "_message"] = Quote(result.error_message());
    }
    for (const auto& [key, client_id] :
         {std::pair<std::string, std::string>{"heartbeat_own_client", "thief"},
          std::pair<std::string, std::string>{"heartbeat_victim_client",
                                              config_.victim_client_id}}) {
      grpc::ClientContext context;
      context.set_deadline(Deadline());
      pb::ClientHeartbeatRequest request;
      request.set_job_id(victim);
      request.set_rank(0);
      request.set_client_id(client_id);
      pb::TaskId* first = request.add_received();  // would complete it, were it accepted
      first->set_job_id(victim);
      first->set_epoch(0);
      first->set_batch_index(0);
      pb::ClientHeartbeatResponse response;
      (*out)[key] = Quote(CodeName(coordinator_->ClientHeartbeat(&context, request, &response)));
    }
    {
      grpc::ClientContext context;
      context.set_deadline(Deadline());
      pb::StartTraceRequest request;
      request.set_job_id(victim);
      request.set_seconds(1);
      pb::StartTraceResponse response;
      (*out)["start_trace"] =
          Quote(CodeName(coordinator_->StartTrace(&context, request, &response)));
    }
    {
      grpc::ClientContext context;
      context.set_deadline(Deadline());
      pb::GetTraceRequest request;
      request.set_job_id(victim);
      pb::GetTraceResponse response;
      (*out)["get_trace"] = Quote(CodeName(coordinator_->GetTrace(&context, request, &response)));
    }
    auto stub = pb::Worker::NewStub(grpc::CreateChannel(config_.worker, worker_credentials_));
    uint64_t batches = 0;
    uint64_t bytes = 0;
    for (const auto& [key, client_id] :
         {std::pair<std::string, std::string>{"stream_own_client", "thief"},
          std::pair<std::string, std::string>{"stream_victim_client", config_.victim_client_id}}) {
      grpc::ClientContext context;
      context.set_deadline(Deadline(15));
      auto stream = stub->StreamBatches(&context);
      pb::ClientMessage credit;
      credit.mutable_credit()->set_n(64);
      if (stream->Write(OpenMessage(victim, client_id)) && stream->Write(credit)) {
        pb::BatchMessage batch;
        while (stream->Read(&batch)) {
          ++batches;
          bytes += batch.data().size();
        }
      }
      (*out)[key] = Quote(CodeName(stream->Finish()));
    }
    (*out)["victim_batches_received"] = absl::StrCat(batches);
    (*out)["victim_bytes_received"] = absl::StrCat(bytes);
  }

  void StatusAfter(std::map<std::string, std::string>* out) {
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    pb::GetStatusResponse status;
    grpc::Status result = coordinator_->GetStatus(&context, pb::GetStatusRequest(), &status);
    (*out)["status_after"] = Quote(CodeName(result));
    (*out)["workers"] = absl::StrCat(status.workers_size());
    (*out)["workers_lost"] = absl::StrCat(status.workers_lost());
  }

 private:
  struct OpenJobResult {
    grpc::Status status;
    pb::OpenJobResponse response;
  };

  static std::string Quote(const std::string& text) { return absl::StrCat("\"", text, "\""); }

  static std::string CountsJson(const std::map<std::string, uint64_t>& counts) {
    std::vector<std::string> parts;
    for (const auto& [code, n] : counts) parts.push_back(absl::StrCat("\"", code, "\": ", n));
    return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
  }

  static pb::ClientMessage OpenMessage(uint64_t job_id, const std::string& client_id) {
    pb::ClientMessage open;
    open.mutable_open()->set_job_id(job_id);
    open.mutable_open()->set_rank(0);
    open.mutable_open()->set_client_id(client_id);
    return open;
  }

  OpenJobResult OpenJob(const pb::OpenJobRequest& request) {
    OpenJobResult result;
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    result.status = coordinator_->OpenJob(&context, request, &result.response);
    return result;
  }

  absl::StatusOr<uint64_t> OpenOwnJob(const pb::OpenJobRequest& request) {
    OpenJobResult result = OpenJob(request);
    if (!result.status.ok()) return FromGrpcStatus(result.status, "OpenJob");
    return result.response.job_id();
  }

  const HostileConfig& config_;
  std::unique_ptr<pb::Coordinator::Stub> coordinator_;
  std::shared_ptr<grpc::ChannelCredentials> worker_credentials_;
};

int Run(int argc, char** argv) {
  HostileConfig config;
  FlagSet flags("stoker-hostile-client", "Attacks a coordinator and a worker (chaos test).");
  flags.Add("attack", &config.attack, "open-job, acks, credit or other-tenant");
  flags.Add("coordinator", &config.coordinator, "host:port of the coordinator");
  flags.Add("worker", &config.worker, "host:port of the worker (acks, credit)");
  flags.Add("acks", &config.acks, "acknowledgements of unsent tasks to send (acks)");
  flags.Add("acks-per-message", &config.acks_per_message, "task ids in each Ack (acks)");
  flags.Add("hold-seconds", &config.hold_seconds, "how long the unread stream is held (credit)");
  flags.Add("victim-job-id", &config.victim_job_id, "another tenant's job (other-tenant)");
  flags.Add("victim-client-id", &config.victim_client_id,
            "the client id of its rank 0 (other-tenant)");
  config.tls.AddTo(&flags, /*calls=*/true, /*serves=*/false);
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (config.acks_per_message == 0) {
    return flags.Fail(absl::InvalidArgumentError("acks-per-message: must be > 0"));
  }
  absl::StatusOr<TlsConfig> tls = config.tls.Build();
  if (!tls.ok()) return flags.Fail(tls.status());
  Attacker attacker(config, *tls);
  std::map<std::string, std::string> results;
  if (config.attack == "open-job") {
    attacker.OpenJobAttack(&results);
  } else if (config.attack == "acks") {
    attacker.AckAttack(&results);
  } else if (config.attack == "credit") {
    attacker.CreditAttack(&results);
  } else if (config.attack == "other-tenant") {
    attacker.OtherTenantAttack(&results);
  } else {
    return flags.Fail(absl::InvalidArgumentError(absl::StrCat(
        "attack: want open-job, acks, credit or other-tenant, got \"", config.attack, "\"")));
  }
  attacker.StatusAfter(&results);
  std::vector<std::string> parts;
  for (const auto& [key, value] : results) parts.push_back(absl::StrCat("\"", key, "\": ", value));
  std::printf("{%s}\n", absl::StrJoin(parts, ", ").c_str());
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Run(argc, argv); }
