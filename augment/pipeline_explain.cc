#include "augment/pipeline_explain.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "augment/op.h"
#include "augment/op_registry.h"
#include "augment/pipeline.h"
#include "augment/synthetic_images.h"
#include "common/counter_rng.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::string ShapeText(const ImageShape& shape) {
  const std::string h = shape.height == 0 ? "H" : absl::StrCat(shape.height);
  const std::string w = shape.width == 0 ? "W" : absl::StrCat(shape.width);
  return absl::StrCat(h, "x", w, "x", shape.channels, " ", PixelTypeName(shape.type));
}

// Op i's name as the registry (augment/op_registry.h) has it for op i of `spec`, the name the
// text syntax and the docs use; the compiled op's own name where the two do not line up.
std::string RegistryName(const stoker::v1::PipelineSpec& spec, size_t i, const Op& op) {
  if (i >= static_cast<size_t>(spec.ops_size())) return op.name();
  const OpSchema* schema = FindOpSchema(spec.ops(static_cast<int>(i)).op_case());
  return schema != nullptr ? schema->name : op.name();
}

// The shape each op produces from `sample`, by the ops' own shape rules (decode reads the
// header, so a DCT downscale shows).
absl::Status FillShapes(const stoker::v1::PipelineSpec& spec, const Pipeline& pipeline,
                        const SampleInput& sample, PipelineExplanation* out) {
  ImageShape current = sample.image.shape;
  ImageDecoder decoder;
  for (size_t i = 0; i < pipeline.num_ops(); ++i) {
    const Op& op = pipeline.op(i);
    absl::StatusOr<ImageShape> shape =
        op.TakesEncodedInput()
            ? op.ReadEncoded(sample.encoded,
                             i + 1 < pipeline.num_ops() ? &pipeline.op(i + 1) : nullptr, &decoder)
            : op.OutputShapeFor(current);
    if (!shape.ok()) {
      return PrefixStatus(absl::StrCat("pipeline.ops[", i, "] (", RegistryName(spec, i, op), "): "),
                          shape.status());
    }
    current = *shape;
    out->ops.push_back(ExplainedOp{RegistryName(spec, i, op), current, -1});
  }
  return absl::OkStatus();
}

// Times `runs` runs of `pipeline` on `sample`: each op's median into *op_medians, the whole
// run's into *total; *output holds the last run's output.
absl::Status TimeRuns(const Pipeline& pipeline, const SampleInput& sample, int runs, Clock* clock,
                      std::vector<double>* op_medians, double* total,
                      std::vector<uint8_t>* output) {
  PipelineWorkspace workspace;
  workspace.set_time_ops(true, clock);
  output->assign(pipeline.output_bytes_per_sample(), 0);
  std::vector<std::vector<double>> op_seconds(pipeline.num_ops());
  std::vector<double> totals;
  for (int run = -1; run < runs; ++run) {  // run -1 warms the buffers up
    CounterRng rng = SampleRng(0, 0, static_cast<uint64_t>(run + 1));
    const absl::Time start = clock->Now();
    RETURN_IF_ERROR(pipeline.Run(sample, &rng, &workspace, output->data()));
    if (run < 0) continue;
    totals.push_back(absl::ToDoubleSeconds(clock->Now() - start));
    for (size_t i = 0; i < pipeline.num_ops(); ++i) {
      op_seconds[i].push_back(workspace.op_seconds()[i]);
    }
  }
  op_medians->clear();
  for (const std::vector<double>& seconds : op_seconds) op_medians->push_back(Median(seconds));
  *total = Median(totals);
  return absl::OkStatus();
}

// Times `runs` runs of the pipeline on `sample`: each op's median and the whole run's.
absl::Status Measure(const Pipeline& pipeline, const SampleInput& sample, int runs, Clock* clock,
                     PipelineExplanation* out) {
  std::vector<uint8_t> output;
  std::vector<double> op_medians;
  RETURN_IF_ERROR(
      TimeRuns(pipeline, sample, runs, clock, &op_medians, &out->total_seconds, &output));
  for (size_t i = 0; i < pipeline.num_ops(); ++i) out->ops[i].seconds = op_medians[i];
  out->runs = runs;
  const BatchMix* mix = pipeline.batch_mix();
  if (mix == nullptr) return absl::OkStatus();
  const size_t batch = 16;
  std::vector<uint8_t> tensor(batch * output.size());
  for (size_t i = 0; i < batch; ++i) {
    std::copy(output.begin(), output.end(), tensor.begin() + i * output.size());
  }
  std::vector<int64_t> labels(batch);
  for (size_t i = 0; i < batch; ++i) labels[i] = static_cast<int64_t>(i % mix->num_classes());
  std::vector<float> soft(batch * mix->num_classes());
  ImageBuffer scratch;
  std::vector<double> per_image;
  for (int run = 0; run < runs; ++run) {
    CounterRng rng = BatchRng(0, 0, static_cast<uint64_t>(run));
    const absl::Time start = clock->Now();
    RETURN_IF_ERROR(mix->Apply(mix->Draw(&rng), tensor.data(), labels, &scratch, soft.data()));
    per_image.push_back(absl::ToDoubleSeconds(clock->Now() - start) / batch);
  }
  out->batch_stage_seconds = Median(per_image);
  return absl::OkStatus();
}

