#include "tools/trace_ctl.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/address_list.h"
#include "common/flags.h"
#include "common/status_macros.h"
#include "common/text_file.h"
#include "common/tls/tls_config.h"
#include "coordinator/coordinator_client.h"
#include "coordinator/coordinator_trace_client.h"
#include "tools/report_assembly.h"

namespace stoker {
namespace {

struct TraceFlags {
  std::string coordinator = "127.0.0.1:7070";
  std::string job;
  uint32_t seconds = 10;
  uint32_t sample_one_in = 0;
  std::string output;
  absl::Duration timeout = absl::Seconds(5);
};

// The job id `job` names (its name, id or short serial: FindJob, as `stoker-ctl report`).
absl::StatusOr<uint64_t> ResolveJob(CoordinatorClient& coordinator, const std::string& job) {
  ASSIGN_OR_RETURN(const stoker::v1::GetStatusResponse status,
                   coordinator.GetStatus(stoker::v1::GetStatusRequest()));
  ASSIGN_OR_RETURN(const stoker::v1::JobStatus* found, FindJob(status, job));
  return found->job_id();
}

int Collect(const TraceFlags& flags, const TlsConfig& tls) {
  const std::unique_ptr<CoordinatorClient> coordinator =
      NewGrpcCoordinatorClient(flags.coordinator, flags.timeout, tls);
  absl::StatusOr<uint64_t> job = ResolveJob(*coordinator, flags.job);
  absl::StatusOr<CollectedTrace> collected = absl::UnknownError("not collected");
  if (job.ok()) {
    collected =
        CollectTrace(*coordinator, CollectTraceOptions{.job_id = *job,
                                                       .seconds = flags.seconds,
                                                       .sample_one_in = flags.sample_one_in});
  }
  absl::Status written = job.ok() ? collected.status() : job.status();
  if (written.ok())
    written =
        WriteTextFile("--output", flags.output, trace::WriteChromeTrace(collected->processes));
  if (!written.ok()) {
    std::fprintf(stderr, "stoker-ctl trace: %s\n", written.ToString().c_str());
    return 1;
  }
  size_t spans = 0;
  for (const trace::TraceProcess& process : collected->processes) spans += process.spans.size();
  std::printf(
      "wrote %zu spans of %zu processes to %s (%llu dropped by the coordinator); open it "
      "in https://ui.perfetto.dev or chrome://tracing\n",
      spans, collected->processes.size(), flags.output.c_str(),
      static_cast<unsigned long long>(collected->dropped_spans));
  return 0;
}

}  // namespace

int RunTraceCommand(int argc, char** argv) {
  // FlagSet takes --name only: -o is --output.
  std::vector<char*> args(argv + 1, argv + argc);
  std::string output_flag = "--output";
  for (char*& arg : args) {
    if (std::string(arg) == "-o") arg = output_flag.data();
  }
  TraceFlags options;
  FlagSet flags("stoker-ctl trace",
                "Collects a job's batch timeline for --seconds and writes it as Chrome Trace "
                "Event JSON (open it in ui.perfetto.dev or chrome://tracing).");
  flags.Add("coordinator", &options.coordinator, kCoordinatorFlagHelp);
  flags.Add("job", &options.job, "The job: its name or id");
  flags.Add("seconds", &options.seconds, "How long to trace (the coordinator allows 1..600)");
  flags.Add("sample-one-in", &options.sample_one_in, "Trace 1 batch in N (0 or 1: every batch)");
  flags.Add("output", &options.output, "Where to write the JSON (-o)");
  flags.Add("timeout-ms", &options.timeout, absl::Milliseconds(1), "Deadline of each call");
  TlsFlags tls_flags;  // An operator certificate (or --insecure).
  tls_flags.AddTo(&flags, /*calls=*/true, /*serves=*/false);
  if (auto exit_code = flags.Parse(static_cast<int>(args.size()), args.data())) return *exit_code;
  absl::StatusOr<TlsConfig> tls = tls_flags.Build();
  if (!tls.ok()) return flags.Fail(tls.status());
  WarnIfInsecure(*tls, "stoker-ctl");
  if (absl::Status valid = ParseAddressList("--coordinator", options.coordinator).status();
      !valid.ok()) {
    return flags.Fail(valid);
  }
  if (options.job.empty()) return flags.Fail(absl::InvalidArgumentError("--job: required"));
  if (options.output.empty()) return flags.Fail(absl::InvalidArgumentError("--output: required"));
  if (options.timeout <= absl::ZeroDuration()) {
    return flags.Fail(absl::InvalidArgumentError("--timeout-ms: must be > 0"));
  }
  return Collect(options, *tls);
}

}  // namespace stoker
