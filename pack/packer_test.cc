#include "pack/packer.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "augment/kernels/decode.h"
#include "data/manifest.h"
#include "data/shard_source.h"
#include "data/storage_backend.h"
#include "data/testing/shard_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "opencv2/imgcodecs.hpp"
#include "pack/image_generator.h"

namespace stoker {
namespace {

using ::stoker::testing::ReadFile;
using ::stoker::testing::TempDir;
using ::stoker::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class PackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ImageFolderSpec spec;
    spec.dir = images_.path();
    spec.classes = 3;
    spec.per_class = 4;
    spec.width = 120;
    spec.height = 90;
    spec.threads = 2;
    ASSERT_TRUE(GenerateImageFolder(spec).ok());
    options_.input = images_.path();
    options_.output_dir = out_.File("shards");
    options_.shard_bytes =
        3 * std::filesystem::file_size(images_.path() + "/class-000/img-00000.jpg");
    options_.threads = 2;
  }

  absl::StatusOr<PackSummary> PackAll() {
    absl::StatusOr<PackPlan> plan = PlanPack(*storage_, options_);
    if (!plan.ok()) return plan.status();
    PackCounters counters;
    return Pack(*storage_, options_, *plan, &counters, &clock_);
  }

  // Packs the folder, whose image 2 of class 1 lacks its `field` sidecar (skipped as `skip`),
  // checks the summary, report and manifest, and opens the shards for `field`.
  void PackOneFieldSkippingOne(const std::string& field, const std::string& skip,
                               std::unique_ptr<Source>* source) {
    options_.report = out_.File("report.tsv");
    absl::StatusOr<PackSummary> summary = PackAll();
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->images, 11u);
    EXPECT_EQ(summary->skipped, 1u);
    EXPECT_THAT(ReadFile(out_.File("report.tsv")), HasSubstr("img-00002.jpg\t" + skip + "\t"));
    auto manifest = ReadManifest(*storage_, options_.output_dir + "/manifest.json");
    ASSERT_TRUE(manifest.ok());
    EXPECT_THAT(manifest->fields(), ElementsAre(field));
    stoker::v1::DatasetSpec spec;
    spec.mutable_shards()->set_manifest(options_.output_dir + "/manifest.json");
    auto opened = CreateSource(spec, 0, DatasetIo::FromEnvironment(), false, {field});
    ASSERT_TRUE(opened.ok()) << opened.status();
    *source = *std::move(opened);
  }

  const std::shared_ptr<Storage> storage_ = Storage::FromEnvironment();
  SteppingClock clock_{absl::Seconds(1)};
  TempDir images_;
  TempDir out_;
  PackOptions options_;
};

TEST_F(PackerTest, GeneratedImagesAreDeterministicJpegs) {
  const cv::Mat a = GenerateNaturalImage(1, 2, 3, 50, 40);
  const cv::Mat b = GenerateNaturalImage(1, 2, 3, 50, 40);
  EXPECT_EQ(cv::norm(a, b, cv::NORM_INF), 0);
  EXPECT_GT(cv::norm(a, GenerateNaturalImage(1, 2, 4, 50, 40), cv::NORM_INF), 0);
  const cv::Mat decoded = cv::imread(images_.path() + "/class-002/img-00003.jpg");
  EXPECT_EQ(decoded.cols, 120);
  EXPECT_EQ(decoded.rows, 90);
}

TEST_F(PackerTest, FolderToShardsAndManifest) {
  absl::StatusOr<PackSummary> summary = PackAll();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->images, 12u);
  EXPECT_EQ(summary->skipped, 0u);
  EXPECT_GE(summary->shards, 3u);
  EXPECT_EQ(summary->seconds, 1.0);  // one step of the injected clock, start to end
  auto manifest = ReadManifest(*storage_, options_.output_dir + "/manifest.json");
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_THAT(manifest->class_names(), ElementsAre("class-000", "class-001", "class-002"));
  EXPECT_EQ(manifest->shards(0).path(), "shard-00000.stoker");

  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->set_manifest(options_.output_dir + "/manifest.json");
  auto source = CreateSource(spec, 0, DatasetIo::FromEnvironment());
  ASSERT_TRUE(source.ok());
  ASSERT_EQ((*source)->size(), 12u);
  SampleBuffer sample;
  ASSERT_TRUE((*source)->Read(5, &sample).ok());  // Sorted by class, then file: class-001 #1.
  EXPECT_EQ(sample.label, 1);
  EXPECT_EQ(std::string(sample.encoded.begin(), sample.encoded.end()),
            ReadFile(images_.path() + "/class-001/img-00001.jpg"));
  for (const auto& entry : std::filesystem::directory_iterator(options_.output_dir)) {
    EXPECT_EQ(entry.path().extension(),
              entry.path().filename() == "manifest.json" ? ".json" : ".stoker");
  }
}

