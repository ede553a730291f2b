#include "trace/span_recorder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace stoker::trace {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

// A clock the test moves; counts its reads so that "off" can be shown to read no clock.
class CountingClock : public FakeClock {
 public:
  CountingClock() : FakeClock(absl::FromUnixNanos(1000)) {}
  absl::Time Now() override {
    ++reads;
    return FakeClock::Now();
  }
  std::atomic<int> reads{0};
};

class SpanRecorderTest : public ::testing::Test {
 protected:
  SpanRecorder::Options FakeOptions(size_t capacity) {
    SpanRecorder::Options options;
    options.capacity = capacity;
    options.clock = &clock_;
    return options;
  }
  Span SpanAt(int64_t start_ns) {
    Span span;
    span.stage = Stage::kDecode;
    span.start_ns = start_ns;
    span.end_ns = start_ns + 1;
    return span;
  }

  CountingClock clock_;
};

TEST_F(SpanRecorderTest, OffRecordsNothingAndReadsNoClock) {
  SpanRecorder recorder(FakeOptions(16));
  for (uint64_t batch = 0; batch < 100; ++batch) {
    ScopedSpan span(&recorder, Stage::kDecode, TaskKey{1, 0, batch});
  }
  EXPECT_EQ(recorder.size(), 0u);
  EXPECT_EQ(clock_.reads, 0);
}

TEST_F(SpanRecorderTest, ScopedSpanRecordsStageTaskThreadAndTimes) {
  SpanRecorder recorder(FakeOptions(16));
  recorder.SetSampling(1);
  const uint16_t blur = recorder.InternName("gaussian_blur");
  {
    ScopedSpan span(&recorder, Stage::kOp, TaskKey{7, 2, 40}, blur);
    clock_.Advance(absl::Nanoseconds(500));
  }
  const std::vector<Span> spans = recorder.Drain(10);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].stage, Stage::kOp);
  EXPECT_EQ(spans[0].name_id, blur);
  EXPECT_EQ(spans[0].task, (TaskKey{7, 2, 40}));
  EXPECT_EQ(spans[0].thread_id, SpanRecorder::CurrentThreadId());
  EXPECT_EQ(spans[0].start_ns, 1000);
  EXPECT_EQ(spans[0].end_ns, 1500);
  EXPECT_EQ(recorder.Names()[blur], "gaussian_blur");
}

TEST_F(SpanRecorderTest, FullRingOverwritesTheOldestAndCountsDrops) {
  SpanRecorder recorder(FakeOptions(3));
  for (int64_t start = 1; start <= 5; ++start) recorder.Record(SpanAt(start));
  EXPECT_EQ(recorder.dropped(), 2u);
  EXPECT_THAT(recorder.Drain(2), ElementsAre(Field(&Span::start_ns, 3), Field(&Span::start_ns, 4)));
  recorder.Record(SpanAt(6));
  EXPECT_THAT(recorder.Drain(10),
              ElementsAre(Field(&Span::start_ns, 5), Field(&Span::start_ns, 6)));
  EXPECT_EQ(recorder.size(), 0u);
}

TEST_F(SpanRecorderTest, SamplingOneInNPicksTheSameTasksEverywhere) {
  SpanRecorder worker(FakeOptions(16));
  SpanRecorder client(FakeOptions(16));
  worker.SetSampling(4);
  client.SetSampling(4);
  int sampled = 0;
  for (uint64_t batch = 0; batch < 4000; ++batch) {
    const TaskKey task{3, 1, batch};
    EXPECT_EQ(worker.Sampled(task), client.Sampled(task));
    EXPECT_EQ(worker.Sampled(task), TaskHash(task) % 4 == 0);
    sampled += worker.Sampled(task) ? 1 : 0;
  }
  // A hash, not batch_index % 4: about a quarter, not exactly every fourth.
  EXPECT_GT(sampled, 800);
  EXPECT_LT(sampled, 1200);
  worker.SetSampling(0);
  EXPECT_FALSE(worker.Sampled(TaskKey{3, 1, 0}));
}

TEST_F(SpanRecorderTest, TaskHashIsFixed) {
  // The value travels between machines and builds: it must never change.
  EXPECT_EQ(TaskHash(TaskKey{0, 0, 0}), 0u);
  EXPECT_EQ(TaskHash(TaskKey{1, 0, 0}), 0x5692161d100b05e5ULL);
}

TEST_F(SpanRecorderTest, NamesAreInternedOnceAndBounded) {
  SpanRecorder recorder(FakeOptions(1));
  EXPECT_EQ(recorder.InternName(""), 0);
  const uint16_t resize = recorder.InternName("resize");
  EXPECT_EQ(recorder.InternName("resize"), resize);
  EXPECT_NE(recorder.InternName("flip"), resize);
  for (size_t i = 0; i < SpanRecorder::kMaxNames; ++i) recorder.InternName(std::to_string(i));
  EXPECT_EQ(recorder.InternName("one too many"), 0);
  EXPECT_EQ(recorder.Names().size(), SpanRecorder::kMaxNames);
}

TEST_F(SpanRecorderTest, ThreadsGetTheirOwnIdsAndNames) {
  SpanRecorder recorder(FakeOptions(1));
  recorder.NameCurrentThread("main");
  uint32_t other_id = 0;
  std::thread other([&] {
    other_id = SpanRecorder::CurrentThreadId();
    recorder.NameCurrentThread("producer 0");
  });
  other.join();
  EXPECT_NE(other_id, SpanRecorder::CurrentThreadId());
  const auto names = recorder.ThreadNames();
  EXPECT_EQ(names.at(SpanRecorder::CurrentThreadId()), "main");
  EXPECT_EQ(names.at(other_id), "producer 0");
}

TEST(StageTest, WireValuesNamesAndRolesRoundTrip) {
  for (Stage stage : kAllStages) {
    EXPECT_EQ(StageFromWire(static_cast<uint32_t>(stage)), stage);
    EXPECT_NE(StageName(stage), "unknown");
    EXPECT_EQ(kAllStages[StageIndex(stage)], stage);
  }
  EXPECT_EQ(StageFromWire(0), std::nullopt);
  EXPECT_EQ(StageFromWire(13), std::nullopt);
  EXPECT_EQ(StageName(Stage::kH2D), "h2d");
  EXPECT_EQ(StageRole(Stage::kSend), Role::kWorker);
  EXPECT_EQ(StageRole(Stage::kReceive), Role::kClient);
  EXPECT_EQ(StageRole(Stage::kHedged), Role::kCoordinator);
  EXPECT_TRUE(IsInstant(Stage::kLeaseGranted));
  EXPECT_FALSE(IsInstant(Stage::kConsumerStep));
}

}  // namespace
}  // namespace stoker::trace
