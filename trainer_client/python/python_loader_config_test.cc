#include "trainer_client/python/python_loader_config.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

PythonLoaderConfig ValidConfig() {
  PythonLoaderConfig config;
  config.coordinator = "127.0.0.1:7070";
  config.insecure = true;
  config.num_samples = 1000;
  config.pipeline = "to_float, gaussian_blur(ksize=11)*10";
  config.batch_size = 64;
  config.world_size = 2;
  config.rank = 1;
  config.epochs = 3;
  return config;
}

TEST(PythonLoaderConfigTest, ShardWindowShuffleCarriesItsWindowAndSweepSeed) {
  PythonLoaderConfig config = ValidConfig();
  config.shuffle = "shard_window";
  config.shuffle_window_shards = 8;
  config.sweep_seed = 9;
  const absl::StatusOr<LoaderOptions> options = config.ToLoaderOptions();
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->spec.shuffle(), v1::SHUFFLE_MODE_SHARD_WINDOW);
  EXPECT_EQ(options->spec.shuffle_window_shards(), 8u);
  EXPECT_EQ(options->spec.sweep_seed(), 9u);
  EXPECT_EQ(options->spec.shuffle_block(), 0u);
}

TEST(PythonLoaderConfigTest, DecodedCacheNamesSetTheJobSpecSwitch) {
  for (const auto& [name, value] :
       {std::pair<std::string, v1::DecodedCache>{"", v1::DECODED_CACHE_UNSPECIFIED},
        {"on", v1::DECODED_CACHE_ON},
        {"off", v1::DECODED_CACHE_OFF},
        {"always", v1::DECODED_CACHE_ALWAYS},
        {"auto", v1::DECODED_CACHE_AUTO}}) {
    PythonLoaderConfig config = ValidConfig();
    config.decoded_cache = name;
    const absl::StatusOr<LoaderOptions> options = config.ToLoaderOptions();
    ASSERT_TRUE(options.ok()) << options.status();
    EXPECT_EQ(options->spec.decoded_cache(), value) << name;
  }
  PythonLoaderConfig config = ValidConfig();
  config.decoded_cache = "yes";
  EXPECT_EQ(config.ToLoaderOptions().status(),
            absl::InvalidArgumentError(
                "decoded_cache: must be 'auto', 'on', 'off' or 'always', got 'yes'"));
}

void ExpectInvalid(const PythonLoaderConfig& config, const std::string& substring) {
  const absl::StatusOr<LoaderOptions> options = config.ToLoaderOptions();
  EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument) << options.status();
  EXPECT_THAT(options.status().message(), HasSubstr(substring));
}

TEST(PythonLoaderConfigTest, TlsErrorsNameThePythonArguments) {
  PythonLoaderConfig config = ValidConfig();
  config.insecure = false;  // Nothing at all: no silent plaintext.
  ExpectInvalid(config, "tls.cert_file: no TLS settings");
  config.tls_ca = "/nonexistent/ca.pem";
  config.bearer_token_file = "/nonexistent/trainer.token";
  ExpectInvalid(config, "tls.ca_file: cannot read /nonexistent/ca.pem");
  config = ValidConfig();
  config.bearer_token_file = "/nonexistent/trainer.token";
  ExpectInvalid(config, "tls.bearer_token_file: bearer tokens travel only over TLS");
}

TEST(PythonLoaderConfigTest, HybridTlsErrorsNameThePythonArguments) {
  PythonLoaderConfig config = ValidConfig();
  config.insecure = false;
  config.hybrid_threads = 1;
  EXPECT_THAT(config.HybridProducerTls().status().message(), HasSubstr("hybrid.cert_file: "));
}

