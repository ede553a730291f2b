// stoker-gen-images: writes a folder of natural-looking JPEGs, one subfolder per class
// (pack/image_generator.h), for the JPEG demo and benchmark. Existing files are kept. With
// --coco-images=N it writes a COCO-style detection and segmentation set instead: N scenes of
// shapes and their instances.json (pack/coco_scene_generator.h), for stoker-pack --coco.
//
//   stoker-gen-images --output=/tmp/images --classes=10 --per-class=300
//   stoker-gen-images --output=/tmp/coco --coco-images=200 --width=320 --height=240
//
// Exit codes: 0 done, 1 runtime error (printed), 2 bad flags.

#include <cstdio>

#include "common/flags.h"
#include "pack/coco_scene_generator.h"
#include "pack/image_generator.h"

int main(int argc, char** argv) {
  stoker::ImageFolderSpec spec;
  uint32_t width = 500;
  uint32_t height = 375;
  uint32_t quality = 90;
  stoker::FlagSet flags("stoker-gen-images", "Generates a folder of natural-looking JPEGs.");
  flags.Add("output", &spec.dir, "output folder (one subfolder per class)");
  flags.Add("classes", &spec.classes, "number of classes");
  flags.Add("per-class", &spec.per_class, "images per class");
  flags.Add("width", &width, "image width");
  flags.Add("height", &height, "image height");
  flags.Add("quality", &quality, "JPEG quality (1..100)");
  flags.Add("seed", &spec.seed, "seed of the pixels");
  flags.Add("threads", &spec.threads, "threads (0 = one per core)");
  uint32_t coco_images = 0;
  flags.Add("coco-images", &coco_images,
            "write a COCO-style set of this many scenes of shapes (OUTPUT/images/, "
            "OUTPUT/instances.json) instead of class folders (0 = class folders)");
  bool coco_jpeg = false;
  flags.Add("coco-jpeg", &coco_jpeg,
            "with --coco-images: every image a JPEG (default: PNG and JPEG in turn)");
  for (const char* same : {"classes", "width", "height", "quality"}) flags.MapField(same, same);
  flags.MapField("dir", "output");
  flags.MapField("per_class", "per-class");
  flags.MapField("images", "coco-images");
  if (auto exit_code = flags.Parse(argc, argv)) return *exit_code;
  spec.width = static_cast<int>(width);
  spec.height = static_cast<int>(height);
  spec.quality = static_cast<int>(quality);
  const absl::Status status =
      coco_images > 0 ? stoker::WriteCocoSet(stoker::CocoSetSpec{spec.dir, coco_images, spec.width,
                                                                 spec.height, spec.seed, coco_jpeg})
                      : stoker::GenerateImageFolder(spec);
  if (status.code() == absl::StatusCode::kInvalidArgument) return flags.Fail(status);
  if (!status.ok()) {
    std::fprintf(stderr, "stoker-gen-images: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
