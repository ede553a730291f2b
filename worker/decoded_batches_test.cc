// Batches of jobs that use the decoded cache (worker/decoded_cache.h) are the same bytes with and
// without a cache, cold or warm, for one job or several sharing it, and with an entry corrupted.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "augment/pipeline_text.h"
#include "augment/synthetic_images.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stoker/v1/worker.pb.h"
#include "trace/span.h"
#include "worker/batch_producer.h"
#include "worker/decoded_cache.h"
#include "worker/job_context.h"

namespace stoker {
namespace {

namespace pb = ::stoker::v1;
using ::testing::Contains;
using ::testing::Not;

constexpr uint64_t kDecodedSamples = 24;
constexpr uint64_t kDecodedDatasetFingerprint = 0x5eed;

// JPEGs of 24x32 (natural-looking pixels, one per index), labels index mod 5, with a fingerprint.
class DecodedJpegSource : public Source {
 public:
  uint64_t size() const override { return kDecodedSamples; }
  InputFormat format() const override { return InputFormat::Encoded(); }
  absl::Status Read(uint64_t index, SampleBuffer* sample) const override {
    std::vector<uint8_t> pixels = NaturalImage(24, 32, 3, index);
    sample->encoded = EncodeJpeg(ImageView{pixels.data(), {24, 32, 3, PixelType::kUint8}}, 90);
    sample->label = static_cast<int64_t>(index % 5);
    return absl::OkStatus();
  }
  std::string Locate(uint64_t index) const override { return absl::StrCat("jpeg ", index); }
  uint64_t fingerprint() const override { return kDecodedDatasetFingerprint; }
};

// decode and a resize (the deterministic prefix), then a random crop and flip (the suffix).
constexpr char kResizeThenCrop[] =
    "decode, resize(height=20, width=20), random_resized_crop(height=12, width=12), "
    "horizontal_flip, to_float";

std::shared_ptr<JobContext> DecodedCacheJob(uint64_t job_id, uint64_t seed,
                                            pb::DecodedCache decoded_cache,
                                            const char* pipeline = kResizeThenCrop) {
  pb::JobSpec spec;
  spec.mutable_dataset()->mutable_synthetic();  // Unused: the source is injected.
  *spec.mutable_pipeline() = *ParsePipelineText(pipeline);
  spec.set_batch_size(4);
  spec.set_seed(seed);
  spec.set_world_size(1);
  spec.set_epochs(2);
  spec.set_decoded_cache(decoded_cache);
  auto job = JobContext::Create(job_id, spec, std::make_unique<DecodedJpegSource>());
  EXPECT_TRUE(job.ok()) << job.status();
  return *job;
}

// The payload of batch `batch` of `epoch`, produced through `cache` (null: none).
std::string DecodedTestBatch(JobContext& job, uint32_t epoch, uint64_t batch, DecodedCache* cache) {
  pb::TaskId task;
  task.set_epoch(epoch);
  task.set_batch_index(batch);
  ProducerScratch scratch;
  pb::BatchMessage out;
  const absl::Status status = ProduceBatch(job, task, 1, &scratch, &out, nullptr, cache);
  EXPECT_TRUE(status.ok()) << status;
  return out.data();
}

// Every batch of both epochs without a cache, by epoch then batch.
std::vector<std::string> BatchesWithoutCache(JobContext& job) {
  std::vector<std::string> batches;
  for (uint32_t epoch = 0; epoch < 2; ++epoch) {
    for (uint64_t b = 0; b < kDecodedSamples / 4; ++b) {
      batches.push_back(DecodedTestBatch(job, epoch, b, nullptr));
    }
  }
  return batches;
}

TEST(DecodedBatchesTest, TheJobHasAPrefixAndUsesTheCacheUnlessTurnedOff) {
  EXPECT_TRUE(DecodedCacheJob(1, 3, pb::DECODED_CACHE_ON)->uses_decoded_cache());
  EXPECT_TRUE(DecodedCacheJob(1, 3, pb::DECODED_CACHE_ALWAYS)->uses_decoded_cache());
  EXPECT_FALSE(DecodedCacheJob(1, 3, pb::DECODED_CACHE_OFF)->uses_decoded_cache());
  EXPECT_EQ(DecodedCacheJob(1, 3, pb::DECODED_CACHE_ON)->pipeline().prefix_ops(), 2u);
  EXPECT_EQ(DecodedCacheJob(1, 3, pb::DECODED_CACHE_ON)->decoded_cache_probe(), nullptr);
  // Unset is AUTO: the job's pipeline runs as without the cache, the cache route is its own.
  for (const pb::DecodedCache mode : {pb::DECODED_CACHE_UNSPECIFIED, pb::DECODED_CACHE_AUTO}) {
    const std::shared_ptr<JobContext> job = DecodedCacheJob(1, 3, mode);
    ASSERT_TRUE(job->uses_decoded_cache());
    EXPECT_EQ(job->pipeline().prefix_ops(), 0u);
    EXPECT_EQ(job->cache_pipeline().prefix_ops(), 2u);
    EXPECT_NE(job->decoded_cache_probe(), nullptr);
  }
}

// A crop right after decode, decoded window by window: exact (antialiased, interpolation=2), or
// possibly at a DCT scale (bilinear, interpolation=0), where the cache route would change bytes.
constexpr char kExactWindowCrop[] =
    "decode, random_resized_crop(height=12, width=12, interpolation=2), horizontal_flip, to_float";
constexpr char kDownscaledWindowCrop[] =
    "decode, random_resized_crop(height=12, width=12, interpolation=0), horizontal_flip, to_float";

TEST(DecodedBatchesTest, AnAutoJobTakesTheCacheRouteOnlyWhereItCannotChangeAByte) {
  const std::shared_ptr<JobContext> exact =
      DecodedCacheJob(1, 3, pb::DECODED_CACHE_AUTO, kExactWindowCrop);
  EXPECT_TRUE(exact->pipeline().fuses_decode_crop());
  EXPECT_TRUE(exact->uses_decoded_cache());
  const std::shared_ptr<JobContext> downscaled =
      DecodedCacheJob(1, 3, pb::DECODED_CACHE_AUTO, kDownscaledWindowCrop);
  EXPECT_TRUE(downscaled->pipeline().may_decode_window_downscaled());
  EXPECT_FALSE(downscaled->uses_decoded_cache());
  // Its batches through a cache: no lookup at all.
  DecodedCache cache(64 << 20, DecodedCacheCompression::kNone);
  DecodedTestBatch(*downscaled, 0, 0, &cache);
  EXPECT_EQ(cache.stats().misses, 0u);
  // Forced on, the same pipeline runs unfused and uses the cache.
  EXPECT_TRUE(
      DecodedCacheJob(1, 3, pb::DECODED_CACHE_ON, kDownscaledWindowCrop)->uses_decoded_cache());
}

TEST(DecodedBatchesTest, AnAutoJobsBatchesAreTheJobWithoutTheCacheWhateverItsWorkersChoose) {
  for (const char* pipeline : {kResizeThenCrop, kExactWindowCrop}) {
    SCOPED_TRACE(pipeline);
    const std::vector<std::string> expected =
        BatchesWithoutCache(*DecodedCacheJob(1, 7, pb::DECODED_CACHE_OFF, pipeline));
    // Two workers' worth: the first timing both routes on a cold cache, then the choice; the
    // second on the first's warm cache. Pretouched: the probe leaves out the misses that map
    // a new arena chunk (up to 16 on a lazy arena), and 48 samples must decide.
    DecodedCache cache(64 << 20, DecodedCacheCompression::kNone);
    ASSERT_TRUE(cache.Pretouch());
    for (const char* worker : {"cold", "warm"}) {
      const std::shared_ptr<JobContext> job =
          DecodedCacheJob(1, 7, pb::DECODED_CACHE_AUTO, pipeline);
      size_t i = 0;
      for (uint32_t epoch = 0; epoch < 2; ++epoch) {
        for (uint64_t b = 0; b < kDecodedSamples / 4; ++b, ++i) {
          EXPECT_EQ(DecodedTestBatch(*job, epoch, b, &cache), expected[i])
              << worker << " epoch " << epoch << " batch " << b;
        }
      }
      // 48 samples: 16 timed on each route decide, whichever way.
      EXPECT_TRUE(job->decoded_cache_probe()->choice().has_value()) << worker;
      EXPECT_GE(job->decoded_hits() + job->decoded_misses(), DecodedCacheProbe::kSamplesPerRoute)
          << worker;
    }
    EXPECT_GT(cache.stats().insertions + cache.stats().rejections, 0u);
  }
}

TEST(DecodedBatchesTest, AnAutoJobThatChoseTheCacheKeepsEveryEntryAsAlwaysDoes) {
  EXPECT_TRUE(DecodedCacheJob(1, 3, pb::DECODED_CACHE_ALWAYS)->admits_every_entry());
  EXPECT_FALSE(DecodedCacheJob(1, 3, pb::DECODED_CACHE_ON)->admits_every_entry());
  for (const double uncached : {1.0e-3, 0.1e-3}) {  // the cache pays; it does not
    const std::shared_ptr<JobContext> job = DecodedCacheJob(1, 3, pb::DECODED_CACHE_AUTO);
    EXPECT_FALSE(job->admits_every_entry());  // probing: entry by entry
    DecodedCacheProbe& probe = *job->decoded_cache_probe();
    for (uint32_t i = 0; i < DecodedCacheProbe::kSamplesPerRoute; ++i) {
      DecodedCacheProbe::CachedSample hit;
      hit.seconds = 0.2e-3;
      hit.hit = true;
      hit.prefix_seconds = 1e-3;
      hit.entry_bytes = 1200;
      hit.entries_fit = 1000;
      probe.RecordCached(hit);
      probe.RecordUncached(uncached);
    }
    ASSERT_TRUE(probe.choice().has_value());
    EXPECT_EQ(job->admits_every_entry(), uncached == 1.0e-3) << probe.choice()->why;
  }
}

TEST(DecodedBatchesTest, ColdAndWarmBatchesOfBothEpochsEqualTheBatchesWithoutACache) {
  const std::shared_ptr<JobContext> job = DecodedCacheJob(1, 3, pb::DECODED_CACHE_ALWAYS);
  const std::vector<std::string> expected = BatchesWithoutCache(*job);
  DecodedCache cache(64 << 20, DecodedCacheCompression::kNone);
  for (const char* pass : {"cold", "warm"}) {
    size_t i = 0;
    for (uint32_t epoch = 0; epoch < 2; ++epoch) {
      for (uint64_t b = 0; b < kDecodedSamples / 4; ++b, ++i) {
        EXPECT_EQ(DecodedTestBatch(*job, epoch, b, &cache), expected[i])
            << pass << " epoch " << epoch << " batch " << b;
      }
    }
  }
  // Each sample decoded once: its first epoch's miss; every later use a hit.
  const DecodedCacheStats stats = cache.stats();
  EXPECT_EQ(stats.insertions, kDecodedSamples);
  EXPECT_EQ(stats.misses, kDecodedSamples);
  EXPECT_EQ(stats.hits, 3 * kDecodedSamples);
  EXPECT_GT(stats.saved_seconds, 0);
}

TEST(DecodedBatchesTest, Lz4CompressedEntriesGiveTheSameBatches) {
  const std::shared_ptr<JobContext> job = DecodedCacheJob(1, 5, pb::DECODED_CACHE_ALWAYS);
  const std::vector<std::string> expected = BatchesWithoutCache(*job);
  DecodedCache cache(64 << 20, DecodedCacheCompression::kLz4);
  for (int pass = 0; pass < 2; ++pass) {
    for (uint64_t b = 0; b < kDecodedSamples / 4; ++b) {
      EXPECT_EQ(DecodedTestBatch(*job, 0, b, &cache), expected[b]) << "pass " << pass;
    }
  }
  EXPECT_EQ(cache.stats().hits, kDecodedSamples);
}

TEST(DecodedBatchesTest, FourJobsOnTheSameDataShareOneCacheAndEachGetsItsOwnBatches) {
  std::vector<std::shared_ptr<JobContext>> jobs;
  std::vector<std::vector<std::string>> expected;
  for (uint64_t j = 0; j < 4; ++j) {
    jobs.push_back(DecodedCacheJob(j + 1, 100 + j, pb::DECODED_CACHE_ALWAYS));
    expected.push_back(BatchesWithoutCache(*jobs.back()));
  }
  EXPECT_NE(expected[0][0], expected[1][0]);  // their own seeds: their own crops
  DecodedCache cache(64 << 20, DecodedCacheCompression::kNone);
  // Interleaved, as jobs started together are.
  for (uint32_t epoch = 0; epoch < 2; ++epoch) {
    for (uint64_t b = 0; b < kDecodedSamples / 4; ++b) {
      for (size_t j = 0; j < jobs.size(); ++j) {
        EXPECT_EQ(DecodedTestBatch(*jobs[j], epoch, b, &cache),
                  expected[j][epoch * (kDecodedSamples / 4) + b])
            << "job " << j << " epoch " << epoch << " batch " << b;
      }
    }
  }
  const DecodedCacheStats stats = cache.stats();
  EXPECT_EQ(stats.insertions, kDecodedSamples);  // decoded once for the four jobs
  EXPECT_EQ(stats.hits + stats.misses, 4 * 2 * kDecodedSamples);
  EXPECT_EQ(stats.entries, kDecodedSamples);
  // Each job counts its own lookups (its per-job metrics).
  uint64_t job_hits = 0;
  for (const std::shared_ptr<JobContext>& job : jobs) {
    EXPECT_EQ(job->decoded_hits() + job->decoded_misses(), 2 * kDecodedSamples);
    job_hits += job->decoded_hits();
  }
  EXPECT_EQ(job_hits, stats.hits);
  // One group on this worker while the jobs are held (what an AUTO job counts as passes).
  const DecodedCacheGroups::Key group = jobs[0]->decoded_cache_group();
  EXPECT_EQ(cache.groups().Members(group), 4u);
  jobs.clear();
  EXPECT_EQ(cache.groups().Members(group), 0u);
}

TEST(DecodedBatchesTest, ACorruptedEntryIsDecodedAgainAndTheBatchIsUnchanged) {
  const std::shared_ptr<JobContext> job = DecodedCacheJob(1, 9, pb::DECODED_CACHE_ALWAYS);
  const std::string expected = DecodedTestBatch(*job, 0, 0, nullptr);
  DecodedCache cache(64 << 20, DecodedCacheCompression::kNone);
  ASSERT_EQ(DecodedTestBatch(*job, 0, 0, &cache), expected);
  pb::BatchMessage indices;
  {
    pb::TaskId task;
    ProducerScratch scratch;
    ASSERT_TRUE(ProduceBatch(*job, task, 1, &scratch, &indices).ok());
  }
  for (uint64_t index : indices.header().sample_indices()) {
    ASSERT_TRUE(cache.CorruptForTest(
        {kDecodedDatasetFingerprint, index, job->pipeline().prefix_fingerprint()}));
  }
  EXPECT_EQ(DecodedTestBatch(*job, 0, 0, &cache), expected);
  const DecodedCacheStats stats = cache.stats();
  EXPECT_EQ(stats.checksum_failures, 4u);
  EXPECT_EQ(stats.hits, 0u);
  EXPECT_EQ(stats.insertions, 8u);  // kept again once decoded again
  EXPECT_EQ(DecodedTestBatch(*job, 0, 0, &cache), expected);
  EXPECT_EQ(cache.stats().hits, 4u);
}

// The stages of a traced batch produced through `cache`.
std::vector<trace::Stage> DecodedTestStages(JobContext& job, DecodedCache* cache) {
  pb::TaskId task;
  ProducerScratch scratch;
  scratch.workspace.set_time_ops(true);
  scratch.timeline.Begin(job.trace(), task, LeaseStart{});
  pb::BatchMessage out;
  EXPECT_TRUE(ProduceBatch(job, task, 1, &scratch, &out, nullptr, cache).ok());
  scratch.timeline.End(job.trace(), job.pipeline(), out.mutable_header());
  std::vector<trace::Stage> stages;
  for (const pb::TraceSpan& span : out.header().trace().spans()) {
    stages.push_back(static_cast<trace::Stage>(span.stage()));
  }
  return stages;
}

TEST(DecodedBatchesTest, TheTimelineShowsHitsAsTheirOwnStageInsteadOfDecode) {
  const std::shared_ptr<JobContext> job = DecodedCacheJob(1, 3, pb::DECODED_CACHE_ALWAYS);
  job->trace().SetSampling(1);
  DecodedCache cache(64 << 20, DecodedCacheCompression::kNone);
  const std::vector<trace::Stage> cold = DecodedTestStages(*job, &cache);
  EXPECT_THAT(cold, Contains(trace::Stage::kDecode));
  EXPECT_THAT(cold, Not(Contains(trace::Stage::kDecodedCacheHit)));
  const std::vector<trace::Stage> warm = DecodedTestStages(*job, &cache);
  EXPECT_THAT(warm, Contains(trace::Stage::kDecodedCacheHit));
  EXPECT_THAT(warm, Not(Contains(trace::Stage::kDecode)));
  EXPECT_THAT(warm, Contains(trace::Stage::kOp));  // the suffix ran
}

TEST(DecodedBatchesTest, CacheOnOffersEverySampleByTheThresholdAndKeepsTheBatches) {
  // Whether each entry is kept depends on its measured decode time; the batch never does.
  const std::shared_ptr<JobContext> job = DecodedCacheJob(1, 3, pb::DECODED_CACHE_ON);
  const std::string expected = DecodedTestBatch(*job, 0, 1, nullptr);
  DecodedCache cache(64 << 20, DecodedCacheCompression::kNone);
  EXPECT_EQ(DecodedTestBatch(*job, 0, 1, &cache), expected);
  const DecodedCacheStats stats = cache.stats();
  EXPECT_EQ(stats.insertions + stats.rejections, 4u);
}

}  // namespace
}  // namespace stoker
