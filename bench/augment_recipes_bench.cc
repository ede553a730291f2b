// bench augment-recipes, Stoker's side (bench/augment-recipes.sh drives it and torchvision's
// side, bench/augment_recipes_torchvision.py, in alternating rounds).
//
//   augment_recipes_bench --write_inputs=PATH --images=N --height=H --width=W
//     writes N natural-looking uint8 HWC images (augment/synthetic_images.h), back to back,
//     the decoded inputs both sides read;
//   augment_recipes_bench --inputs=PATH --images=N --height=H --width=W --pipeline=TEXT
//                         --batch=B --seconds=S
//     one round, one thread: batches of B images through the compiled pipeline (decoded uint8 in,
//     float32 normalized CHW out, each image written into its slot of the batch tensor, as a
//     worker does), then the batch stage (MixUp/CutMix) when the pipeline has one; prints
//     `stoker_ips=<images per wall-clock second> stoker_cpu_ips=<images per CPU second>`;
//   augment_recipes_bench --write_scenes=PATH --images=N --height=H --width=W
//     [--restart_markers]
//     writes N COCO-style JPEG scenes with boxes and captions (bench/recipe_scenes.h);
//   augment_recipes_bench --scenes=PATH --height=H --width=W --pipeline=TEXT --batch=B
//                         --seconds=S [--targets]
//     one round of the detection (--targets: boxes moved with the image) or CLIP recipe
//     (caption passed through) from the encoded scenes, printing the same figures.

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "augment/pipeline.h"
#include "augment/pipeline_text.h"
#include "augment/synthetic_images.h"
#include "bench/recipe_scenes.h"
#include "common/clock.h"
#include "common/counter_rng.h"
#include "common/flags.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

struct Config {
  std::string write_inputs;
  std::string inputs;
  std::string pipeline;
  std::string write_scenes;  // the detection and CLIP recipes' inputs (bench/recipe_scenes.h)
  std::string scenes;
  bool targets = false;
  bool restart_markers = false;  // --write_scenes: as stoker-pack --restart-markers writes them
  uint32_t images = 64;
  uint32_t height = 375;
  uint32_t width = 500;
  uint32_t batch = 32;
  absl::Duration round = absl::Seconds(3);
  uint32_t batches = 0;  // > 0: the round is this many batches instead (fixed work, for perf)
};

int WriteScenes(const Config& config) {
  const std::vector<RecipeScene> scenes =
      MakeRecipeScenes(config.images, config.height, config.width, config.restart_markers);
  return !scenes.empty() && WriteRecipeScenes(config.write_scenes, scenes) ? 0 : 1;
}

int WriteInputs(const Config& config) {
  std::ofstream out(config.write_inputs, std::ios::binary);
  for (uint32_t i = 0; i < config.images; ++i) {
    const std::vector<uint8_t> image = NaturalImage(config.height, config.width, 3, 1000 + i);
    out.write(reinterpret_cast<const char*>(image.data()),
              static_cast<std::streamsize>(image.size()));
  }
  return out.good() ? 0 : 1;
}

// Runs `one_batch` once to size the buffers, `reset`, then batches for the round's length;
// prints `stoker_ips=<images per wall-clock second> stoker_cpu_ips=<images per CPU second>`.
int TimeRound(const Config& config, const std::function<absl::Status()>& one_batch,
              const std::function<void()>& reset) {
  if (absl::Status status = one_batch(); !status.ok()) {  // warm-up: buffers sized
    return std::fprintf(stderr, "%s\n", status.ToString().c_str()), 1;
  }
  reset();
  uint64_t images = 0;
  Clock* const clock = Clock::Real();
  const absl::Time start = clock->Now();
  const absl::Duration cpu_start = ProcessCpuTime();
  absl::Duration elapsed;
  uint64_t batches = 0;
  while (config.batches > 0 ? batches < config.batches : elapsed < config.round) {
    if (absl::Status status = one_batch(); !status.ok()) {
      return std::fprintf(stderr, "%s\n", status.ToString().c_str()), 1;
    }
    images += config.batch;
    ++batches;
    elapsed = clock->Now() - start;
  }
  const double cpu = absl::ToDoubleSeconds(ProcessCpuTime() - cpu_start);
  std::printf("stoker_ips=%.2f stoker_cpu_ips=%.2f\n",
              static_cast<double>(images) / absl::ToDoubleSeconds(elapsed),
              static_cast<double>(images) / cpu);
  return 0;
}