TEST(PythonLoaderConfigTest, BuildsTheJobSpec) {
  const absl::StatusOr<LoaderOptions> options = ValidConfig().ToLoaderOptions();
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->coordinator_address, "127.0.0.1:7070");
  EXPECT_EQ(options->rank, 1u);
  const v1::JobSpec& spec = options->spec;
  EXPECT_EQ(spec.dataset().synthetic().num_samples(), 1000u);
  EXPECT_EQ(spec.dataset().synthetic().height(), 224u);
  EXPECT_EQ(spec.pipeline().ops_size(), 11);
  EXPECT_EQ(spec.pipeline().output_layout(), v1::LAYOUT_CHW);
  EXPECT_EQ(spec.pipeline().output_dtype(), v1::DTYPE_UNSPECIFIED);
  EXPECT_EQ(spec.shuffle(), v1::SHUFFLE_MODE_GLOBAL);
  EXPECT_EQ(spec.world_size(), 2u);
  EXPECT_EQ(spec.epochs(), 3u);
  EXPECT_THAT(options->job_name, StartsWith("py-"));
}

TEST(PythonLoaderConfigTest, MaxBadSampleFractionIsSetOnlyWhenGiven) {
  PythonLoaderConfig config = ValidConfig();
  EXPECT_FALSE(config.ToJobSpec()->has_max_bad_sample_fraction());
  config.max_bad_sample_fraction = 0.25;
  const absl::StatusOr<v1::JobSpec> spec = config.ToJobSpec();
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->has_max_bad_sample_fraction());
  EXPECT_EQ(spec->max_bad_sample_fraction(), 0.25);
  config.max_bad_sample_fraction = 0;
  EXPECT_EQ(config.ToJobSpec()->max_bad_sample_fraction(), 0);
}

TEST(PythonLoaderConfigTest, ManifestDataset) {
  PythonLoaderConfig config = ValidConfig();
  config.manifest = "http://data/train.manifest";
  config.pipeline = "decode";
  const absl::StatusOr<v1::JobSpec> spec = config.ToJobSpec();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->dataset().shards().manifest(), "http://data/train.manifest");
}

TEST(PythonLoaderConfigTest, ShardPathsAndFields) {
  PythonLoaderConfig config = ValidConfig();
  config.paths = {"/data/pairs-0.tar", "/data/pairs-*.tar"};
  config.pipeline = "decode";
  config.fields = {"image", "text", "json"};
  const absl::StatusOr<v1::JobSpec> spec = config.ToJobSpec();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->dataset().shards().paths(),
              ::testing::ElementsAre("/data/pairs-0.tar", "/data/pairs-*.tar"));
  EXPECT_THAT(spec->fields(), ::testing::ElementsAre("image", "text", "json"));
  EXPECT_FALSE(spec->dataset().has_synthetic());
}

TEST(PythonLoaderConfigTest, NamesTheBadArgument) {
  PythonLoaderConfig config = ValidConfig();
  config.num_samples = 0;
  ExpectInvalid(config, "dataset: must be > 0");
  config = ValidConfig();
  config.pipeline = "blur";
  ExpectInvalid(config, "pipeline: ");
  config = ValidConfig();
  config.rank = 2;
  ExpectInvalid(config, "rank: must be < world_size (2), got 2");
  config = ValidConfig();
  config.shuffle = "sometimes";
  ExpectInvalid(config, "shuffle: ");
  config = ValidConfig();
  config.shuffle = "shard_window";
  config.shuffle_window_shards = 0;
  ExpectInvalid(config, "shuffle_window_shards: must be > 0");
  config = ValidConfig();
  config.sweep_seed = 5;  // the default shuffle, "global", has no blocks or windows to align
  ExpectInvalid(config,
                "sweep_seed: aligns blocks or shard windows: needs shuffle 'block' or "
                "'shard_window'");
  config = ValidConfig();
  config.layout = "nhwc";
  ExpectInvalid(config, "layout: ");
  config = ValidConfig();
  config.max_bad_sample_fraction = 1.5;
  ExpectInvalid(config, "max_bad_sample_fraction: must be in [0, 1], got 1.5");
  config.max_bad_sample_fraction = -0.1;
  ExpectInvalid(config, "max_bad_sample_fraction: ");
  config = ValidConfig();
  config.coordinator.clear();
  ExpectInvalid(config, "coordinator: entry 1 of '' is not host:port");
  config.coordinator = "10.0.0.1:7070,";
  ExpectInvalid(config, "coordinator: entry 2 of '10.0.0.1:7070,' is not host:port");
  config = ValidConfig();
  config.compression = "brotli";
  ExpectInvalid(config, "compression: unknown compression 'brotli'");
}

