#include "pack/image_generator.h"

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/atomic_file.h"
#include "common/process_limits.h"
#include "opencv2/imgcodecs.hpp"
#include "opencv2/imgproc.hpp"

namespace stoker {
namespace {

cv::Scalar ClassColour(cv::RNG& rng, uint32_t label) {
  // A hue per class, jittered per image.
  const double hue = std::fmod(label * 47.0 + rng.uniform(-12.0, 12.0) + 360.0, 180.0);
  cv::Mat hsv(1, 1, CV_8UC3, cv::Scalar(hue, rng.uniform(60, 230), rng.uniform(70, 250)));
  cv::Mat bgr;
  cv::cvtColor(hsv, bgr, cv::COLOR_HSV2BGR);
  const cv::Vec3b c = bgr.at<cv::Vec3b>(0, 0);
  return cv::Scalar(c[0], c[1], c[2]);
}

void DrawBackground(cv::RNG& rng, uint32_t label, cv::Mat& image) {
  const cv::Scalar a = ClassColour(rng, label);
  const cv::Scalar b = ClassColour(rng, label + 3);
  const double angle = rng.uniform(0.0, CV_2PI);
  const double dx = std::cos(angle) / image.cols;
  const double dy = std::sin(angle) / image.rows;
  // Low-frequency texture: a small random field scaled up smoothly.
  cv::Mat field(6, 8, CV_32FC1);
  rng.fill(field, cv::RNG::UNIFORM, -40.0, 40.0);
  cv::resize(field, field, image.size(), 0, 0, cv::INTER_CUBIC);
  for (int y = 0; y < image.rows; ++y) {
    cv::Vec3b* row = image.ptr<cv::Vec3b>(y);
    const float* texture = field.ptr<float>(y);
    for (int x = 0; x < image.cols; ++x) {
      const double t =
          std::clamp(0.5 + (x - image.cols / 2.0) * dx + (y - image.rows / 2.0) * dy, 0.0, 1.0);
      for (int c = 0; c < 3; ++c) {
        row[x][c] = cv::saturate_cast<uint8_t>(a[c] * (1 - t) + b[c] * t + texture[x]);
      }
    }
  }
}

void DrawShapes(cv::RNG& rng, uint32_t label, cv::Mat& image) {
  const int shapes = rng.uniform(3, 9);
  for (int i = 0; i < shapes; ++i) {
    cv::Mat layer = image.clone();
    const cv::Point centre(rng.uniform(0, image.cols), rng.uniform(0, image.rows));
    const cv::Scalar colour = ClassColour(rng, label + (i % 2));
    const int size = rng.uniform(image.rows / 12, image.rows / 3);
    switch (rng.uniform(0, 3)) {
      case 0:
        cv::ellipse(layer, centre, cv::Size(size, rng.uniform(size / 3 + 1, size + 1)),
                    rng.uniform(0.0, 180.0), 0, 360, colour, cv::FILLED, cv::LINE_AA);
        break;
      case 1:
        cv::rectangle(layer, centre, centre + cv::Point(size, size * 2 / 3), colour, cv::FILLED,
                      cv::LINE_AA);
        break;
      default: {
        std::vector<cv::Point> polygon;
        for (int k = 0; k < 5; ++k) {
          polygon.emplace_back(centre.x + rng.uniform(-size, size),
                               centre.y + rng.uniform(-size, size));
        }
        cv::fillPoly(layer, polygon, colour, cv::LINE_AA);
      }
    }
    if (rng.uniform(0, 2) == 0)
      cv::GaussianBlur(layer, layer, cv::Size(0, 0), rng.uniform(1.0, 4.0));
    cv::addWeighted(layer, rng.uniform(0.6, 1.0), image, 0, 0, layer);
    const double alpha = rng.uniform(0.55, 1.0);
    cv::addWeighted(layer, alpha, image, 1 - alpha, 0, image);
  }
}

// Atomic so that a reader, or a re-run that skips existing files, never sees half an image;
// not synced: an image lost to a crash is generated again.
bool WriteAtomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  return ReplaceFile(path,
                     absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                     Durability::kAtomic)
      .ok();
}

}  // namespace

cv::Mat GenerateNaturalImage(uint64_t seed, uint32_t label, uint64_t index, int width, int height) {
  cv::RNG rng(seed * 0x9E3779B97F4A7C15ull + label * 0xBF58476D1CE4E5B9ull + index + 1);
  cv::Mat image(height, width, CV_8UC3);
  DrawBackground(rng, label, image);
  DrawShapes(rng, label, image);
  cv::Mat noise(image.size(), CV_16SC3);
  rng.fill(noise, cv::RNG::NORMAL, 0, rng.uniform(2.0, 7.0));
  cv::add(image, noise, image, cv::noArray(), CV_8UC3);
  return image;
}

absl::Status GenerateImageFolder(const ImageFolderSpec& spec) {
  if (spec.dir.empty()) return absl::InvalidArgumentError("dir: must not be empty");
  if (spec.classes == 0) return absl::InvalidArgumentError("classes: must be > 0");
  if (spec.per_class == 0) return absl::InvalidArgumentError("per_class: must be > 0");
  if (spec.width <= 0) return absl::InvalidArgumentError("width: must be > 0");
  if (spec.height <= 0) return absl::InvalidArgumentError("height: must be > 0");
  if (spec.quality < 1 || spec.quality > 100) {
    return absl::InvalidArgumentError("quality: must be in 1..100");
  }
  for (uint32_t c = 0; c < spec.classes; ++c) {
    std::error_code error;
    std::filesystem::create_directories(absl::StrFormat("%s/class-%03d", spec.dir, c), error);
    if (error)
      return absl::UnavailableError(
          absl::StrCat("cannot create ", spec.dir, ": ", error.message()));
  }
  const uint64_t total = uint64_t{spec.classes} * spec.per_class;
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::string failed_path;
  auto work = [&] {
    const std::vector<int> params = {cv::IMWRITE_JPEG_QUALITY, spec.quality};
    std::vector<uint8_t> bytes;
    for (uint64_t i = next++; i < total && !failed; i = next++) {
      const uint32_t label = static_cast<uint32_t>(i % spec.classes);
      const uint64_t index = i / spec.classes;
      const std::string path =
          absl::StrFormat("%s/class-%03d/img-%05d.jpg", spec.dir, label, index);
      if (std::filesystem::exists(path)) continue;
      const cv::Mat image = GenerateNaturalImage(spec.seed, label, index, spec.width, spec.height);
      if (!cv::imencode(".jpg", image, bytes, params) || !WriteAtomically(path, bytes)) {
        if (!failed.exchange(true)) failed_path = path;
      }
    }
  };
  const uint32_t threads = spec.threads > 0 ? spec.threads : OwnProcessLimits().cpus;
  std::vector<std::thread> pool;
  for (uint32_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  if (failed) return absl::UnavailableError(absl::StrCat("cannot write ", failed_path));
  return absl::OkStatus();
}

}  // namespace stoker
