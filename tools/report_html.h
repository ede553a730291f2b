#ifndef STOKER_TOOLS_REPORT_HTML_H_
#define STOKER_TOOLS_REPORT_HTML_H_

// `stoker-ctl report --html=FILE`: the report as one self-contained HTML page (inline CSS and
// SVG; no script, no external reference, so it opens offline): per rank, the verdict and its
// recommendation, and three plots: the data wait share (with the "input keeps up" threshold),
// the late batches' critical path by stage group (storage, workers, network, trainer), and the
// utilizations (workers' CPU, the link, the trainer's receive path; with the "near capacity"
// threshold).
//
// Pure function; thread-safe.

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "trace/bottleneck_report.h"

namespace stoker {

// `title` (e.g. "job resnet, 10 s traced") heads the page; it and every text are escaped.
std::string RenderReportHtml(absl::string_view title, absl::Span<const trace::RankVerdict> ranks,
                             const trace::BottleneckThresholds& thresholds = {});

// `text` with &, <, >, " and ' escaped for HTML text and attribute values.
std::string HtmlEscaped(absl::string_view text);

}  // namespace stoker

#endif  // STOKER_TOOLS_REPORT_HTML_H_
