#include "wire/compression_auto.h"

#include <gtest/gtest.h>

#include <memory>

namespace stoker {
namespace {

constexpr double kGigabitBytes = 125e6;  // 1 Gbit/s
constexpr double kBatchBytes = 9.6e6;    // 64 x 224 x 224 x 3 uint8

// Two producer threads at 40 ms a batch (50 batches/s); lz4 keeps 60% of the bytes for 10 ms of
// worker CPU and 4 ms of client CPU; zstd 45% for 50 ms and 10 ms.
StreamFigures Figures(std::optional<double> link) {
  StreamFigures figures;
  figures.raw_bytes = kBatchBytes;
  figures.produce_seconds = 0.04;
  figures.producer_threads = 2;
  figures.link_bytes_per_second = link;
  figures.codecs[v1::COMPRESSION_LZ4] = CodecCost{0.6, 0.01, 0.004};
  figures.codecs[v1::COMPRESSION_ZSTD] = CodecCost{0.45, 0.05, 0.01};
  return figures;
}

TEST(DecideCompressionTest, StaysRawWhenTheLinkNeverLimited) {
  const StreamFigures figures = Figures(std::nullopt);
  EXPECT_DOUBLE_EQ(EstimatedBatchesPerSecond(figures, v1::COMPRESSION_NONE), 50);
  EXPECT_DOUBLE_EQ(EstimatedBatchesPerSecond(figures, v1::COMPRESSION_LZ4), 40);
  EXPECT_EQ(DecideCompression(figures, v1::COMPRESSION_NONE), v1::COMPRESSION_NONE);
  // Even from a compressed start: raw is 25% faster, beyond the margin.
  EXPECT_EQ(DecideCompression(figures, v1::COMPRESSION_LZ4), v1::COMPRESSION_NONE);
}

TEST(DecideCompressionTest, CompressesOnASlowLinkPickingTheFastestCodec) {
  const StreamFigures figures = Figures(kGigabitBytes);
  // raw: 125e6 / 9.6e6 = 13.0; lz4: the link at 60% = 21.7; zstd: its worker CPU, 2 / 0.09 = 22.2.
  EXPECT_NEAR(EstimatedBatchesPerSecond(figures, v1::COMPRESSION_NONE), 13.02, 0.01);
  EXPECT_NEAR(EstimatedBatchesPerSecond(figures, v1::COMPRESSION_LZ4), 21.70, 0.01);
  EXPECT_NEAR(EstimatedBatchesPerSecond(figures, v1::COMPRESSION_ZSTD), 22.22, 0.01);
  EXPECT_EQ(DecideCompression(figures, v1::COMPRESSION_NONE), v1::COMPRESSION_ZSTD);
  // From lz4, zstd's 2% gain is inside the margin: no switch.
  EXPECT_EQ(DecideCompression(figures, v1::COMPRESSION_LZ4), v1::COMPRESSION_LZ4);
}

TEST(DecideCompressionTest, AFastLinkKeepsRawBecauseCompressionCostsWorkerTime) {
  EXPECT_EQ(DecideCompression(Figures(10 * kGigabitBytes), v1::COMPRESSION_NONE),
            v1::COMPRESSION_NONE);
}

TEST(DecideCompressionTest, TheClientsDecodeTimeBoundsACodec) {
  StreamFigures figures = Figures(kGigabitBytes);
  figures.codecs.erase(v1::COMPRESSION_ZSTD);
  figures.codecs[v1::COMPRESSION_LZ4].decompress_seconds = 0.1;  // 10 batches/s < raw's 13
  EXPECT_EQ(DecideCompression(figures, v1::COMPRESSION_NONE), v1::COMPRESSION_NONE);
}

TEST(DecideCompressionTest, WhatACodecDeliveredBoundsIt) {
  // The model favours lz4 on this link, but while lz4 was in use the stream delivered fewer
  // batches than raw did (the cores the codec ran on were the send path's): raw.
  StreamFigures figures = Figures(kGigabitBytes);
  figures.codecs.erase(v1::COMPRESSION_ZSTD);
  figures.delivered_per_second[v1::COMPRESSION_NONE] = 13;
  figures.delivered_per_second[v1::COMPRESSION_LZ4] = 9;
  EXPECT_DOUBLE_EQ(EstimatedBatchesPerSecond(figures, v1::COMPRESSION_LZ4), 9);
  EXPECT_EQ(DecideCompression(figures, v1::COMPRESSION_NONE), v1::COMPRESSION_NONE);
  EXPECT_EQ(DecideCompression(figures, v1::COMPRESSION_LZ4), v1::COMPRESSION_NONE);
  // When it delivered what the model said, lz4 stays.
  figures.delivered_per_second[v1::COMPRESSION_LZ4] = 21.7;
  EXPECT_EQ(DecideCompression(figures, v1::COMPRESSION_NONE), v1::COMPRESSION_LZ4);
}

TEST(DecideCompressionTest, SwitchesOnlyBeyondTheMarginAndTiesGoToLessCpu) {
  StreamFigures figures = Figures(kGigabitBytes);
  figures.codecs.erase(v1::COMPRESSION_ZSTD);
  figures.codecs[v1::COMPRESSION_LZ4].wire_ratio = 1 / 1.05;  // 5% more batches: not enough
  EXPECT_EQ(DecideCompression(figures, v1::COMPRESSION_NONE), v1::COMPRESSION_NONE);
  figures.codecs[v1::COMPRESSION_LZ4].wire_ratio = 1 / 1.2;  // 20% more
  EXPECT_EQ(DecideCompression(figures, v1::COMPRESSION_NONE), v1::COMPRESSION_LZ4);
  // Two codecs at the same rate (both bound by the link at the same ratio): the cheaper one.
  figures.codecs[v1::COMPRESSION_ZSTD] = CodecCost{1 / 1.2, 0.002, 0.001};
  EXPECT_EQ(DecideCompression(figures, v1::COMPRESSION_NONE), v1::COMPRESSION_ZSTD);
}

// Feeds AutoCompression a stream whose link carries `link` bytes/s (batches back to back), with
// the codec the worker currently uses, and returns each request it makes.
class AutoCompressionTest : public ::testing::Test {
 protected:
  std::optional<v1::CompressionChoice> Feed(v1::Compression codec, bool back_to_back = true) {
    BatchObservation batch;
    batch.codec = codec;
    batch.raw_bytes = static_cast<uint64_t>(kBatchBytes);
    const double ratio = codec == v1::COMPRESSION_LZ4    ? 0.6
                         : codec == v1::COMPRESSION_ZSTD ? 0.45
                                                         : 1.0;
    batch.wire_bytes = static_cast<uint64_t>(kBatchBytes * ratio);
    batch.produce_seconds = 0.04;
    batch.compress_seconds = codec == v1::COMPRESSION_LZ4    ? 0.01
                             : codec == v1::COMPRESSION_ZSTD ? 0.05
                                                             : 0;
    batch.decompress_seconds = codec == v1::COMPRESSION_LZ4    ? 0.004
                               : codec == v1::COMPRESSION_ZSTD ? 0.01
                                                               : 0;
    batch.producer_threads = 2;
    batch.sent_back_to_back = back_to_back;
    now_ += absl::Seconds(batch.wire_bytes / kGigabitBytes);
    batch.arrival = now_;
    batch.offered = offered_;
    return auto_.OnBatch(batch);
  }

