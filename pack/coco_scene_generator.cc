#include "pack/coco_scene_generator.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/atomic_file.h"
#include "opencv2/imgcodecs.hpp"
#include "opencv2/imgproc.hpp"
#include "pack/coco_masks.h"
#include "pack/image_generator.h"

namespace stoker {
namespace {

enum ShapeKind { kBox, kTriangle, kSlab, kDisc, kNoShape };
constexpr int64_t kCategoryOf[] = {1, 2, 3, 7};
constexpr const char* kCategoryNames[] = {"box", "triangle", "slab", "disc"};

// Exact in JSON and back: quarter pixels and box centres need more than %g's 6 digits.
std::string Number(double value) { return absl::StrFormat("%.17g", value); }

std::string NumberList(const std::vector<double>& values) {
  return absl::StrCat(
      "[",
      absl::StrJoin(values, ", ",
                    [](std::string* out, double value) { out->append(Number(value)); }),
      "]");
}

// The pixels of [x0, x1) × [y0, y1) as a row-major mask of the image.
std::vector<uint8_t> RectangleMask(int x0, int y0, int x1, int y1, int width, int height) {
  std::vector<uint8_t> mask(size_t(width) * height, 0);
  for (int y = y0; y < y1; ++y) std::fill_n(mask.begin() + size_t(y) * width + x0, x1 - x0, 1);
  return mask;
}

std::string RleJson(const std::vector<uint8_t>& mask, int width, int height, bool compressed) {
  const std::vector<uint32_t> counts = MaskToCocoRle(mask, height, width);
  std::string text;
  if (compressed) {
    // COCO's alphabet holds one character JSON escapes: the backslash.
    text = "\"";
    for (char c : EncodeCocoRleString(counts)) {
      if (c == '\\') text.push_back('\\');
      text.push_back(c);
    }
    text.push_back('"');
  } else {
    text = absl::StrCat("[", absl::StrJoin(counts, ", "), "]");
  }
  return absl::StrCat("{\"size\": [", height, ", ", width, "], \"counts\": ", text, "}");
}

// One shape of `kind` inside the cell [cx, cx + cw) × [cy, cy + ch), one pixel from its edges.
CocoSceneObject MakeShape(cv::RNG& rng, ShapeKind kind, int cx, int cy, int cw, int ch, int width,
                          int height) {
  CocoSceneObject object;
  object.category_id = kCategoryOf[kind];
  if (kind == kBox || kind == kSlab) {
    const int x0 = cx + rng.uniform(1, cw / 4 + 1), x1 = cx + cw - rng.uniform(1, cw / 4 + 1);
    const int y0 = cy + rng.uniform(1, ch / 4 + 1), y1 = cy + ch - rng.uniform(1, ch / 4 + 1);
    object.box = {float(x0), float(y0), float(x1), float(y1)};
    object.mask = RectangleMask(x0, y0, x1, y1, width, height);
    object.segmentation =
        kind == kBox ? absl::StrCat("[",
                                    NumberList({double(x0), double(y0), double(x1), double(y0),
                                                double(x1), double(y1), double(x0), double(y1)}),
                                    "]")
                     : RleJson(object.mask, width, height, /*compressed=*/false);
  } else if (kind == kTriangle) {
    std::vector<double> xy;
    for (int corner = 0; corner < 3; ++corner) {
      xy.push_back(cx + 1 + rng.uniform(0, (cw - 2) * 4 + 1) / 4.0);
      xy.push_back(cy + 1 + rng.uniform(0, (ch - 2) * 4 + 1) / 4.0);
    }
    object.box = {float(std::min({xy[0], xy[2], xy[4]})), float(std::min({xy[1], xy[3], xy[5]})),
                  float(std::max({xy[0], xy[2], xy[4]})), float(std::max({xy[1], xy[3], xy[5]}))};
    object.mask.assign(size_t(width) * height, 0);
    FillPolygon(xy, height, width, absl::MakeSpan(object.mask));
    object.segmentation = absl::StrCat("[", NumberList(xy), "]");
  } else {
    cv::Mat mask = cv::Mat::zeros(height, width, CV_8UC1);
    const cv::Point centre(cx + cw / 2, cy + ch / 2);
    const cv::Size axes(rng.uniform(2, cw / 2 - 1), rng.uniform(2, ch / 2 - 1));
    cv::ellipse(mask, centre, axes, 0, 0, 360, cv::Scalar(1), cv::FILLED, cv::LINE_8);
    const cv::Rect bounds = cv::boundingRect(mask);
    object.box = {float(bounds.x), float(bounds.y), float(bounds.x + bounds.width),
                  float(bounds.y + bounds.height)};
    object.mask.assign(mask.datastart, mask.dataend);
    object.segmentation = RleJson(object.mask, width, height, /*compressed=*/true);
  }
  return object;
}

void Paint(const std::vector<uint8_t>& mask, const cv::Vec3b& colour, cv::Mat& image) {
  for (int y = 0; y < image.rows; ++y) {
    for (int x = 0; x < image.cols; ++x) {
      if (mask[size_t(y) * image.cols + x] != 0) image.at<cv::Vec3b>(y, x) = colour;
    }
  }
}

std::string AnnotationJson(const CocoSceneObject& object, int64_t id, int64_t image_id) {
  const auto& b = object.box;
  return absl::StrCat(
      "{\"id\": ", id, ", \"image_id\": ", image_id, ", \"category_id\": ", object.category_id,
      ", \"iscrowd\": 0, \"bbox\": ", NumberList({b[0], b[1], b[2] - b[0], b[3] - b[1]}),
      ", \"area\": ", Number((b[2] - b[0]) * (b[3] - b[1])),
      ", \"segmentation\": ", object.segmentation, ", \"num_keypoints\": 1, \"keypoints\": ",
      NumberList({(b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0, 2}), "}");
}

}  // namespace

CocoScene GenerateCocoScene(uint64_t seed, uint32_t index, int width, int height, bool all_jpeg) {
  CocoScene scene;
  scene.image_id = index + 1;
  scene.file_name =
      absl::StrFormat("images/%06d.%s", index + 1, index % 2 == 0 && !all_jpeg ? "png" : "jpg");
  scene.width = width;
  scene.height = height;
  scene.image = GenerateNaturalImage(seed, /*label=*/0, index, width, height);
  cv::RNG rng(seed * 0x2545F4914F6CDD1Dull + index);
  const int cw = width / 2, ch = height / 2;
  for (int cell = 0; cell < 4 && index % 5 != 4; ++cell) {
    const ShapeKind kind = static_cast<ShapeKind>(rng.uniform(0, kNoShape + 1));
    if (kind == kNoShape) continue;
    CocoSceneObject object =
        MakeShape(rng, kind, (cell % 2) * cw, (cell / 2) * ch, cw, ch, width, height);
    const cv::Vec3b colour(rng.uniform(0, 256), rng.uniform(0, 256), rng.uniform(0, 256));
    Paint(object.mask, colour, scene.image);
    scene.objects.push_back(std::move(object));
  }
  return scene;
}

std::string CocoInstancesJson(const std::vector<CocoScene>& scenes) {
  std::vector<std::string> images, annotations, categories;
  for (const CocoScene& scene : scenes) {
    images.push_back(absl::StrCat("{\"id\": ", scene.image_id, ", \"file_name\": \"",
                                  scene.file_name, "\", \"width\": ", scene.width,
                                  ", \"height\": ", scene.height, "}"));
    for (const CocoSceneObject& object : scene.objects) {
      annotations.push_back(AnnotationJson(object, annotations.size() + 1, scene.image_id));
    }
  }
  for (int kind = kBox; kind < kNoShape; ++kind) {
    categories.push_back(absl::StrCat("{\"id\": ", kCategoryOf[kind], ", \"name\": \"",
                                      kCategoryNames[kind], "\", \"supercategory\": \"shape\"}"));
  }
  return absl::StrCat("{\"images\": [\n", absl::StrJoin(images, ",\n"), "\n], \"annotations\": [\n",
                      absl::StrJoin(annotations, ",\n"), "\n], \"categories\": [\n",
                      absl::StrJoin(categories, ",\n"), "\n]}\n");
}

absl::Status WriteCocoSet(const CocoSetSpec& spec) {
  if (spec.dir.empty()) return absl::InvalidArgumentError("dir: must not be empty");
  if (spec.images == 0) return absl::InvalidArgumentError("images: must be > 0");
  if (spec.width < 16) return absl::InvalidArgumentError("width: must be >= 16");
  if (spec.height < 16) return absl::InvalidArgumentError("height: must be >= 16");
  std::error_code error;
  std::filesystem::create_directories(spec.dir + "/images", error);
  if (error) {
    return absl::UnavailableError(absl::StrCat("cannot create ", spec.dir, ": ", error.message()));
  }
  std::vector<CocoScene> scenes;
  std::vector<uint8_t> bytes;
  for (uint32_t i = 0; i < spec.images; ++i) {
    CocoScene scene = GenerateCocoScene(spec.seed, i, spec.width, spec.height, spec.all_jpeg);
    const std::string path = absl::StrCat(spec.dir, "/", scene.file_name);
    const std::string extension = scene.file_name.substr(scene.file_name.rfind('.'));
    if (!cv::imencode(extension, scene.image, bytes, {cv::IMWRITE_JPEG_QUALITY, 90}) ||
        !ReplaceFile(path,
                     absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                     Durability::kAtomic)
             .ok()) {
      return absl::UnavailableError(absl::StrCat("cannot write ", path));
    }
    // Only the annotations are needed from here on.
    scene.image.release();
    for (CocoSceneObject& object : scene.objects) std::vector<uint8_t>().swap(object.mask);
    scenes.push_back(std::move(scene));
  }
  const std::string path = spec.dir + "/instances.json";
  const absl::Status written = ReplaceFile(path, CocoInstancesJson(scenes), Durability::kAtomic);
  if (!written.ok()) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace stoker
