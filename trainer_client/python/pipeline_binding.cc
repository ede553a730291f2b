#include "trainer_client/python/pipeline_binding.h"

#include <pybind11/numpy.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/batch_mix.h"
#include "augment/op.h"
#include "augment/op_params.h"
#include "augment/op_registry.h"
#include "augment/pipeline.h"
#include "augment/pipeline_explain.h"
#include "augment/pipeline_text.h"
#include "common/counter_rng.h"
#include "jobspec/job_spec_args.h"

namespace stoker {
namespace {

namespace py = pybind11;

using Uint8Array = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;

// The pipeline of `text` with HWC output of the pipeline's own dtype.
absl::StatusOr<Pipeline> CompileText(const std::string& text, const InputFormat& input) {
  absl::StatusOr<v1::PipelineSpec> spec = ParsePipelineText(text);
  if (!spec.ok()) return spec.status();
  spec->set_output_layout(v1::LAYOUT_HWC);
  return Pipeline::Compile(*spec, input);
}

// An HWC array of the pipeline's result shape and output dtype.
py::array OutputArray(const Pipeline& pipeline) {
  const ImageShape& shape = pipeline.result_shape();
  const std::vector<py::ssize_t> dims = {shape.height, shape.width, shape.channels};
  if (pipeline.output_dtype() == v1::DTYPE_FLOAT32) return py::array_t<float>(dims);
  return py::array_t<uint8_t>(dims);
}

py::array RunPipeline(const std::string& text, const py::object& sample, uint64_t seed,
                      uint32_t epoch, uint64_t index, void (*throw_status)(const absl::Status&)) {
  const bool encoded = py::isinstance<py::bytes>(sample);
  std::string bytes;
  Uint8Array image;
  ImageView view;
  if (encoded) {
    bytes = sample.cast<std::string>();
  } else {
    image = sample.cast<Uint8Array>();
    if (image.ndim() != 2 && image.ndim() != 3) {
      throw_status(absl::InvalidArgumentError("image: expected a uint8 array H x W [x C]"));
    }
    const uint32_t channels = image.ndim() == 3 ? static_cast<uint32_t>(image.shape(2)) : 1;
    // The pipeline only reads its input (pipeline.h), so a read-only array is fine.
    view =
        ImageView{const_cast<uint8_t*>(image.data()),
                  ImageShape{static_cast<uint32_t>(image.shape(0)),
                             static_cast<uint32_t>(image.shape(1)), channels, PixelType::kUint8}};
  }
  absl::StatusOr<Pipeline> pipeline =
      CompileText(text, encoded ? InputFormat::Encoded() : InputFormat::Decoded(view.shape));
  if (!pipeline.ok()) throw_status(pipeline.status());
  py::array out = OutputArray(*pipeline);
  PipelineWorkspace workspace;
  CounterRng rng = SampleRng(seed, epoch, index);
  const absl::Span<const uint8_t> span(reinterpret_cast<const uint8_t*>(bytes.data()),
                                       bytes.size());
  const absl::Status status =
      pipeline->Run(encoded ? SampleInput::Encoded(span) : SampleInput::Decoded(view), &rng,
                    &workspace, static_cast<uint8_t*>(out.mutable_data()));
  if (!status.ok()) throw_status(status);
  return out;
}

// stoker-ctl pipeline explain's table (augment/pipeline_explain.h) for `text`.
std::string ExplainText(const std::string& text, const std::string& input,
                        const std::string& layout, const std::string& dtype, int runs,
                        void (*throw_status)(const absl::Status&)) {
  JobSpecArgs args;
  args.num_samples = 1;
  args.pipeline = text;
  args.layout = layout;
  args.dtype = dtype;
  absl::StatusOr<v1::JobSpec> spec = args.ToJobSpec([](absl::string_view field) {
    return std::string(field);  // The Python argument names are the fields'.
  });
  if (!spec.ok()) throw_status(spec.status());
  ExplainOptions options;
  absl::StatusOr<ImageShape> shape = ParseInputShape(input, "input");
  if (!shape.ok()) throw_status(shape.status());
  if (runs < 0) throw_status(absl::InvalidArgumentError("runs: must be >= 0"));
  options.input = *shape;
  options.runs = runs;
  absl::StatusOr<PipelineExplanation> explanation = ExplainPipeline(spec->pipeline(), options);
  if (!explanation.ok()) throw_status(explanation.status());
  return FormatExplanation(*explanation);
}

// The parameters op `text` (one op) draws for samples first_index .. first_index + count - 1
// of an image of `shape` (augment/op_params.h): a list of lists of floats.
py::list DrawParams(const std::string& text, const ImageShape& shape, uint64_t seed, uint32_t epoch,
                    uint64_t first_index, uint64_t count,
                    void (*throw_status)(const absl::Status&)) {
  absl::StatusOr<v1::PipelineSpec> spec = ParsePipelineText(text);
  if (!spec.ok()) throw_status(spec.status());
  if (spec->ops_size() != 1) {
    throw_status(absl::InvalidArgumentError(
        absl::StrCat("draw_params takes one op, got ", spec->ops_size())));
  }
  absl::StatusOr<std::unique_ptr<Op>> op = CreateOp(spec->ops(0), 0, shape);
  if (!op.ok()) throw_status(op.status());
  py::list all;
  for (uint64_t i = 0; i < count; ++i) {
    CounterRng rng = SampleRng(seed, epoch, first_index + i);
    absl::StatusOr<std::vector<double>> params = DrawOpParams(**op, shape, &rng);
    if (!params.ok()) throw_status(params.status());
    py::list values;
    for (double v : *params) values.append(v);
    all.append(values);
  }
  return all;
}

// One op's schema as plain Python data, for stoker.from_torchvision's argument checks: the
// registry stays the one description of the ops (augment/op_registry.h).
py::dict SchemaDict(const OpSchema& schema, bool batch) {
  py::list args;
  for (const ArgSchema& arg : schema.args) {
    py::dict a;
    a["name"] = arg.name;
    a["type"] = ArgTypeName(arg.type);
    a["default"] =
        arg.default_value.empty() ? py::object(py::none()) : py::object(py::str(arg.default_value));
    a["doc"] = arg.doc;
    if (arg.range) {
      py::dict range;
      range["min"] = arg.range->min;
      range["min_open"] = arg.range->min_open;
      range["max"] = arg.range->max;
      range["max_open"] = arg.range->max_open;
      range["text"] = arg.range->Text();
      a["range"] = range;
    } else {
      a["range"] = py::none();
    }
    args.append(a);
  }
  py::dict torchvision;
  torchvision["counterpart"] = schema.torchvision.counterpart;
  torchvision["dtypes"] = schema.torchvision.dtypes;
  torchvision["tested"] = schema.torchvision.tested;
  py::dict out;
  out["name"] = schema.name;
  out["batch"] = batch;
  out["doc"] = schema.doc;
  out["args"] = args;
  out["torchvision"] = torchvision;
  return out;
}

py::list OpSchemaList() {
  py::list schemas;
  for (const OpSchema& schema : OpSchemas()) schemas.append(SchemaDict(schema, false));
  for (const OpSchema& schema : BatchOpSchemas()) schemas.append(SchemaDict(schema, true));
  return schemas;
}

}  // namespace

void DefinePipelineFunctions(py::module_& m, void (*throw_status)(const absl::Status& status)) {
  m.def(
      "run_pipeline",
      [throw_status](const std::string& text, const py::object& sample, uint64_t seed,
                     uint32_t epoch, uint64_t index) {
        return RunPipeline(text, sample, seed, epoch, index, throw_status);
      },
      py::arg("pipeline"), py::arg("sample"), py::arg("seed") = 0, py::arg("epoch") = 0,
      py::arg("index") = 0,
      "Runs one sample through `pipeline` (text syntax) here, with the RNG of sample `index` of "
      "`epoch` of a job with `seed`: `sample` is a uint8 array H x W [x C] or, for a pipeline "
      "starting with decode, the encoded bytes. Returns the result, H x W x C, uint8 or float32.");
  m.def(
      "explain_pipeline",
      [throw_status](const std::string& text, const std::string& input, const std::string& layout,
                     const std::string& dtype, int runs) {
        return ExplainText(text, input, layout, dtype, runs, throw_status);
      },
      py::arg("pipeline"), py::arg("input") = "375x500x3", py::arg("layout") = "hwc",
      py::arg("dtype") = "auto", py::arg("runs") = 15,
      "stoker-ctl pipeline explain as a str: each op's output shape and dtype and its cost per "
      "image measured here on a synthetic `input` (HxWxC) image.");
  m.def("op_schemas", &OpSchemaList,
        "The op registry: per op (per-sample ops in documentation order, then the batch ops) a "
        "dict with name, batch, doc, args (name, type, default or None, doc, range or None: "
        "min, min_open, max, max_open, text) and torchvision (counterpart, dtypes, tested).");
  m.def(
      "draw_params",
      [throw_status](const std::string& text, uint32_t height, uint32_t width, uint32_t channels,
                     bool is_float, uint64_t seed, uint32_t epoch, uint64_t first_index,
                     uint64_t count) {
        const ImageShape shape{height, width, channels,
                               is_float ? PixelType::kFloat32 : PixelType::kUint8};
        return DrawParams(text, shape, seed, epoch, first_index, count, throw_status);
      },
      py::arg("op"), py::arg("height"), py::arg("width"), py::arg("channels") = 3,
      py::arg("is_float") = false, py::arg("seed") = 0, py::arg("epoch") = 0,
      py::arg("first_index") = 0, py::arg("count") = 1,
      "Test and debug hook: the parameters one random op (text syntax) draws for `count` "
      "samples from `first_index`, for an image of height x width x channels (float32 when "
      "is_float), with the same draw code its run uses. A list of lists of floats; what each op "
      "returns is in docs/augmentations.md.");
}

}  // namespace stoker