int Round(const Config& config) {
  const ImageShape shape{config.height, config.width, 3, PixelType::kUint8};
  std::vector<uint8_t> inputs(shape.bytes() * config.images);
  std::ifstream in(config.inputs, std::ios::binary);
  in.read(reinterpret_cast<char*>(inputs.data()), static_cast<std::streamsize>(inputs.size()));
  if (!in.good()) {
    std::fprintf(stderr, "augment_recipes_bench: cannot read %s\n", config.inputs.c_str());
    return 1;
  }
  absl::StatusOr<stoker::v1::PipelineSpec> spec = ParsePipelineText(config.pipeline);
  if (!spec.ok()) return std::fprintf(stderr, "%s\n", spec.status().ToString().c_str()), 1;
  spec->set_output_layout(stoker::v1::LAYOUT_CHW);
  absl::StatusOr<Pipeline> pipeline = Pipeline::Compile(*spec, shape);
  if (!pipeline.ok()) return std::fprintf(stderr, "%s\n", pipeline.status().ToString().c_str()), 1;
  const size_t sample_bytes = pipeline->output_bytes_per_sample();
  std::vector<float> batch(sample_bytes * config.batch / sizeof(float));
  std::vector<int64_t> labels(config.batch);
  std::vector<float> soft;
  const BatchMix* mix = pipeline->batch_mix();
  if (mix != nullptr) soft.resize(size_t{config.batch} * mix->num_classes());
  PipelineWorkspace workspace;
  ImageBuffer mix_scratch;
  uint64_t index = 0, batches = 0;
  auto one_batch = [&]() -> absl::Status {
    uint8_t* slot = reinterpret_cast<uint8_t*>(batch.data());
    for (uint32_t i = 0; i < config.batch; ++i, ++index, slot += sample_bytes) {
      CounterRng rng = SampleRng(1, 0, index);
      const uint8_t* image = inputs.data() + (index % config.images) * shape.bytes();
      labels[i] = static_cast<int64_t>(index % 1000);
      absl::Status status =
          pipeline->Run(ImageView{const_cast<uint8_t*>(image), shape}, &rng, &workspace, slot);
      if (!status.ok()) return status;
    }
    if (mix == nullptr) return absl::OkStatus();
    CounterRng rng = BatchRng(1, 0, batches++);
    return mix->Apply(mix->Draw(&rng), reinterpret_cast<uint8_t*>(batch.data()), labels,
                      &mix_scratch, soft.data());
  };
  return TimeRound(config, one_batch, [&] {
    index = 0;
    batches = 0;
  });
}

// The detection and CLIP recipes: encoded scenes in (ReadRecipeScenes); each sample's
// augmented image lands in its batch slot and, with --targets, its moved boxes and labels in
// the batch's box lists (else its caption is passed through into the batch's captions).
int SceneRound(const Config& config) {
  std::vector<RecipeScene> scenes;
  if (!ReadRecipeScenes(config.scenes, &scenes)) {
    std::fprintf(stderr, "augment_recipes_bench: cannot read %s\n", config.scenes.c_str());
    return 1;
  }
  absl::StatusOr<stoker::v1::PipelineSpec> spec = ParsePipelineText(config.pipeline);
  if (!spec.ok()) return std::fprintf(stderr, "%s\n", spec.status().ToString().c_str()), 1;
  spec->set_output_layout(stoker::v1::LAYOUT_CHW);
  PipelineOptions options;
  options.with_targets = config.targets;
  absl::StatusOr<Pipeline> pipeline = Pipeline::Compile(*spec, InputFormat::Encoded(), options);
  if (!pipeline.ok()) return std::fprintf(stderr, "%s\n", pipeline.status().ToString().c_str()), 1;
  const size_t sample_bytes = pipeline->output_bytes_per_sample();
  std::vector<float> batch(sample_bytes * config.batch / sizeof(float));
  std::vector<SampleTargets> targets(config.batch);
  std::vector<std::string> captions(config.batch);
  PipelineWorkspace workspace;
  uint64_t index = 0;
  auto one_batch = [&]() -> absl::Status {
    uint8_t* slot = reinterpret_cast<uint8_t*>(batch.data());
    for (uint32_t i = 0; i < config.batch; ++i, ++index, slot += sample_bytes) {
      CounterRng rng = SampleRng(1, 0, index);
      const RecipeScene& scene = scenes[index % scenes.size()];
      const SampleInput input = SampleInput::Encoded(scene.jpeg);
      if (!config.targets) {
        captions[i] = scene.caption;
        RETURN_IF_ERROR(pipeline->Run(input, &rng, &workspace, slot));
        continue;
      }
      SampleTargets& sample = targets[i];
      sample.canvas_height = config.height;
      sample.canvas_width = config.width;
      sample.boxes = scene.boxes;
      sample.box_labels = scene.labels;
      RETURN_IF_ERROR(pipeline->RunWithTargets(input, &rng, &workspace, slot, &sample));
    }
    return absl::OkStatus();
  };
  return TimeRound(config, one_batch, [&] { index = 0; });
}

}  // namespace
}  // namespace stoker

int main(int argc, char** argv) {
  stoker::Config config;
  stoker::FlagSet flags("augment_recipes_bench",
                        "One round of an augmentation recipe on decoded images (Stoker's side).");
  flags.Add("write_inputs", &config.write_inputs, "Write the input images here and exit");
  flags.Add("inputs", &config.inputs, "Input images written by --write_inputs");
  flags.Add("write_scenes", &config.write_scenes, "Write the encoded scenes here and exit");
  flags.Add("restart_markers", &config.restart_markers,
            "--write_scenes: JPEGs with restart markers, as stoker-pack --restart-markers");
  flags.Add("scenes", &config.scenes, "Encoded scenes written by --write_scenes");
  flags.Add("targets", &config.targets, "Run the scenes with their boxes (else captions)");
  flags.Add("pipeline", &config.pipeline, "Pipeline text");
  flags.Add("images", &config.images, "Number of input images");
  flags.Add("height", &config.height, "Input height");
  flags.Add("width", &config.width, "Input width");
  flags.Add("batch", &config.batch, "Images per batch");
  flags.Add("seconds", &config.round, absl::Seconds(1), "Length of the round");
  flags.Add("batches", &config.batches,
            "When > 0, the round is this many batches instead of --seconds (a fixed amount of "
            "work, for perf stat and perf record)");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  if (config.images == 0 || config.batch == 0 || config.height == 0 || config.width == 0) {
    return flags.Fail(absl::InvalidArgumentError("--images, --batch, --height, --width: > 0"));
  }
  if (!config.write_scenes.empty()) return stoker::WriteScenes(config);
  if (!config.scenes.empty()) return stoker::SceneRound(config);
  return config.write_inputs.empty() ? stoker::Round(config) : stoker::WriteInputs(config);
}
