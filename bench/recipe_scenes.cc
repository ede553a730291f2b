#include "bench/recipe_scenes.h"

#include <algorithm>
#include <fstream>
#include <utility>

#include "augment/kernels/jpeg_restart_markers.h"
#include "augment/synthetic_images.h"
#include "common/counter_rng.h"
#include "image/image.h"

namespace stoker {
namespace {

constexpr uint32_t kBoxesPerScene = 5;
constexpr int kJpegQuality = 90;

template <typename T>
void Put(std::ofstream& out, const T* values, size_t count) {
  out.write(reinterpret_cast<const char*>(values), static_cast<std::streamsize>(count * sizeof(T)));
}

template <typename T>
bool Get(std::ifstream& in, T* values, size_t count) {
  in.read(reinterpret_cast<char*>(values), static_cast<std::streamsize>(count * sizeof(T)));
  return in.good();
}

}  // namespace

std::vector<RecipeScene> MakeRecipeScenes(uint32_t count, uint32_t height, uint32_t width,
                                          bool restart_markers) {
  std::vector<RecipeScene> scenes(count);
  for (uint32_t i = 0; i < count; ++i) {
    std::vector<uint8_t> pixels = NaturalImage(height, width, 3, 2000 + i);
    RecipeScene& scene = scenes[i];
    scene.jpeg = EncodeJpeg(
        ImageView{pixels.data(), ImageShape{height, width, 3, PixelType::kUint8}}, kJpegQuality);
    if (restart_markers) {
      absl::StatusOr<std::vector<uint8_t>> marked = AddJpegRestartMarkers(scene.jpeg);
      if (!marked.ok()) return {};
      scene.jpeg = *std::move(marked);
    }
    CounterRng rng = SampleRng(77, 0, i);
    for (uint32_t b = 0; b < kBoxesPerScene; ++b) {  // Objects of 1/10 to 1/2 of a side.
      const float w = width * rng.UniformFloat(0.1f, 0.5f);
      const float h = height * rng.UniformFloat(0.1f, 0.5f);
      const float x = (width - w) * rng.UniformFloat(), y = (height - h) * rng.UniformFloat();
      scene.boxes.insert(scene.boxes.end(), {x, y, x + w, y + h});
      scene.labels.push_back(1 + static_cast<int64_t>(rng.UniformInt(90)));
    }
    scene.caption = "a photo of scene " + std::to_string(i) + " with five objects";
  }
  return scenes;
}

bool WriteRecipeScenes(const std::string& path, const std::vector<RecipeScene>& scenes) {
  std::ofstream out(path, std::ios::binary);
  for (const RecipeScene& scene : scenes) {
    const uint32_t sizes[3] = {static_cast<uint32_t>(scene.jpeg.size()),
                               static_cast<uint32_t>(scene.labels.size()),
                               static_cast<uint32_t>(scene.caption.size())};
    Put(out, &sizes[0], 1);
    Put(out, scene.jpeg.data(), scene.jpeg.size());
    Put(out, &sizes[1], 1);
    Put(out, scene.boxes.data(), scene.boxes.size());
    Put(out, scene.labels.data(), scene.labels.size());
    Put(out, &sizes[2], 1);
    Put(out, scene.caption.data(), scene.caption.size());
  }
  return out.good();
}

bool ReadRecipeScenes(const std::string& path, std::vector<RecipeScene>* scenes) {
  std::ifstream in(path, std::ios::binary);
  uint32_t size = 0;
  while (in.read(reinterpret_cast<char*>(&size), sizeof(size))) {
    RecipeScene scene;
    scene.jpeg.resize(size);
    if (!Get(in, scene.jpeg.data(), size) || !Get(in, &size, 1)) return false;
    scene.boxes.resize(size_t{size} * 4);
    scene.labels.resize(size);
    if (!Get(in, scene.boxes.data(), scene.boxes.size()) || !Get(in, scene.labels.data(), size) ||
        !Get(in, &size, 1)) {
      return false;
    }
    scene.caption.resize(size);
    if (!Get(in, scene.caption.data(), size)) return false;
    scenes->push_back(std::move(scene));
  }
  return !scenes->empty();
}

}  // namespace stoker
