#ifndef STOKER_BENCH_RECIPE_SCENES_H_
#define STOKER_BENCH_RECIPE_SCENES_H_

// The inputs of the detection and CLIP recipes of bench augment-recipes: COCO-style scenes
// (natural-looking JPEGs with boxes, box labels and a caption), written to one file both sides
// read (bench/augment_recipes_torchvision.py reads the same layout). Per scene, little-endian:
//   u32 jpeg size, the JPEG bytes, u32 box count N, N x 4 float32 XYXY pixels, N int64 labels,
//   u32 caption size, the caption's UTF-8 bytes.

#include <cstdint>
#include <string>
#include <vector>

namespace stoker {

struct RecipeScene {
  std::vector<uint8_t> jpeg;
  std::vector<float> boxes;  // XYXY pixels
  std::vector<int64_t> labels;
  std::string caption;
};

// `count` scenes of height x width, the same for the same arguments; with `restart_markers`,
// each JPEG rewritten as `stoker-pack --restart-markers` writes it (AddJpegRestartMarkers), which
// lets Stoker's fused decode skip the intervals outside its window. Empty on failure.
std::vector<RecipeScene> MakeRecipeScenes(uint32_t count, uint32_t height, uint32_t width,
                                          bool restart_markers);

// Writes and reads the file above; false when the file cannot be written or read whole.
bool WriteRecipeScenes(const std::string& path, const std::vector<RecipeScene>& scenes);
bool ReadRecipeScenes(const std::string& path, std::vector<RecipeScene>* scenes);

}  // namespace stoker

#endif  // STOKER_BENCH_RECIPE_SCENES_H_