TEST_F(PackerTest, RerunKeepsCompleteShardsAndRewritesDamagedOnes) {
  ASSERT_TRUE(PackAll().ok());
  const std::string shard1 = options_.output_dir + "/shard-00001.stoker";
  WriteFile(shard1, ReadFile(shard1).substr(0, 100));  // As if interrupted mid-write.
  absl::StatusOr<PackSummary> again = PackAll();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->shards_reused, again->shards - 1);
  EXPECT_EQ(again->images, 12u);
}

TEST_F(PackerTest, ResizeShorterSideAndFileList) {
  WriteFile(images_.File("list.txt"),
            "class-000/img-00000.jpg cat\n# comment\nclass-001/img-00000.jpg dog\n");
  options_.input = images_.File("list.txt");
  options_.resize_shorter = 45;
  absl::StatusOr<PackSummary> summary = PackAll();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->images, 2u);
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->set_manifest(options_.output_dir + "/manifest.json");
  auto source = CreateSource(spec, 0, DatasetIo::FromEnvironment());
  SampleBuffer sample;
  ASSERT_TRUE((*source)->Read(1, &sample).ok());
  EXPECT_EQ(sample.label, 1);
  const cv::Mat image = cv::imdecode(sample.encoded, cv::IMREAD_COLOR);
  EXPECT_EQ(image.rows, 45);
  EXPECT_EQ(image.cols, 60);
}

// The first scan's marker segments hold a DRI (FF DD), as the rewrite writes it.
bool HasRestartInterval(const std::vector<uint8_t>& jpeg) {
  for (size_t at = 2; at + 4 <= jpeg.size() && jpeg[at] == 0xFF && jpeg[at + 1] != 0xDA;
       at += 2 + (size_t{jpeg[at + 2]} << 8 | jpeg[at + 3])) {
    if (jpeg[at + 1] == 0xDD) return true;
  }
  return false;
}

std::vector<uint8_t> DecodedPixels(absl::Span<const uint8_t> jpeg) {
  ImageDecoder decoder;
  absl::StatusOr<EncodedHeader> header =
      decoder.ReadHeader(jpeg, DecodeLimits{kDecodeDefaultMaxPixels, kDecodeDefaultMaxScans});
  if (!header.ok()) return {};
  ImageBuffer pixels;
  pixels.Reshape(ScaledSize(*header, 1, 3));
  if (!decoder.Decode(jpeg, pixels.view()).ok()) return {};
  const ImageShape& shape = pixels.shape();
  const uint8_t* data = pixels.view().pixels<uint8_t>();
  return std::vector<uint8_t>(data, data + size_t{shape.height} * shape.width * 3);
}

