#include "tools/report_ctl.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/address_list.h"
#include "common/flags.h"
#include "common/status_macros.h"
#include "common/text_file.h"
#include "common/tls/tls_config.h"
#include "coordinator/coordinator_client.h"
#include "coordinator/coordinator_trace_client.h"
#include "tools/report_assembly.h"
#include "tools/report_html.h"
#include "trace/bottleneck_report.h"

namespace stoker {
namespace {

struct ReportFlags {
  std::string coordinator = "127.0.0.1:7070";
  std::string job;
  int64_t seconds = 10;
  double link_gbps = 0;
  bool json = false;
  std::string html;
  absl::Duration timeout = absl::Seconds(5);
};

absl::Status CheckFlags(const ReportFlags& flags) {
  RETURN_IF_ERROR(ParseAddressList("--coordinator", flags.coordinator).status());
  if (flags.job.empty()) return absl::InvalidArgumentError("--job: required");
  if (flags.seconds < 1 || flags.seconds > 600) {
    return absl::InvalidArgumentError("--seconds: must be in 1..600");
  }
  if (!(flags.link_gbps >= 0)) return absl::InvalidArgumentError("--link-gbps: must be >= 0");
  if (flags.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--timeout-ms: must be > 0");
  }
  return absl::OkStatus();
}

// Traces the job, then reads the status its rates cover, and diagnoses every rank.
absl::StatusOr<std::vector<trace::RankVerdict>> Report(const ReportFlags& flags,
                                                       const TlsConfig& tls,
                                                       std::string* job_name) {
  std::unique_ptr<CoordinatorClient> client =
      NewGrpcCoordinatorClient(flags.coordinator, flags.timeout, tls);
  absl::StatusOr<stoker::v1::GetStatusResponse> before =
      client->GetStatus(stoker::v1::GetStatusRequest());
  if (!before.ok()) return before.status();
  absl::StatusOr<const stoker::v1::JobStatus*> job = FindJob(*before, flags.job);
  if (!job.ok()) return job.status();
  const uint64_t job_id = (*job)->job_id();
  CollectTraceOptions collect;
  collect.job_id = job_id;
  collect.seconds = static_cast<uint32_t>(flags.seconds);
  absl::StatusOr<CollectedTrace> timeline = CollectTrace(*client, collect);
  if (!timeline.ok()) return timeline.status();
  absl::StatusOr<stoker::v1::GetStatusResponse> after =
      client->GetStatus(stoker::v1::GetStatusRequest());
  if (!after.ok()) return after.status();
  job = FindJob(*after, absl::StrCat(job_id));
  if (!job.ok()) return job.status();
  *job_name = (*job)->name();
  ReportOptions options;
  options.link_bytes_per_second = flags.link_gbps * 1e9 / 8;
  return AssembleReport(*after, **job, timeline->processes, options);
}

}  // namespace

int RunReportCommand(int argc, char** argv) {
  ReportFlags report;
  FlagSet flags("stoker-ctl report",
                "Traces a job for --seconds and names each rank's bottleneck (workers, storage, "
                "network, trainer or none) with a recommendation.");
  flags.Add("coordinator", &report.coordinator, kCoordinatorFlagHelp);
  flags.Add("job", &report.job, "the job's name or id");
  flags.Add("seconds", &report.seconds, "How long to trace (1..600)");
  flags.Add("link-gbps", &report.link_gbps,
            "The trainers' link capacity in Gbit/s (0 = unknown: no link utilization)");
  flags.Add("json", &report.json, "Print as JSON");
  flags.Add("html", &report.html, "Also write the report as a self-contained HTML page here");
  flags.Add("timeout-ms", &report.timeout, absl::Milliseconds(1), "Deadline of each call");
  TlsFlags tls_flags;  // An operator certificate (or --insecure).
  tls_flags.AddTo(&flags, /*calls=*/true, /*serves=*/false);
  if (auto exit_code = flags.Parse(argc - 1, argv + 1)) return *exit_code;
  if (absl::Status valid = CheckFlags(report); !valid.ok()) return flags.Fail(valid);
  absl::StatusOr<TlsConfig> tls = tls_flags.Build();
  if (!tls.ok()) return flags.Fail(tls.status());
  WarnIfInsecure(*tls, "stoker-ctl");
  std::string job_name;
  absl::StatusOr<std::vector<trace::RankVerdict>> ranks = Report(report, *tls, &job_name);
  if (!ranks.ok()) {
    std::fprintf(stderr, "stoker-ctl report: %s\n", ranks.status().ToString().c_str());
    return 1;
  }
  if (!report.html.empty()) {
    const std::string title = absl::StrFormat("job %s: %d s traced", job_name, report.seconds);
    if (absl::Status written =
            WriteTextFile("--html", report.html, RenderReportHtml(title, *ranks));
        !written.ok()) {
      std::fprintf(stderr, "stoker-ctl report: %s\n", written.ToString().c_str());
      return 1;
    }
  }
  const std::string link = report.link_gbps > 0
                               ? absl::StrCat("link capacity ", report.link_gbps, " Gbit/s")
                               : std::string("link capacity unknown (--link-gbps)");
  const std::string text = report.json
                               ? trace::RenderReportJson(*ranks)
                               : absl::StrCat("job ", job_name, ": ", report.seconds, " s traced, ",
                                              link, "\n", trace::RenderReportText(*ranks));
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace stoker
