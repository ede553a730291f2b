// stoker-ctl: what a running Stoker cluster is doing, from its coordinator.
//
//   stoker-ctl status [--coordinator=127.0.0.1:7070] [--json]
//   stoker-ctl top    [--coordinator=127.0.0.1:7070] [--interval-ms=1000] [--iterations=0]
//
// `status` prints jobs, ranks (data wait, step time), workers (busy, rates) and how many workers
// each job needs; `top` redraws it every interval until interrupted.

#include <google/protobuf/util/json_util.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/flags.h"
#include "coordinator/coordinator_client.h"
#include "tools/status_text.h"

namespace stoker {
namespace {

constexpr char kUsage[] =
    "usage: stoker-ctl status|top [flags]   (stoker-ctl status --help for the flags)\n";

struct CtlOptions {
  std::string coordinator = "127.0.0.1:7070";
  int64_t timeout_ms = 5000;
  bool json = false;
  int64_t interval_ms = 1000;
  int64_t iterations = 0;
};

absl::StatusOr<stoker::v1::GetStatusResponse> FetchStatus(const CtlOptions& options) {
  return NewGrpcCoordinatorClient(options.coordinator, absl::Milliseconds(options.timeout_ms))
      ->GetStatus(stoker::v1::GetStatusRequest());
}

int PrintStatus(const CtlOptions& options) {
  absl::StatusOr<stoker::v1::GetStatusResponse> status = FetchStatus(options);
  if (!status.ok()) {
    std::fprintf(stderr, "stoker-ctl: %s\n", status.status().ToString().c_str());
    return 1;
  }
  if (!options.json) {
    std::fputs(FormatStatus(*status, options.coordinator).c_str(), stdout);
    return 0;
  }
  google::protobuf::util::JsonPrintOptions json;
  json.add_whitespace = true;
  json.preserve_proto_field_names = true;
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(*status, &text, json).ok()) {
    std::fprintf(stderr, "stoker-ctl: could not render the status as JSON\n");
    return 1;
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

// Redraws the status in place; a failed fetch is shown and retried at the next tick.
int Top(const CtlOptions& options) {
  for (int64_t i = 0; options.iterations == 0 || i < options.iterations; ++i) {
    if (i > 0) absl::SleepFor(absl::Milliseconds(options.interval_ms));
    absl::StatusOr<stoker::v1::GetStatusResponse> status = FetchStatus(options);
    const std::string text = status.ok() ? FormatStatus(*status, options.coordinator)
                                         : absl::StrCat(status.status().ToString(), "\n");
    std::printf("\x1b[H\x1b[2J%s", text.c_str());  // Cursor home, clear screen.
    std::fflush(stdout);
  }
  return 0;
}

int Run(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command != "status" && command != "top") {
    std::fputs(kUsage, stderr);
    return kExitBadFlags;
  }
  CtlOptions options;
  FlagSet flags(absl::StrCat("stoker-ctl ", command),
                command == "status" ? "Prints jobs, ranks, workers and the workers each job needs."
                                    : "Redraws the status every interval (Ctrl-C stops).");
  flags.Add("coordinator", &options.coordinator, "host:port of the coordinator");
  flags.Add("timeout-ms", &options.timeout_ms, "Deadline of the status call");
  if (command == "status") {
    flags.Add("json", &options.json, "Print the status as JSON");
  } else {
    flags.Add("interval-ms", &options.interval_ms, "Time between redraws");
    flags.Add("iterations", &options.iterations, "Redraws before exiting (0 = until interrupted)");
  }
  if (auto exit_code = flags.Parse(argc - 1, argv + 1)) return *exit_code;
  if (options.timeout_ms <= 0) {
    return flags.Fail(absl::InvalidArgumentError("--timeout-ms: must be > 0"));
  }
  if (options.interval_ms <= 0) {
    return flags.Fail(absl::InvalidArgumentError("--interval-ms: must be > 0"));
  }
  if (options.iterations < 0) {
    return flags.Fail(absl::InvalidArgumentError("--iterations: must be >= 0"));
  }
  return command == "status" ? PrintStatus(options) : Top(options);
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Run(argc, argv); }