TEST_F(PackerTest, RestartMarkersKeepEveryPixel) {
  const std::string dir = images_.path() + "/class-000/";
  WriteFile(dir + "noise.png", "not a png, kept as is when unverified");
  options_.restart_markers = true;
  options_.verify = false;
  ASSERT_TRUE(PackAll().ok());
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->set_manifest(options_.output_dir + "/manifest.json");
  auto source = CreateSource(spec, 0, DatasetIo::FromEnvironment());
  ASSERT_TRUE(source.ok());
  ASSERT_EQ((*source)->size(), 13u);
  SampleBuffer sample;
  // Record 4 is class-000/noise.png (files sorted, "i" < "n"); 5 is class-001/img-00000.jpg.
  ASSERT_TRUE((*source)->Read(4, &sample).ok());
  EXPECT_EQ(std::string(sample.encoded.begin(), sample.encoded.end()), ReadFile(dir + "noise.png"));
  for (const auto& [record, file] : {std::pair<size_t, std::string>{0, "class-000/img-00000.jpg"},
                                     {5, "class-001/img-00000.jpg"},
                                     {12, "class-002/img-00003.jpg"}}) {
    ASSERT_TRUE((*source)->Read(record, &sample).ok());
    const std::string original = ReadFile(images_.path() + "/" + file);
    const std::vector<uint8_t> original_bytes(original.begin(), original.end());
    EXPECT_FALSE(HasRestartInterval(original_bytes)) << file;
    EXPECT_TRUE(HasRestartInterval(sample.encoded)) << file;
    const std::vector<uint8_t> pixels = DecodedPixels(sample.encoded);
    EXPECT_FALSE(pixels.empty()) << file;
    EXPECT_EQ(pixels, DecodedPixels(original_bytes)) << file;
  }
}

TEST_F(PackerTest, BadInputsAreNamed) {
  WriteFile(images_.File("bad.txt"), "only-one-field\n");
  options_.input = images_.File("bad.txt");
  EXPECT_THAT(PlanPack(*storage_, options_).status().message(), HasSubstr("bad.txt:1"));
  options_.input = images_.File("missing");
  EXPECT_EQ(PlanPack(*storage_, options_).status().code(), absl::StatusCode::kNotFound);
  options_.shard_bytes = 0;
  EXPECT_THAT(std::string(options_.Validate().message()), HasSubstr("shard_bytes"));
}

TEST_F(PackerTest, InputsAWorkerWouldRejectAreSkippedByReason) {
  const std::string dir = images_.path() + "/class-000/";
  const std::string good = ReadFile(dir + "img-00000.jpg");
  WriteFile(dir + "empty.jpg", "");
  WriteFile(dir + "text.jpg", "this is not an image\n");
  WriteFile(dir + "truncated.jpg", good.substr(0, good.size() / 2));
  std::string noise(3000, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>(i * 2654435761u >> 7);
  WriteFile(dir + "noise.png", noise);
  options_.report = out_.File("skipped.tsv");
  auto summary = PackAll();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->images, 12u);
  EXPECT_EQ(summary->skipped, 4u);
  EXPECT_EQ(SummarizeSkipped(summary->skipped_inputs),
            "decode_error=1, empty=1, unsupported_format=2");
  const std::string report = ReadFile(options_.report);
  EXPECT_THAT(report, HasSubstr(dir + "truncated.jpg\tdecode_error\t"));
  EXPECT_THAT(report, HasSubstr(dir + "empty.jpg\tempty\t"));
  EXPECT_THAT(report, ::testing::Not(HasSubstr("this is not an image")));

  options_.verify = false;  // --keep-unverified
  options_.output_dir = out_.File("unverified");
  auto unverified = PackAll();
  ASSERT_TRUE(unverified.ok()) << unverified.status();
  EXPECT_EQ(unverified->images, 15u);  // Only the empty file cannot become a record.
}

TEST_F(PackerTest, UnknownSchemesAreRefusedNamingTheScheme) {
  options_.output_dir = "gs://bucket/ds";
  EXPECT_THAT(options_.Validate().message(),
              HasSubstr("output_dir: unsupported URL scheme \"gs\""));
  options_.output_dir = "http://host/ds";
  EXPECT_EQ(options_.Validate().code(), absl::StatusCode::kInvalidArgument);
}

