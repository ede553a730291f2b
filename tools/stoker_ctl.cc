// stoker-ctl: what a running Stoker cluster is doing, from its coordinator.
//
//   stoker-ctl status [--coordinator=127.0.0.1:7070] [--json]
//   stoker-ctl advise [--coordinator=127.0.0.1:7070] [--json]
//   stoker-ctl top    [--coordinator=127.0.0.1:7070] [--interval-ms=1000] [--iterations=0]
//   stoker-ctl health --address=HOST:PORT [--service=NAME] [--timeout-ms=5000]
//   stoker-ctl pipeline explain "<pipeline text>" [--input=HxWxC]   (tools/pipeline_ctl.h)
//   stoker-ctl pipeline ops [--markdown | --update=FILE]              (tools/pipeline_ctl.h)
//   stoker-ctl trace --job=J --seconds=S -o trace.json                 (tools/trace_ctl.h)
//   stoker-ctl report --job=J [--seconds=S] [--json] [--html=F]        (tools/report_ctl.h)
//
// `status` prints jobs, ranks (data wait, step time), workers (busy, rates) and how many workers
// each job needs; `advise` prints what each job delivers and costs now and at each candidate
// worker count (tools/advise_text.h); `top` redraws it every interval until interrupted; `health`
// asks any Stoker server (coordinator or worker) for its grpc.health.v1 status and exits 0 only
// when SERVING (a container health check or Kubernetes exec probe).

#include <google/protobuf/util/json_util.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/address_list.h"
#include "common/flags.h"
#include "common/tls/tls_config.h"
#include "coordinator/coordinator_client.h"
#include "tools/advise_text.h"
#include "tools/health_check.h"
#include "tools/pipeline_ctl.h"
#include "tools/report_ctl.h"
#include "tools/status_text.h"
#include "tools/trace_ctl.h"