double SumOf(const std::vector<double>& seconds, size_t first, size_t end) {
  double sum = 0;
  for (size_t i = first; i < end; ++i) sum += std::max(0.0, seconds[i]);
  return sum;
}

// The decoded prefix of `spec` (compiled for the cache) on `sample`: its split and entry, and
// with runs > 0 the planner's costs, the uncached ones from `out`'s measured ops.
absl::Status ExplainPrefix(const stoker::v1::PipelineSpec& spec, const SampleInput& sample,
                           const Pipeline& uncached, int runs, Clock* clock,
                           PipelineExplanation* out) {
  const bool fuses_decode_crop = uncached.fuses_decode_crop();
  PipelineOptions options;
  options.decoded_prefix = true;
  ASSIGN_OR_RETURN(const Pipeline prefixed,
                   Pipeline::Compile(spec, InputFormat::Encoded(), options));
  PrefixExplanation prefix;
  prefix.prefix_ops = prefixed.prefix_ops();
  prefix.fingerprint = prefixed.prefix_fingerprint();
  prefix.fuses_decode_crop = fuses_decode_crop;
  prefix.auto_may_cache = !uncached.may_decode_window_downscaled() && prefixed.prefix_ops() > 0;
  prefix.compared_ops = std::max(prefix.prefix_ops, size_t{fuses_decode_crop ? 2u : 0u});
  PipelineWorkspace workspace;
  ImageView entry;
  RETURN_IF_ERROR(prefixed.RunPrefix(sample, &workspace, &entry));
  prefix.entry = entry.shape;
  if (runs > 0) {
    std::vector<double> op_medians;
    double total = 0;
    std::vector<uint8_t> output;
    RETURN_IF_ERROR(TimeRuns(prefixed, sample, runs, clock, &op_medians, &total, &output));
    prefix.miss_seconds = SumOf(op_medians, 0, prefix.prefix_ops);
    const uint8_t* entry_bytes = entry.pixels<const uint8_t>();
    std::vector<uint8_t> kept(entry_bytes, entry_bytes + entry.shape.bytes()), copy(kept.size());
    std::vector<double> copies;
    for (int run = 0; run < runs; ++run) {
      const absl::Time start = clock->Now();
      std::copy(kept.begin(), kept.end(), copy.begin());
      copies.push_back(absl::ToDoubleSeconds(clock->Now() - start));
    }
    prefix.copy_seconds = Median(copies);
    prefix.hit_seconds =
        prefix.copy_seconds + SumOf(op_medians, prefix.prefix_ops, prefix.compared_ops);
    std::vector<double> uncached;
    for (const ExplainedOp& op : out->ops) uncached.push_back(op.seconds);
    prefix.uncached_seconds = SumOf(uncached, 0, prefix.compared_ops);
  }
  out->prefix = prefix;
  return absl::OkStatus();
}

// "ops 0-2 (decode, resize, center_crop)".
std::string OpRangeText(const PipelineExplanation& e, size_t first, size_t end) {
  std::string names;
  for (size_t i = first; i < end; ++i)
    absl::StrAppend(&names, i > first ? ", " : "", e.ops[i].name);
  return absl::StrCat(end - first == 1 ? "op " : "ops ", first,
                      end - first == 1 ? "" : absl::StrCat("-", end - 1), " (", names, ")");
}