  AutoCompression auto_{/*zstd_level=*/1};
  std::vector<v1::Compression> offered_ = {v1::COMPRESSION_LZ4, v1::COMPRESSION_ZSTD};
  absl::Time now_ = absl::FromUnixSeconds(100);
};

TEST_F(AutoCompressionTest, ProbesEachOfferedCodecThenPicksByTheModel) {
  for (int i = 0; i < kProbeBatches - 1; ++i) EXPECT_FALSE(Feed(v1::COMPRESSION_NONE));
  std::optional<v1::CompressionChoice> ask = Feed(v1::COMPRESSION_NONE);
  ASSERT_TRUE(ask.has_value());
  EXPECT_EQ(ask->codec(), v1::COMPRESSION_LZ4);
  EXPECT_NEAR(*auto_.figures().link_bytes_per_second, kGigabitBytes, 1);
  EXPECT_FALSE(Feed(v1::COMPRESSION_NONE));  // produced before the switch: not counted for lz4
  for (int i = 0; i < kProbeBatches - 1; ++i) EXPECT_FALSE(Feed(v1::COMPRESSION_LZ4));
  ask = Feed(v1::COMPRESSION_LZ4);
  ASSERT_TRUE(ask.has_value());
  EXPECT_EQ(ask->codec(), v1::COMPRESSION_ZSTD);
  EXPECT_EQ(ask->level(), 1);
  for (int i = 0; i < kProbeBatches - 1; ++i) EXPECT_FALSE(Feed(v1::COMPRESSION_ZSTD));
  ask = Feed(v1::COMPRESSION_ZSTD);
  EXPECT_TRUE(auto_.decided());
  // zstd (22.2 batches/s) beats raw (13.0) by more than the margin; it is already in use.
  EXPECT_FALSE(ask.has_value());
  EXPECT_EQ(auto_.requested(), v1::COMPRESSION_ZSTD);
  EXPECT_NEAR(auto_.figures().codecs.at(v1::COMPRESSION_LZ4).wire_ratio, 0.6, 1e-6);
  EXPECT_FALSE(Feed(v1::COMPRESSION_ZSTD));  // stays
}

TEST_F(AutoCompressionTest, GoesBackToRawWhenCompressingDeliveredLess) {
  for (int i = 0; i < kProbeBatches; ++i) Feed(v1::COMPRESSION_NONE);  // asks lz4
  // lz4's batches arrive no faster than raw ones did (a CPU-bound sender): 3x the raw gap.
  for (int i = 0; i < kProbeBatches; ++i) {
    now_ += absl::Seconds(3 * kBatchBytes / kGigabitBytes);
    Feed(v1::COMPRESSION_LZ4);
  }
  for (int i = 0; i < kProbeBatches; ++i) {
    now_ += absl::Seconds(3 * kBatchBytes / kGigabitBytes);
    Feed(v1::COMPRESSION_ZSTD);
  }
  EXPECT_TRUE(auto_.decided());
  EXPECT_EQ(auto_.requested(), v1::COMPRESSION_NONE);
}

TEST_F(AutoCompressionTest, NeverProbesWhileTheLinkIsNotTheBottleneck) {
  for (int i = 0; i < 50; ++i) EXPECT_FALSE(Feed(v1::COMPRESSION_NONE, /*back_to_back=*/false));
  EXPECT_FALSE(auto_.figures().link_bytes_per_second.has_value());
  EXPECT_EQ(auto_.requested(), v1::COMPRESSION_NONE);
}

TEST_F(AutoCompressionTest, NothingOfferedMeansNoRequest) {
  offered_.clear();
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(Feed(v1::COMPRESSION_NONE));
  EXPECT_TRUE(auto_.decided());
  EXPECT_EQ(auto_.requested(), v1::COMPRESSION_NONE);
}

TEST_F(AutoCompressionTest, GivesUpOnACodecTheWorkerNeverSwitchesTo) {
  for (int i = 0; i < kProbeBatches - 1; ++i) Feed(v1::COMPRESSION_NONE);
  ASSERT_TRUE(Feed(v1::COMPRESSION_NONE).has_value());  // asks lz4
  std::optional<v1::CompressionChoice> ask;
  int batches = 0;
  while (!ask.has_value() && batches < 1000) {
    ask = Feed(v1::COMPRESSION_NONE);
    ++batches;
  }
  ASSERT_TRUE(ask.has_value());
  EXPECT_EQ(ask->codec(), v1::COMPRESSION_ZSTD);  // moved on after its patience ran out
  EXPECT_GT(batches, kProbeBatches);
}

TEST(BatchObservationTest, TakesTheHeadersFiguresAndTheDecodingsOwn) {
  auto message = std::make_shared<v1::BatchMessage>();
  v1::BatchHeader* header = message->mutable_header();
  header->set_produce_seconds(0.5);
  header->set_compress_seconds(0.25);
  header->set_producer_threads(3);
  header->set_sent_back_to_back(true);
  header->add_offered_compression(v1::COMPRESSION_ZSTD);
  DecodedBatch decoded;
  decoded.batch = ReceivedBatch::FromMessage(message);
  decoded.codec = v1::COMPRESSION_ZSTD;
  decoded.raw_bytes = 100;
  decoded.wire_bytes = 40;
  decoded.decode_seconds = 0.125;
  const absl::Time arrival = absl::FromUnixSeconds(7);
  const BatchObservation seen = BatchObservation::Of(decoded, arrival);
  EXPECT_EQ(seen.codec, v1::COMPRESSION_ZSTD);
  EXPECT_EQ(seen.raw_bytes, 100u);
  EXPECT_EQ(seen.wire_bytes, 40u);
  EXPECT_EQ(seen.produce_seconds, 0.5);
  EXPECT_EQ(seen.compress_seconds, 0.25);
  EXPECT_EQ(seen.decompress_seconds, 0.125);
  EXPECT_EQ(seen.producer_threads, 3u);
  EXPECT_TRUE(seen.sent_back_to_back);
  EXPECT_EQ(seen.arrival, arrival);
  ASSERT_EQ(seen.offered.size(), 1u);
  EXPECT_EQ(seen.offered[0], v1::COMPRESSION_ZSTD);
}

}  // namespace
}  // namespace stoker
