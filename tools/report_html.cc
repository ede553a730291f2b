#include "tools/report_html.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace stoker {
namespace {

using trace::RankVerdict;
using trace::StageGroup;

// Plot geometry (SVG user units): a label column, then a bar area of kBarWidth for 100%.
constexpr int kLabelWidth = 150;
constexpr int kBarWidth = 400;
constexpr int kRowHeight = 22;
constexpr int kBarHeight = 14;

constexpr StageGroup kGroups[] = {StageGroup::kStorage, StageGroup::kWorkers, StageGroup::kNetwork,
                                  StageGroup::kTrainer};
constexpr const char* kGroupColors[] = {"#8c6d31", "#3182bd", "#e6550d", "#756bb1"};

constexpr char kStyle[] =
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
    ".v-none{color:#31a354}.v-workers,.v-storage,.v-network,.v-trainer{color:#de2d26}"
    "svg text{font-size:12px}";

struct Bar {
  std::string label;
  double share = 0;  // < 0: unknown (drawn as text)
  const char* color = "#3182bd";
};

std::string Percent(double share) { return absl::StrFormat("%.1f%%", share * 100); }

// The rank's GPU utilization; "unknown" without NVML on the trainer.
std::string GpuUtilization(const trace::RankFootprint& footprint) {
  return footprint.gpu_utilization.has_value() ? Percent(*footprint.gpu_utilization) : "unknown";
}

int Scaled(double share) { return static_cast<int>(std::clamp(share, 0.0, 1.0) * kBarWidth); }

// One SVG of labelled horizontal bars on a 0..100% scale, with a dashed line at `threshold`.
std::string BarPlot(const std::vector<Bar>& bars, double threshold) {
  const int height = kRowHeight * static_cast<int>(bars.size()) + 10;
  std::string svg = absl::StrFormat("<svg width=\"%d\" height=\"%d\" role=\"img\">",
                                    kLabelWidth + kBarWidth + 60, height);
  for (size_t i = 0; i < bars.size(); ++i) {
    const int y = kRowHeight * static_cast<int>(i) + 4;
    const Bar& bar = bars[i];
    absl::StrAppendFormat(&svg, "<text x=\"0\" y=\"%d\">%s</text>", y + 11, HtmlEscaped(bar.label));
    if (bar.share < 0) {
      absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\">unknown</text>", kLabelWidth, y + 11);
      continue;
    }
    absl::StrAppendFormat(&svg,
                          "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>"
                          "<text x=\"%d\" y=\"%d\">%s</text>",
                          kLabelWidth, y, Scaled(bar.share), kBarHeight, bar.color,
                          kLabelWidth + Scaled(bar.share) + 4, y + 11, Percent(bar.share));
  }
  const int x = kLabelWidth + Scaled(threshold);
  absl::StrAppendFormat(&svg,
                        "<line x1=\"%d\" y1=\"0\" x2=\"%d\" y2=\"%d\" stroke=\"#555\" "
                        "stroke-dasharray=\"4 3\"/></svg>",
                        x, x, height);
  return svg;
}

// One stacked bar per rank: each group's share of its late batches' critical path.
std::string CriticalPathPlot(absl::Span<const RankVerdict> ranks) {
  const int height = kRowHeight * static_cast<int>(ranks.size()) + 30;
  std::string svg = absl::StrFormat("<svg width=\"%d\" height=\"%d\" role=\"img\">",
                                    kLabelWidth + kBarWidth + 60, height);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int y = kRowHeight * static_cast<int>(i) + 4;
    absl::StrAppendFormat(&svg, "<text x=\"0\" y=\"%d\">rank %d</text>", y + 11,
                          ranks[i].footprint.rank);
    int x = kLabelWidth;
    for (StageGroup group : kGroups) {
      const int width = Scaled(ranks[i].group_shares[static_cast<int>(group)]);
      absl::StrAppendFormat(
          &svg,
          "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%s %s</title>"
          "</rect>",
          x, y, width, kBarHeight, kGroupColors[static_cast<int>(group)],
          trace::StageGroupName(group), Percent(ranks[i].group_shares[static_cast<int>(group)]));
      x += width;
    }
  }
  int x = 0;  // the legend
  for (StageGroup group : kGroups) {
    absl::StrAppendFormat(&svg,
                          "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                          "<text x=\"%d\" y=\"%d\">%s</text>",
                          x, height - 14, kGroupColors[static_cast<int>(group)], x + 14, height - 5,
                          trace::StageGroupName(group));
    x += 90;
  }
  return absl::StrCat(svg, "</svg>");
}

std::string UtilizationPlot(absl::Span<const RankVerdict> ranks, double threshold) {
  std::vector<Bar> bars;
  for (const RankVerdict& rank : ranks) {
    const trace::RankFootprint& f = rank.footprint;
    bars.push_back({absl::StrCat("rank ", f.rank, " workers' CPU"), f.worker_cpu_utilization,
                    kGroupColors[static_cast<int>(StageGroup::kWorkers)]});
    bars.push_back({absl::StrCat("rank ", f.rank, " link"), f.link_utilization,
                    kGroupColors[static_cast<int>(StageGroup::kNetwork)]});
    bars.push_back({absl::StrCat("rank ", f.rank, " receive path"), f.trainer_receive_share,
                    kGroupColors[static_cast<int>(StageGroup::kTrainer)]});
  }
  return BarPlot(bars, threshold);
}

std::string VerdictTable(absl::Span<const RankVerdict> ranks) {
  std::string table =
      "<table><tr><th>rank</th><th>verdict</th><th>GPU utilization</th><th>recommendation</th>"
      "</tr>";
  for (const RankVerdict& rank : ranks) {
    const absl::string_view verdict = trace::VerdictName(rank.verdict);
    absl::StrAppendFormat(
        &table, "<tr><td>%d</td><td class=\"v-%s\"><b>%s</b></td><td>%s</td><td>%s</td></tr>",
        rank.footprint.rank, verdict, verdict, GpuUtilization(rank.footprint),
        HtmlEscaped(rank.recommendation));
  }
  return absl::StrCat(table, "</table>");
}

}  // namespace

std::string HtmlEscaped(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderReportHtml(absl::string_view title, absl::Span<const RankVerdict> ranks,
                             const trace::BottleneckThresholds& thresholds) {
  std::vector<Bar> waits;
  for (const RankVerdict& rank : ranks) {
    waits.push_back({absl::StrCat("rank ", rank.footprint.rank), rank.footprint.data_wait_share});
  }
  return absl::StrCat(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", HtmlEscaped(title),
      "</title><style>", kStyle, "</style></head><body>\n<h1>", HtmlEscaped(title), "</h1>\n",
      VerdictTable(ranks), "\n<h2>Data wait share (dashed: ", Percent(thresholds.data_wait_share),
      ", below which the input keeps up)</h2>\n", BarPlot(waits, thresholds.data_wait_share),
      "\n<h2>Late batches' critical path by stage group</h2>\n", CriticalPathPlot(ranks),
      "\n<h2>Utilization (dashed: ", Percent(thresholds.link_near_capacity),
      ", near capacity)</h2>\n", UtilizationPlot(ranks, thresholds.link_near_capacity),
      "\n</body></html>\n");
}

}  // namespace stoker
