#ifndef STOKER_PACK_PACK_PLAN_H_
#define STOKER_PACK_PACK_PLAN_H_

// What stoker-pack will write: the input images with their labels, what each record stores beside
// its image (its fields), and which inputs go in each shard. Inputs are an image folder (one
// subfolder per class; class names sorted, label = rank in that order; files sorted; a file named
// *.seg.png is a label map, pack/seg_mask_fields.h, never an input), a file list
// (one "path class_name" per line, paths relative to the list's directory unless absolute; class
// names sorted as for folders), or a COCO instances file's images (pack/coco_fields.h). Shards
// are consecutive runs of inputs whose input bytes reach the target size, so the plan is a pure
// function of the inputs and the target: a rerun plans the same shards (what resuming relies on).

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace stoker {

class Storage;     // data/storage_backend.h: what inputs and outputs are read and written through.
class PackFields;  // pack/pack_fields.h: what each record stores beside its image.

// The options of one packing run (stoker-pack's flags). Thread-compatible.
struct PackOptions {
  std::string input;       // Image folder, file list, or s3://bucket/prefix/ of class folders.
  std::string output_dir;  // Shards and manifest.json go here (created): a folder or s3:// URL.
  uint64_t shard_bytes = uint64_t{64} << 20;  // Target input bytes per shard, > 0.
  uint32_t resize_shorter = 0;                // > 0: shorter side to this many pixels, re-encoded.
  uint32_t quality = 90;                      // JPEG quality when re-encoding, 1..100.
  uint32_t threads = 0;                       // 0: one per core.
  bool verify = true;                // Skip inputs a worker would reject (pack/input_check.h).
  uint32_t max_pixels = 50'000'000;  // The decode gates' limits when verifying, and the
  uint32_t max_scans = 100;          // restart rewrite's (which also bounds its memory).
  // JPEGs rewritten losslessly with restart markers (augment/kernels/jpeg_restart_markers.h), so
  // workers decode only the restart intervals a crop needs; other formats are stored as they are.
  bool restart_markers = false;
  std::string report;  // Where to list skipped inputs and why (local or s3://); empty: nowhere.
  // Image-text pairs: each image's sidecar caption, the file of the same name with extension
  // .txt ("cat/001.jpg" → "cat/001.txt"), is stored byte for byte as its "text" field
  // (data/record_fields.h) and the manifest declares the field; an image without a caption is
  // skipped (reason "missing_caption").
  bool captions = false;
  // Image-text pairs from a table instead of sidecars: a TSV of "path<TAB>caption" lines or a
  // CSV of path,caption rows (pack/caption_table.h), local or s3://; images it does not list are
  // skipped likewise, a row naming an image that is not an input is refused.
  std::string captions_file;
  // "csv" or "tsv"; empty: by captions_file's extension (.csv: CSV, anything else: TSV).
  std::string captions_format;
  // A COCO instances file (local or s3://): `input` is then the folder its images' file_names
  // are relative to, and each image's record gets its boxes, box labels and masks
  // (pack/coco_fields.h).
  std::string coco;
  // Semantic segmentation: each image's sidecar label map "X.seg.png" stored as its
  // "semantic_mask" field (pack/seg_mask_fields.h); an image without one is skipped.
  bool seg_masks = false;

  // Whether records get a "text" field (captions or captions_file).
  bool has_captions() const { return captions || !captions_file.empty(); }

  // INVALID_ARGUMENT naming the field ("shard_bytes: must be > 0"; "captions_file: ..." with
  // captions too; "coco: ..." with captions or resize_shorter, which would move the pixels the
  // targets are in; "seg_masks: ..." likewise, and with coco or captions).
  absl::Status Validate() const;
};

struct PackInput {
  std::string path;
  std::string key;    // "class_name/file_stem": unique within the dataset.
  int64_t label = 0;  // -1: none (COCO images: their classes are their boxes' labels).
  uint64_t bytes = 0;
};

struct PackPlan {
  std::vector<PackInput> inputs;
  std::vector<std::string> class_names;
  // [begin, end) ranges of `inputs`, one per shard, in order.
  std::vector<std::pair<size_t, size_t>> shards;
  // What each record stores beside its image; null: nothing.
  std::shared_ptr<const PackFields> fields;
};

// Lists the inputs, reads what their fields come from (a captions file, a COCO file) and plans
// the shards. NOT_FOUND naming the input when it does not exist; INVALID_ARGUMENT when it holds
// no image, a list line does not parse (line number named), a location has a URL scheme Stoker
// does not know (named), or the captions or COCO file is refused (named).
absl::StatusOr<PackPlan> PlanPack(const Storage& storage, const PackOptions& options);

// Cuts plan->inputs into plan->shards: consecutive runs whose bytes reach `shard_bytes`.
void CutShards(uint64_t shard_bytes, PackPlan* plan);

// "shard-00003.stoker".
std::string ShardFileName(size_t shard);

}  // namespace stoker

#endif  // STOKER_PACK_PACK_PLAN_H_
