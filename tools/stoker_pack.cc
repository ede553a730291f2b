// stoker-pack: packs an image folder (one subfolder per class), a file list ("path class" per
// line) or a COCO instances file's images with their boxes and masks into stoker shards of a
// target size and a manifest (docs/shard_format.md).
//
//   stoker-pack --input=/data/caltech256 --output=/data/caltech-shards [--resize-shorter=256]
//   [--restart-markers] [--captions | --captions-file=PAIRS.tsv|.csv [--captions-format=csv|tsv]]
//   stoker-pack --input=s3://raw/caltech256/ --output=s3://train/caltech-shards
//   --report=skipped.tsv
//   stoker-pack --coco=annotations/instances_val2017.json --input=/data/coco/val2017
//   --output=/data/coco-val-shards
//
// Checks every input with the worker's decode gates first and skips what a worker would reject
// (--keep-unverified packs as is); credentials and endpoint as for the worker (docs/storage.md).
//
// Uses every core; shows a progress bar on a terminal and a summary at the end. Atomic and
// resumable (pack/packer.h). Exit codes: 0 done, 1 runtime error (printed), 2 bad flags.

#include <unistd.h>

#include <cstdio>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/flags.h"
#include "data/storage_backend.h"
#include "data/storage_flags.h"
#include "pack/packer.h"

namespace stoker {
namespace {

constexpr char kProgram[] = "stoker-pack";

void PrintProgress(const PackPlan& plan, const PackCounters& counters) {
  constexpr int kWidth = 40;
  const uint64_t done = counters.images_done;
  const uint64_t total = plan.inputs.size();
  const int filled = static_cast<int>(kWidth * done / std::max<uint64_t>(total, 1));
  std::fprintf(stderr, "\r[%s%s] %llu/%llu images, %llu/%zu shards",
               std::string(filled, '#').c_str(), std::string(kWidth - filled, '.').c_str(),
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
               static_cast<unsigned long long>(counters.shards_done.load()), plan.shards.size());
}

// Runs Pack, drawing a progress bar on stderr while it works when stderr is a terminal.
absl::StatusOr<PackSummary> PackWithProgress(const Storage& storage, const PackOptions& options,
                                             const PackPlan& plan) {
  PackCounters counters;
  absl::StatusOr<PackSummary> summary;
  std::atomic<bool> finished{false};
  std::thread packer([&] {
    summary = Pack(storage, options, plan, &counters);
    finished = true;
  });
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  while (!finished) {
    if (terminal) PrintProgress(plan, counters);
    absl::SleepFor(absl::Milliseconds(200));
  }
  packer.join();
  if (terminal) {
    PrintProgress(plan, counters);
    std::fprintf(stderr, "\n");
  }
  return summary;
}

int Run(int argc, char** argv) {
  PackOptions options;
  uint64_t shard_mb = 64;
  FlagSet flags(kProgram,
                "Packs an image folder, file list or COCO set into stoker shards and a manifest.");
  flags.Add("input", &options.input, "image folder (one subfolder per class) or file list");
  flags.Add("output", &options.output_dir, "output directory for shards and manifest.json");
  flags.Add("shard-mb", &shard_mb, "target shard size in MiB of input bytes");
  flags.Add("resize-shorter", &options.resize_shorter,
            "scale the shorter side down to this many pixels and re-encode (0 = store as is)");
  flags.Add("quality", &options.quality, "JPEG quality for re-encoding (1..100)");
  flags.Add("restart-markers", &options.restart_markers,
            "rewrite JPEGs losslessly with restart markers so workers decode only the intervals "
            "a crop needs");
  flags.Add("captions", &options.captions,
            "image-text pairs: store each image's sidecar .txt (cat/001.jpg -> cat/001.txt) as "
            "its \"text\" field; images without one are skipped");
  flags.Add("captions-file", &options.captions_file,
            "image-text pairs from a TSV of \"path<TAB>caption\" lines or a CSV of path,caption "
            "rows (RFC 4180 quoting; an optional path,caption header), paths as in --input's "
            "file list: each listed image's caption as its \"text\" field; others skipped");
  flags.Add("captions-format", &options.captions_format,
            "csv or tsv: the --captions-file format (empty: by its extension, .csv is CSV)");
  flags.Add("coco", &options.coco,
            "a COCO instances file: packs its images (--input is their folder) with their "
            "\"boxes\", \"box_labels\" and \"masks\" (and \"keypoints\") fields; a bad "
            "annotation stops the run");
  flags.Add("seg-masks", &options.seg_masks,
            "semantic segmentation: store each image's sidecar label map (street/001.jpg -> "
            "street/001.seg.png; 8-bit gray or palette PNG of the image's size) as its "
            "\"semantic_mask\" field; images without one are skipped, a bad one stops the run");
  flags.Add("threads", &options.threads, "threads (0 = one per core)");
  bool keep_unverified = false;
  flags.Add("keep-unverified", &keep_unverified,
            "pack every input as is, without checking that a worker can decode it");
  flags.Add("report", &options.report,
            "write each skipped input and why to this file (local or s3://), tab-separated");
  flags.Add("max-pixels", &options.max_pixels, "skip images over this many pixels (as decode)");
  flags.Add("max-scans", &options.max_scans, "skip JPEGs with more scans than this (as decode)");
  StorageFlags storage_flags;
  storage_flags.AddTo(&flags, /*with_cache=*/false);
  flags.MapField("input", "input");
  flags.MapField("output_dir", "output");
  flags.MapField("shard_bytes", "shard-mb");
  flags.MapField("quality", "quality");
  flags.MapField("report", "report");
  flags.MapField("coco", "coco");
  flags.MapField("max_pixels", "max-pixels");
  flags.MapField("max_scans", "max-scans");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  options.shard_bytes = shard_mb << 20;
  options.verify = !keep_unverified;
  if (absl::Status status = options.Validate(); !status.ok()) return flags.Fail(status);
  absl::StatusOr<std::shared_ptr<Storage>> built = storage_flags.Build();
  if (!built.ok()) return flags.Fail(built.status());
  const Storage& storage = **built;

  absl::StatusOr<PackPlan> plan = PlanPack(storage, options);
  absl::StatusOr<PackSummary> summary =
      plan.ok() ? PackWithProgress(storage, options, *plan) : plan.status();
  if (!summary.ok()) {
    std::fprintf(stderr, "%s: %s\n", kProgram, summary.status().ToString().c_str());
    return 1;
  }
  if (summary->skipped > 0) {
    std::printf("skipped %llu inputs a worker would reject: %s%s\n",
                static_cast<unsigned long long>(summary->skipped),
                SummarizeSkipped(summary->skipped_inputs).c_str(),
                options.report.empty() ? " (--report=FILE lists them)" : "");
  }
  std::printf(
      "packed %llu images (%llu skipped) into %llu shards (%llu kept from an earlier run), "
      "%.1f MiB in, %.1f MiB out, %.1f s (%.0f images/s)\nmanifest: %s/manifest.json (%zu "
      "classes)\n",
      static_cast<unsigned long long>(summary->images),
      static_cast<unsigned long long>(summary->skipped),
      static_cast<unsigned long long>(summary->shards),
      static_cast<unsigned long long>(summary->shards_reused), summary->input_bytes / 1048576.0,
      summary->output_bytes / 1048576.0, summary->seconds,
      summary->images / std::max(summary->seconds, 1e-9), options.output_dir.c_str(),
      plan->class_names.size());
  return 0;
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) { return stoker::Run(argc, argv); }