TEST(PythonLoaderConfigTest, ConversionNeedsUint8Hwc) {
  PythonLoaderConfig config = ValidConfig();
  EXPECT_FALSE(config.NeedsFeeder());
  config.to_float = true;
  EXPECT_TRUE(config.NeedsFeeder());
  EXPECT_EQ(config.ToDeviceOptions().status().code(), absl::StatusCode::kInvalidArgument);
  config.layout = "hwc";
  config.dtype = "uint8";
  EXPECT_TRUE(config.ToDeviceOptions().ok());
  config.device = "tpu";
  EXPECT_EQ(config.ToDeviceOptions().status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PythonLoaderConfigTest, OnADeviceTheFeederRunsAPipelinesTail) {
  PythonLoaderConfig config = ValidConfig();
  config.pipeline = "horizontal_flip, to_float, normalize(mean=[0.5,0.5,0.5], std=[0.2,0.2,0.2])";
  config.device = "cuda";
  config.layout = "hwc";  // the Python default on a device; the feeder's output is NCHW anyway
  absl::StatusOr<v1::JobSpec> spec = config.ToJobSpec();
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(config.DeviceRunsTail(spec->pipeline()));
  EXPECT_EQ(spec->pipeline().output_layout(), v1::LAYOUT_CHW);
  EXPECT_TRUE(config.ToDeviceOptions().ok()) << config.ToDeviceOptions().status();
  EXPECT_TRUE(config.ToLoaderOptions().ok()) << config.ToLoaderOptions().status();

  // Not with a conversion of our own, a forced worker tail, a 16-bit output or on the host.
  PythonLoaderConfig own = config;
  own.mean = {0.5f, 0.5f, 0.5f};
  own.std = {0.2f, 0.2f, 0.2f};
  EXPECT_FALSE(own.DeviceRunsTail(spec->pipeline()));
  PythonLoaderConfig on_workers = config;
  on_workers.tail = "worker";
  EXPECT_FALSE(on_workers.DeviceRunsTail(spec->pipeline()));
  PythonLoaderConfig half = config;
  half.dtype = "float16";
  EXPECT_FALSE(half.DeviceRunsTail(spec->pipeline()));
  PythonLoaderConfig host = config;
  host.device = "cpu";
  EXPECT_FALSE(host.DeviceRunsTail(spec->pipeline()));
  // A pipeline without a tail keeps the uint8 HWC rule.
  PythonLoaderConfig no_tail = config;
  no_tail.pipeline = "horizontal_flip";
  EXPECT_FALSE(no_tail.DeviceRunsTail(no_tail.ToJobSpec()->pipeline()));
  EXPECT_EQ(no_tail.ToJobSpec()->pipeline().output_layout(), v1::LAYOUT_HWC);
}

TEST(PythonLoaderConfigTest, DefaultJobNameIsAFunctionOfTheSpec) {
  const v1::JobSpec a = *ValidConfig().ToJobSpec();
  PythonLoaderConfig other = ValidConfig();
  other.seed = 7;
  const v1::JobSpec b = *other.ToJobSpec();
  EXPECT_EQ(DefaultJobName(a, ""), DefaultJobName(a, ""));
  EXPECT_NE(DefaultJobName(a, ""), DefaultJobName(b, ""));
  EXPECT_EQ(DefaultJobName(a, "run7"), DefaultJobName(a, "") + "-run7");
  EXPECT_EQ(DefaultJobName(a, "").size(), 3u + 16u);
}

}  // namespace
}  // namespace stoker
