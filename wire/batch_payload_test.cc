// BatchPayload: one chunk is used in place, several are gathered once into a pooled buffer (the
// same address for every caller, whichever thread asks first), CopyTo gathers anywhere,
// PayloadCursor hands out pieces in place or through its scratch buffer when they span chunks.

#include "wire/batch_payload.h"

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using Chunk = BatchPayload::Chunk;

Chunk View(const std::string& bytes, size_t offset, size_t n) {
  return Chunk(reinterpret_cast<const uint8_t*>(bytes.data()) + offset, n);
}

std::string AsString(absl::Span<const uint8_t> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

TEST(BatchPayloadTest, OneChunkIsUsedInPlace) {
  auto owner = std::make_shared<std::string>("abcdef");
  BatchPayload payload(View(*owner, 1, 4), owner);
  EXPECT_EQ(payload.size(), 4u);
  EXPECT_EQ(payload.contiguous().data(), reinterpret_cast<const uint8_t*>(owner->data()) + 1);
  EXPECT_EQ(AsString(payload.contiguous()), "bcde");
}

TEST(BatchPayloadTest, SeveralChunksAreGatheredOnceIntoAPooledBuffer) {
  auto owner = std::make_shared<std::string>("0123456789");
  auto pool = std::make_shared<BufferPool>(2);
  const uint8_t* gathered_at = nullptr;
  {
    BatchPayload payload({View(*owner, 0, 3), View(*owner, 5, 2), View(*owner, 9, 1)}, owner, pool);
    EXPECT_EQ(payload.size(), 6u);
    EXPECT_THAT(payload.chunks(), ::testing::SizeIs(3));
    const absl::Span<const uint8_t> first = payload.contiguous();
    EXPECT_EQ(AsString(first), "012569");
    EXPECT_EQ(payload.contiguous().data(), first.data());  // gathered once
    gathered_at = first.data();
    EXPECT_EQ(pool->free_count(), 0u);
  }
  EXPECT_EQ(pool->free_count(), 1u);  // the buffer went back with the payload
  // The next payload gathers into the recycled buffer (its capacity kept, nothing faulted in).
  BatchPayload next({View(*owner, 1, 1), View(*owner, 2, 1)}, owner, pool);
  EXPECT_EQ(AsString(next.contiguous()), "12");
  EXPECT_EQ(next.contiguous().data(), gathered_at);
}

TEST(BatchPayloadTest, ConcurrentCallersSeeOneGather) {
  std::string bytes(1 << 16, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 251);
  auto owner = std::make_shared<std::string>(bytes);
  std::vector<Chunk> chunks;
  for (size_t at = 0; at < owner->size(); at += 1000) {
    chunks.push_back(View(*owner, at, std::min<size_t>(1000, owner->size() - at)));
  }
  BatchPayload payload(chunks, owner, std::make_shared<BufferPool>(1));
  std::vector<const uint8_t*> seen(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&, t] { seen[t] = payload.contiguous().data(); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const uint8_t* at : seen) EXPECT_EQ(at, seen[0]);
  EXPECT_EQ(AsString(payload.contiguous()), bytes);
}

TEST(BatchPayloadTest, CopyToGathersAndSkipsEmptyChunks) {
  auto owner = std::make_shared<std::string>("hello, world");
  BatchPayload payload({View(*owner, 0, 5), View(*owner, 6, 0), View(*owner, 7, 5)}, owner,
                       nullptr);
  std::string out(payload.size(), '?');
  payload.CopyTo(reinterpret_cast<uint8_t*>(out.data()), out.size());
  EXPECT_EQ(out, "helloworld");
}

TEST(BatchPayloadTest, CopyToCopiesOnlyTheFirstBytesAsked) {
  auto owner = std::make_shared<std::string>("hello, world");
  BatchPayload payload({View(*owner, 0, 5), View(*owner, 5, 7)}, owner, nullptr);
  std::string out(7, '?');
  out.push_back('!');  // Past the bytes asked for: must stay.
  payload.CopyTo(reinterpret_cast<uint8_t*>(out.data()), 7);
  EXPECT_EQ(out, "hello, !");
}

TEST(BatchPayloadTest, AppendFromSkipsWholeAndPartChunks) {
  auto owner = std::make_shared<std::string>("hello, world");
  BatchPayload payload({View(*owner, 0, 5), View(*owner, 5, 2), View(*owner, 7, 5)}, owner,
                       nullptr);
  std::string out = ">";
  payload.AppendFrom(6, &out);
  EXPECT_EQ(out, "> world");
  payload.AppendFrom(12, &out);
  EXPECT_EQ(out, "> world");
}

TEST(BatchPayloadTest, EmptyPayloadHasAnAddress) {
  BatchPayload none(std::vector<Chunk>{}, nullptr, nullptr);
  EXPECT_EQ(none.size(), 0u);
  EXPECT_NE(none.contiguous().data(), nullptr);
  EXPECT_TRUE(none.contiguous().empty());
  none.CopyTo(nullptr, 0);  // nothing to copy
}

TEST(PayloadCursorTest, PiecesInsideAChunkAreReadInPlace) {
  auto owner = std::make_shared<std::string>("abcdefgh");
  BatchPayload payload({View(*owner, 0, 4), View(*owner, 4, 4)}, owner, nullptr);
  PayloadCursor cursor(payload);
  uint8_t scratch[2] = {0, 0};
  const auto* base = reinterpret_cast<const uint8_t*>(owner->data());
  EXPECT_EQ(cursor.Next(2, scratch), base);
  EXPECT_EQ(cursor.Next(2, scratch), base + 2);
  EXPECT_EQ(cursor.Next(2, scratch), base + 4);  // after an exhausted chunk
  EXPECT_EQ(cursor.Next(2, scratch), base + 6);
}

TEST(PayloadCursorTest, PiecesSpanningChunksAreCopiedIntoScratch) {
  // Pieces of 3 over chunks of 2, 0, 2, 2 and 3 bytes: all but the last span a boundary.
  auto owner = std::make_shared<std::string>("012345678");
  BatchPayload payload({View(*owner, 0, 2), View(*owner, 2, 0), View(*owner, 2, 2),
                        View(*owner, 4, 2), View(*owner, 6, 3)},
                       owner, nullptr);
  PayloadCursor cursor(payload);
  std::string pieces;
  std::vector<bool> in_scratch;
  for (int i = 0; i < 3; ++i) {
    uint8_t scratch[3] = {0, 0, 0};
    const uint8_t* piece = cursor.Next(3, scratch);
    in_scratch.push_back(piece == scratch);
    pieces.append(reinterpret_cast<const char*>(piece), 3);
  }
  EXPECT_EQ(pieces, "012345678");
  EXPECT_THAT(in_scratch, testing::ElementsAre(true, true, false));
}

}  // namespace
}  // namespace stoker