// --captions: each image's sidecar .txt becomes its "text" field, byte for byte; an image
// without one is skipped; the manifest declares the field, and a job may name only it.
TEST_F(PackerTest, CaptionsBecomeTheTextFieldAndTheManifestDeclaresIt) {
  const std::string caption = "un chat \xc3\xa9tonn\xc3\xa9 \xf0\x9f\x90\x88";
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 4; ++i) {
      if (c == 1 && i == 2) continue;  // This image has no caption.
      WriteFile(images_.path() + "/class-00" + std::to_string(c) + "/img-0000" + std::to_string(i) +
                    ".txt",
                caption + std::to_string(c * 4 + i));
    }
  }
  options_.captions = true;
  std::unique_ptr<Source> source;
  ASSERT_NO_FATAL_FAILURE(PackOneFieldSkippingOne("text", "missing_caption", &source));
  SampleBuffer sample;
  for (uint64_t index = 0; index < source->size(); ++index) {
    ASSERT_TRUE(source->Read(index, &sample).ok()) << index;
    const std::string text(sample.fields[0].begin(), sample.fields[0].end());
    // Packed sorted by class then file: index 6 onwards comes after the skipped image.
    const uint64_t packed = index < 6 ? index : index + 1;
    EXPECT_EQ(text, caption + std::to_string(packed)) << index;
  }
  EXPECT_TRUE(source->CheckField("text").ok());
  const absl::Status json = source->CheckField("json");
  EXPECT_EQ(json.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(json.message(), HasSubstr("\"json\": the manifest's records carry only [text]"));
}

// "class-00C/img-0000I" of the generated folder.
std::string ImageStem(const std::string& dir, int c, int i) {
  return dir + "/class-00" + std::to_string(c) + "/img-0000" + std::to_string(i);
}

// --seg-masks: each image's sidecar .seg.png becomes its "semantic_mask" field, byte for byte; an
// image without one is skipped; the label maps are not packed as images.
TEST_F(PackerTest, LabelMapsBecomeTheSemanticMaskField) {
  std::vector<std::string> pngs;
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 4; ++i) {
      if (c == 1 && i == 2) continue;  // This image has no label map.
      cv::Mat labels(90, 120, CV_8UC1, cv::Scalar(c * 4 + i));
      std::vector<uint8_t> png;
      ASSERT_TRUE(cv::imencode(".png", labels, png));
      pngs.emplace_back(png.begin(), png.end());
      WriteFile(ImageStem(images_.path(), c, i) + ".seg.png", pngs.back());
    }
  }
  options_.seg_masks = true;
  std::unique_ptr<Source> source;
  ASSERT_NO_FATAL_FAILURE(PackOneFieldSkippingOne("semantic_mask", "missing_seg_mask", &source));
  ASSERT_EQ(source->size(), pngs.size());
  SampleBuffer sample;
  for (uint64_t index = 0; index < source->size(); ++index) {
    ASSERT_TRUE(source->Read(index, &sample).ok()) << index;
    EXPECT_EQ(std::string(sample.fields[0].begin(), sample.fields[0].end()), pngs[index]) << index;
  }
}

// A label map a worker would refuse stops the run naming its file and why.
TEST_F(PackerTest, BadLabelMapsStopThePackNamingTheFile) {
  options_.seg_masks = true;
  const auto write_all = [&](const cv::Mat& labels, const char* extension) {
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(cv::imencode(extension, labels, bytes));
    for (int c = 0; c < 3; ++c) {
      for (int i = 0; i < 4; ++i) {
        WriteFile(ImageStem(images_.path(), c, i) + ".seg.png",
                  std::string(bytes.begin(), bytes.end()));
      }
    }
  };
  const struct {
    cv::Mat labels;
    const char* extension;
    std::string why;
  } cases[] = {
      {cv::Mat(90, 120, CV_16UC1, cv::Scalar(3)), ".png",
       "16-bit gray: label maps are 8-bit gray or palette"},
      {cv::Mat(90, 120, CV_8UC3, cv::Scalar(3, 4, 5)), ".png",
       "colour or alpha: label maps are 8-bit gray or palette"},
      {cv::Mat(45, 60, CV_8UC1, cv::Scalar(3)), ".png", "is 60x45, its image "},
      {cv::Mat(90, 120, CV_8UC1, cv::Scalar(3)), ".jpg",
       "not a PNG (label maps are stored losslessly, as PNG)"},
  };
  for (const auto& bad : cases) {
    write_all(bad.labels, bad.extension);
    std::filesystem::remove_all(options_.output_dir);
    absl::StatusOr<PackSummary> summary = PackAll();
    ASSERT_FALSE(summary.ok()) << bad.why;
    EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument) << summary.status();
    // Shards are packed in parallel: any shard's first label map may be the one named.
    EXPECT_THAT(summary.status().message(), HasSubstr(".seg.png: " + bad.why));
  }
  options_.resize_shorter = 64;
  EXPECT_THAT(PackAll().status().message(),
              HasSubstr("seg_masks: cannot be combined with resize_shorter"));
}