void AppendPrefixText(const PipelineExplanation& e, std::string* text) {
  const PrefixExplanation& p = *e.prefix;
  absl::StrAppendFormat(text, "decoded prefix: %s, fingerprint 0x%016x\n",
                        OpRangeText(e, 0, p.prefix_ops), p.fingerprint);
  absl::StrAppendFormat(text, "  one cached entry: %s, %d bytes\n", ShapeText(p.entry),
                        p.entry.bytes());
  if (p.hit_seconds < 0) {
    absl::StrAppend(text, "decoded cache: costs not measured\n");
    return;
  }
  absl::StrAppendFormat(text,
                        "  miss (the prefix, epoch 1): %.1f us/image, %.2f ns of decode CPU per "
                        "byte kept\n",
                        p.miss_seconds * 1e6, p.miss_ns_per_byte());
  const std::string then =
      p.compared_ops > p.prefix_ops
          ? absl::StrCat(", then ", OpRangeText(e, p.prefix_ops, p.compared_ops), " on it")
          : "";
  absl::StrAppendFormat(text, "  hit (copy the entry%s): %.1f us/image\n", then,
                        p.hit_seconds * 1e6);
  absl::StrAppendFormat(text, "  without the cache (%s%s): %.1f us/image\n",
                        OpRangeText(e, 0, p.compared_ops), p.fuses_decode_crop ? ", fused" : "",
                        p.uncached_seconds * 1e6);
  const uint32_t passes = p.break_even_passes();
  absl::StrAppendFormat(text, "decoded cache: %s: a hit costs %.3f ms, %s %.3f ms\n",
                        passes > 0 ? absl::StrCat("worth it from epoch ", passes) : "not worth it",
                        p.hit_seconds * 1e3,
                        p.fuses_decode_crop ? "the fused decode+crop" : "decoding again",
                        p.uncached_seconds * 1e3);
  if (p.miss_ns_per_byte() < kMinPrefixNanosPerByte) {
    absl::StrAppendFormat(text,
                          "  admission: decoded_cache=on keeps no entry (%.2f ns of decode CPU per "
                          "byte kept, under %.0f); decoded_cache=always keeps them\n",
                          p.miss_ns_per_byte(), kMinPrefixNanosPerByte);
  }
  absl::StrAppend(
      text, p.auto_may_cache
                ? "  auto (the default): each worker with a cache times the job's first samples "
                  "both ways and keeps the cache when it pays over the job's epochs\n"
                : "  auto (the default): off: the fused decode may decode the window at a DCT "
                  "scale, so the cache would change bytes (decoded_cache=on forces it, unfused)\n");
}

std::string BatchStageText(const stoker::v1::BatchMixOp& mix) {
  std::string text;
  if (mix.mixup_alpha() > 0) text = absl::StrCat("mixup(alpha=", mix.mixup_alpha(), ")");
  if (mix.cutmix_alpha() > 0) {
    absl::StrAppend(&text, text.empty() ? "" : " or ", "cutmix(alpha=", mix.cutmix_alpha(), ")");
  }
  return text;
}

}  // namespace

absl::StatusOr<ImageShape> ParseInputShape(const std::string& text, const std::string& field) {
  const std::vector<std::string> parts = absl::StrSplit(text, 'x');
  uint32_t dims[3] = {0, 0, 0};
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &dims[0]) ||
      !absl::SimpleAtoi(parts[1], &dims[1]) || !absl::SimpleAtoi(parts[2], &dims[2]) ||
      dims[0] == 0 || dims[1] == 0 || dims[0] > 16384 || dims[1] > 16384 ||
      (dims[2] != 1 && dims[2] != 3)) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": expected HxWxC (height and width 1..16384, C 1 or 3), got '", text, "'"));
  }
  return ImageShape{dims[0], dims[1], dims[2], PixelType::kUint8};
}

absl::StatusOr<PipelineExplanation> ExplainPipeline(const stoker::v1::PipelineSpec& spec,
                                                    const ExplainOptions& options) {
  PipelineExplanation out;
  out.input = options.input;
  out.encoded = spec.ops_size() > 0 && spec.ops(0).has_decode();
  if (options.input.elements() == 0) return absl::InvalidArgumentError("input: empty shape");
  ASSIGN_OR_RETURN(Pipeline pipeline,
                   Pipeline::Compile(spec, out.encoded ? InputFormat::Encoded()
                                                       : InputFormat::Decoded(options.input)));
  const std::vector<uint8_t> pixels =
      NaturalImage(options.input.height, options.input.width, options.input.channels, /*seed=*/1);
  const ImageView image{const_cast<uint8_t*>(pixels.data()), options.input};
  const std::vector<uint8_t> jpeg = out.encoded ? EncodeJpeg(image, 90) : std::vector<uint8_t>();
  const SampleInput sample = out.encoded ? SampleInput::Encoded(jpeg) : SampleInput::Decoded(image);
  const std::string context =
      absl::StrCat("running on a ", options.input.height, "x", options.input.width, "x",
                   options.input.channels, " image: ");
  if (absl::Status status = FillShapes(spec, pipeline, sample, &out); !status.ok()) {
    return PrefixStatus(context, status);
  }
  for (int64_t dim : pipeline.BatchShape(1)) out.sample_shape.push_back(dim);
  out.sample_shape.erase(out.sample_shape.begin());
  out.output_dtype = pipeline.output_dtype() == stoker::v1::DTYPE_UINT8 ? "uint8" : "float32";
  out.output_layout = pipeline.output_layout() == stoker::v1::LAYOUT_CHW ? "CHW" : "HWC";
  out.output_bytes_per_sample = pipeline.output_bytes_per_sample();
  if (pipeline.batch_mix() != nullptr) {
    out.batch_stage = BatchStageText(spec.batch_mix());
    out.num_classes = pipeline.batch_mix()->num_classes();
  }
  if (options.runs > 0) {
    if (absl::Status status = Measure(pipeline, sample, options.runs, options.clock, &out);
        !status.ok()) {
      return PrefixStatus(context, status);
    }
  }
  if (out.encoded) {
    if (absl::Status status =
            ExplainPrefix(spec, sample, pipeline, options.runs, options.clock, &out);
        !status.ok()) {
      return PrefixStatus(context, status);
    }
  }
  return out;
}