namespace stoker {
namespace {

constexpr char kUsage[] =
    "usage: stoker-ctl status|top|health|pipeline|trace [flags]   (stoker-ctl COMMAND --help for "
    "the "
    "flags)\n"
    "  status  jobs, ranks, workers and the workers each job needs\n"
    "  advise  per job: images/s, data wait and dollars now and per worker count\n"
    "  top     the status, redrawn every interval\n"
    "  health  exit 0 when a coordinator or worker answers SERVING (a health check/probe)\n"
    "  pipeline explain \"<text>\"  a pipeline's ops, shapes and measured costs (no cluster)\n"
    "  pipeline ops  every op with its arguments, from the op registry (no cluster)\n"
    "  trace   a job's batch timeline as Chrome Trace JSON (Perfetto UI, chrome://tracing)\n"
    "  report  per rank: what makes batches late (workers, storage, network, trainer, none)\n";

// Exit codes of `health`: 0 SERVING; 1 reachable but not SERVING; 3 not reachable or no answer.
constexpr int kExitNotServing = 1;
constexpr int kExitUnreachable = 3;

struct CtlOptions {
  std::string coordinator = "127.0.0.1:7070";
  absl::Duration timeout = absl::Seconds(5);
  bool json = false;
  absl::Duration interval = absl::Seconds(1);
  int64_t iterations = 0;
  std::string address;
  std::string service;
  TlsConfig tls;
};

absl::StatusOr<stoker::v1::GetStatusResponse> FetchStatus(const CtlOptions& options) {
  return NewGrpcCoordinatorClient(options.coordinator, options.timeout, options.tls)
      ->GetStatus(stoker::v1::GetStatusRequest());
}

// Prints `status` (status) or its advice (advise), as text or with --json as JSON.
int PrintStatus(const std::string& command, const CtlOptions& options) {
  absl::StatusOr<stoker::v1::GetStatusResponse> status = FetchStatus(options);
  if (!status.ok()) {
    std::fprintf(stderr, "stoker-ctl: %s\n", status.status().ToString().c_str());
    return 1;
  }
  const bool advise = command == "advise";
  if (!options.json) {
    const std::string text = advise ? FormatAdvice(*status, options.coordinator)
                                    : FormatStatus(*status, options.coordinator);
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  google::protobuf::util::JsonPrintOptions json;
  json.add_whitespace = true;
  json.preserve_proto_field_names = true;
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(advise ? AdviceOnly(*status) : *status, &text,
                                                   json)
           .ok()) {
    std::fprintf(stderr, "stoker-ctl: could not render the status as JSON\n");
    return 1;
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

// Redraws the status in place; a failed fetch is shown and retried at the next tick.
int Top(const CtlOptions& options) {
  for (int64_t i = 0; options.iterations == 0 || i < options.iterations; ++i) {
    if (i > 0) absl::SleepFor(options.interval);
    absl::StatusOr<stoker::v1::GetStatusResponse> status = FetchStatus(options);
    const std::string text = status.ok() ? FormatStatus(*status, options.coordinator)
                                         : absl::StrCat(status.status().ToString(), "\n");
    std::printf("\x1b[H\x1b[2J%s", text.c_str());  // Cursor home, clear screen.
    std::fflush(stdout);
  }
  return 0;
}

// Prints the server's status; the exit code says SERVING (0), not (1) or no answer (3).
int Health(const CtlOptions& options) {
  absl::StatusOr<ServingStatus> status =
      CheckHealth(options.address, options.service, options.timeout, options.tls);
  if (!status.ok()) {
    std::fprintf(stderr, "stoker-ctl: %s\n", status.status().ToString().c_str());
    return kExitUnreachable;
  }
  std::printf("%s: %s\n", options.address.c_str(), ServingStatusName(*status));
  return *status == ServingStatus::kServing ? 0 : kExitNotServing;
}

const char* Summary(const std::string& command) {
  if (command == "status") return "Prints jobs, ranks, workers and the workers each job needs.";
  if (command == "advise") {
    return "Prints, per job, images/s, data wait, GPU-hours lost and dollars now and predicted "
           "at each worker count (the knee, the cheapest and the advised count marked).";
  }
  if (command == "top") return "Redraws the status every interval (Ctrl-C stops).";
  return "Exits 0 when the server at --address answers grpc.health.v1 SERVING, 1 when it answers "
         "anything else, 3 when it does not answer.";
}

int Run(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "pipeline") return RunPipelineCommand(argc, argv);
  if (command == "trace") return RunTraceCommand(argc, argv);
  if (command == "report") return RunReportCommand(argc, argv);
  if (command != "status" && command != "advise" && command != "top" && command != "health") {
    std::fputs(kUsage, stderr);
    return kExitBadFlags;
  }
  CtlOptions options;
  FlagSet flags(absl::StrCat("stoker-ctl ", command), Summary(command));
  if (command == "health") {
    flags.Add("address", &options.address, "host:port of a coordinator or worker");
    flags.Add("service", &options.service, "service to ask about (empty = the whole server)");
  } else {
    flags.Add("coordinator", &options.coordinator, kCoordinatorFlagHelp);
  }
  flags.Add("timeout-ms", &options.timeout, absl::Milliseconds(1), "Deadline of the call");
  if (command == "status" || command == "advise") {
    flags.Add("json", &options.json, "Print as JSON");
  } else if (command == "top") {
    flags.Add("interval-ms", &options.interval, absl::Milliseconds(1), "Time between redraws");
    flags.Add("iterations", &options.iterations, "Redraws before exiting (0 = until interrupted)");
  }
  TlsFlags tls_flags;  // An operator certificate (or --insecure).
  tls_flags.AddTo(&flags, /*calls=*/true, /*serves=*/false);
  if (auto exit_code = flags.Parse(argc - 1, argv + 1)) return *exit_code;
  absl::StatusOr<TlsConfig> tls = tls_flags.Build();
  if (!tls.ok()) return flags.Fail(tls.status());
  options.tls = *std::move(tls);
  WarnIfInsecure(options.tls, "stoker-ctl");
  if (options.timeout <= absl::ZeroDuration()) {
    return flags.Fail(absl::InvalidArgumentError("--timeout-ms: must be > 0"));
  }
  if (command == "health") {
    if (options.address.find(':') == std::string::npos) {
      return flags.Fail(absl::InvalidArgumentError(
          absl::StrCat("--address: expected host:port, got '", options.address, "'")));
    }
    return Health(options);
  }
  if (absl::Status valid = ParseAddressList("--coordinator", options.coordinator).status();
      !valid.ok()) {
    return flags.Fail(valid);
  }
  if (options.interval <= absl::ZeroDuration()) {
    return flags.Fail(absl::InvalidArgumentError("--interval-ms: must be > 0"));
  }
  if (options.iterations < 0) {
    return flags.Fail(absl::InvalidArgumentError("--iterations: must be >= 0"));
  }
  return command == "top" ? Top(options) : PrintStatus(command, options);
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Run(argc, argv); }