TEST_F(PackerTest, ACaptionsFileGivesTheTextFieldOfTheImagesItLists) {
  std::string table;
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 4; ++i) {
      if (c == 2 && i == 0) continue;  // Not listed: skipped.
      table += "class-00" + std::to_string(c) + "/img-0000" + std::to_string(i) + ".jpg\tpair " +
               std::to_string(c * 4 + i) + "\n";
    }
  }
  WriteFile(images_.File("pairs.tsv"), table);
  options_.captions_file = images_.File("pairs.tsv");
  absl::StatusOr<PackSummary> summary = PackAll();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->images, 11u);
  ASSERT_EQ(summary->skipped_inputs.size(), 1u);
  EXPECT_EQ(summary->skipped_inputs[0].reason, "missing_caption");
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->set_manifest(options_.output_dir + "/manifest.json");
  auto source = CreateSource(spec, 0, DatasetIo::FromEnvironment(), false, {"text"});
  ASSERT_TRUE(source.ok()) << source.status();
  SampleBuffer sample;
  ASSERT_TRUE((*source)->Read(8, &sample).ok());  // class-002/img-00001: packed after the skip.
  EXPECT_EQ(std::string(sample.fields[0].begin(), sample.fields[0].end()), "pair 9");

  options_.captions = true;  // Both: refused.
  EXPECT_THAT(PlanPack(*storage_, options_).status().message(),
              HasSubstr("captions_file: give it or captions"));
}

TEST_F(PackerTest, ACsvCaptionsFileIsReadByItsExtensionOrTheFlagAndBadRowsStopThePlan) {
  WriteFile(images_.File("pairs.csv"),
            "path,caption\n"
            "class-000/img-00000.jpg,\"a photo, \"\"quoted\"\",\nover two lines\"\n"
            "class-001/img-00002.jpg,plain\n");
  options_.captions_file = images_.File("pairs.csv");
  absl::StatusOr<PackSummary> summary = PackAll();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->images, 2u);
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->set_manifest(options_.output_dir + "/manifest.json");
  auto source = CreateSource(spec, 0, DatasetIo::FromEnvironment(), false, {"text"});
  ASSERT_TRUE(source.ok()) << source.status();
  SampleBuffer sample;
  ASSERT_TRUE((*source)->Read(0, &sample).ok());
  EXPECT_EQ(std::string(sample.fields[0].begin(), sample.fields[0].end()),
            "a photo, \"quoted\",\nover two lines");

  // The same rows read as TSV have no tab: refused, naming the flag's format's reason.
  options_.captions_format = "tsv";
  EXPECT_THAT(PlanPack(*storage_, options_).status().message(),
              HasSubstr("captions_file: " + images_.File("pairs.csv") +
                        ":1: expected \"path<TAB>caption\""));
  options_.captions_format = "";
  WriteFile(images_.File("pairs.csv"),
            "class-000/img-00000.jpg,one\nclass-009/img-00000.jpg,nowhere\n");
  const absl::Status unknown = PlanPack(*storage_, options_).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(),
              HasSubstr("captions_file: " + images_.File("pairs.csv") +
                        ":2: unknown image class-009/img-00000.jpg (not among the inputs)"));
  options_.captions_file.clear();
  options_.captions_format = "csv";
  EXPECT_THAT(PlanPack(*storage_, options_).status().message(),
              HasSubstr("captions_format: needs captions_file"));
}

TEST_F(PackerTest, AManifestWithoutFieldsRefusesPassThroughFields) {
  ASSERT_TRUE(PackAll().ok());
  stoker::v1::DatasetSpec spec;
  spec.mutable_shards()->set_manifest(options_.output_dir + "/manifest.json");
  auto source = CreateSource(spec, 0, DatasetIo::FromEnvironment());
  ASSERT_TRUE(source.ok());
  const absl::Status text = (*source)->CheckField("text");
  EXPECT_EQ(text.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(text.message(), HasSubstr("\"text\": the manifest's records carry no fields"));
}

}  // namespace
}  // namespace stoker
