// What common/heap_tuning.h promises, counted in page faults rather than time: once tuned, a
// thread that keeps receiving batches (slices, then a batch-sized block, all freed) touches no
// fresh pages after the first, and every thread allocates from the one arena. A binary of its
// own: both settings are process-wide, and glibc fixes its arena limit at the first new arena.

#include "common/heap_tuning.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace stoker {
namespace {

// The sanitizers bring their own allocators, which ignore mallopt.
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
constexpr bool kHeapTuningTestGlibcMalloc = true;
#else
constexpr bool kHeapTuningTestGlibcMalloc = false;
#endif

// A 64-image uint8 224x224x3 batch: 2,352 pages when fresh.
constexpr size_t kHeapTuningTestBatchBytes = 64 * 224 * 224 * 3;

volatile char heap_tuning_test_sink;

bool HeapTuningTestSkipped() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return !kHeapTuningTestGlibcMalloc ||
         (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr);
}

long HeapTuningTestThreadMinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// Touches every page of a new block of `bytes` and returns it.
char* HeapTuningTestTouched(size_t bytes, char fill) {
  char* block = static_cast<char*>(std::malloc(bytes));
  std::memset(block, fill, bytes);
  heap_tuning_test_sink = block[bytes - 1];
  return block;
}

TEST(HeapTuningTest, ReceivingThreadReusesFreedBatchMemory) {
  if (HeapTuningTestSkipped()) GTEST_SKIP() << "needs glibc's malloc, untuned by GLIBC_TUNABLES";
  UseOneHeapArena();
  RetainFreedHeapMemory();
  constexpr int kBatches = 20;
  long after_first = 0;
  long after_last = 0;
  // Not the main thread: gRPC's polling thread, where the client's faults were.
  std::thread([&] {
    for (int batch = 0; batch < kBatches; ++batch) {
      std::vector<char*> slices;
      for (int i = 0; i < 64; ++i) slices.push_back(HeapTuningTestTouched(16384 + 512 * i, 1));
      char* payload = HeapTuningTestTouched(kHeapTuningTestBatchBytes, static_cast<char>(batch));
      for (char* slice : slices) std::free(slice);
      std::free(payload);
      if (batch == 0) after_first = HeapTuningTestThreadMinorFaults();
    }
    after_last = HeapTuningTestThreadMinorFaults();
  }).join();
  // Returned memory would fault in again: at least 2,352 pages a batch.
  EXPECT_LE(after_last - after_first, 16);
}

TEST(HeapTuningTest, EveryThreadAllocatesFromOneArena) {
  if (HeapTuningTestSkipped()) GTEST_SKIP() << "needs glibc's malloc, untuned by GLIBC_TUNABLES";
  UseOneHeapArena();
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([] { std::free(HeapTuningTestTouched(1 << 20, 2)); });
  }
  for (std::thread& thread : threads) thread.join();
#if defined(__GLIBC__)
  char* text = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(malloc_info(0, out), 0);
  std::fclose(out);
  const std::string info(text, size);
  std::free(text);
  // malloc_info writes one <heap nr="..."> element per arena.
  size_t arenas = 0;
  for (size_t at = info.find("<heap nr="); at != std::string::npos;
       at = info.find("<heap nr=", at + 1)) {
    ++arenas;
  }
  EXPECT_EQ(arenas, 1u) << info;
#endif
}

}  // namespace
}  // namespace stoker