double PrefixExplanation::miss_ns_per_byte() const {
  return entry.bytes() == 0 || miss_seconds < 0 ? -1 : miss_seconds * 1e9 / entry.bytes();
}

DecodedCacheCosts PrefixExplanation::costs() const {
  DecodedCacheCosts costs;
  costs.uncached_seconds = uncached_seconds;
  costs.miss_seconds = miss_seconds + hit_seconds;
  costs.hit_seconds = hit_seconds;
  costs.prefix_seconds = miss_seconds;
  costs.entry_bytes = static_cast<double>(entry.bytes());
  return costs;
}

uint32_t PrefixExplanation::break_even_passes() const {
  return hit_seconds < 0 ? 0 : DecodedCacheBreakEvenPasses(costs());
}

std::string FormatExplanation(const PipelineExplanation& e) {
  auto micros = [](double seconds) {
    return seconds < 0 ? std::string("-") : absl::StrFormat("%.1f", seconds * 1e6);
  };
  auto per_element = [](double seconds, const ImageShape& shape) {
    return seconds < 0 || shape.elements() == 0
               ? std::string("-")
               : absl::StrFormat("%.2f", seconds * 1e9 / shape.elements());
  };
  std::string text =
      absl::StrFormat("input: %s%s\n%3s  %-22s %-22s %12s %14s\n", ShapeText(e.input),
                      e.encoded ? " (encoded: a JPEG of that size, quality 90)" : "", "#", "op",
                      "output", "us/image", "ns/out elem");
  for (size_t i = 0; i < e.ops.size(); ++i) {
    const ExplainedOp& op = e.ops[i];
    absl::StrAppendFormat(&text, "%3d  %-22s %-22s %12s %14s\n", i, op.name, ShapeText(op.output),
                          micros(op.seconds), per_element(op.seconds, op.output));
  }
  if (!e.batch_stage.empty()) {
    absl::StrAppendFormat(&text, "%3s  %-22s %-22s %12s %14s\n", "b", "batch_mix",
                          absl::StrCat("+ soft labels [N,", e.num_classes, "]"),
                          micros(e.batch_stage_seconds), "-");
    absl::StrAppend(&text, "     batch_mix: ", e.batch_stage, " per batch\n");
  }
  std::string shape;
  for (int64_t dim : e.sample_shape) absl::StrAppend(&shape, shape.empty() ? "" : "x", dim);
  absl::StrAppendFormat(&text, "output per sample: %s %s %s, %d bytes\n", shape, e.output_dtype,
                        e.output_layout, e.output_bytes_per_sample);
  if (e.total_seconds < 0) {
    absl::StrAppend(&text, "costs: not measured\n");
    if (e.prefix.has_value()) AppendPrefixText(e, &text);
    return text;
  }
  const double total = e.total_seconds + std::max(0.0, e.batch_stage_seconds);
  absl::StrAppendFormat(&text,
                        "total: %.1f us/image (ops, output conversion%s) = %.0f images/s per "
                        "core\ncosts: measured on this machine, median of %d runs on a synthetic "
                        "natural image (estimates: a busy machine reads higher)\n",
                        total * 1e6, e.batch_stage.empty() ? "" : ", batch stage", 1.0 / total,
                        e.runs);
  if (e.prefix.has_value()) AppendPrefixText(e, &text);
  return text;
}

}  // namespace stoker
