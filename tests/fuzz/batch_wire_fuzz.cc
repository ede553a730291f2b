// Fuzz target: the trainer client's batch splitter, SplitBatchWire
// (wire/batch_wire_splitter.h), over a BatchMessage as gRPC hands it over: the bytes of a
// worker, cut into slices anywhere.
//
// Input: up to 16 slices framed by SplitChunks (fuzz_input.h); each is copied into its own heap
// block, so a read past a slice is an ASan report even where the next slice follows in the input.
// Invariants checked, protobuf's parser of the whole message being the reference:
//   - a refusal is DATA_LOSS, "batch message: ...";
//   - an accepted message: the payload views lie inside the slices and none is empty; the header
//     bytes parse exactly when the whole message does, and then to the same message without
//     `data`, and the payload is protobuf's `data`.

#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "stoker/v1/worker.pb.h"
#include "tests/fuzz/fuzz_input.h"
#include "wire/batch_wire_splitter.h"

namespace {

constexpr size_t kMaxSlices = 16;

using Bytes = absl::Span<const uint8_t>;

bool InsideOneOf(const std::vector<std::unique_ptr<uint8_t[]>>& blocks,
                 const std::vector<Bytes>& slices, Bytes view) {
  for (size_t i = 0; i < slices.size(); ++i) {
    const uint8_t* begin = blocks[i].get();
    if (view.data() >= begin && view.data() + view.size() <= begin + slices[i].size()) return true;
  }
  return false;
}

// Map fields (bad_samples) serialize in a fixed order only when asked to.
std::string Deterministic(const stoker::v1::BatchMessage& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::QuietProtobufLogs();
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::unique_ptr<uint8_t[]>> blocks;
  std::vector<Bytes> slices;
  std::string whole;
  for (absl::string_view chunk : stoker::fuzz::SplitChunks(input, kMaxSlices)) {
    blocks.push_back(std::make_unique<uint8_t[]>(chunk.size()));
    if (!chunk.empty()) std::memcpy(blocks.back().get(), chunk.data(), chunk.size());
    slices.emplace_back(blocks.back().get(), chunk.size());
    whole.append(chunk.data(), chunk.size());
  }
  absl::StatusOr<stoker::BatchWireParts> parts = stoker::SplitBatchWire(slices);
  if (!parts.ok()) {
    FUZZ_CHECK(parts.status().code() == absl::StatusCode::kDataLoss);
    FUZZ_CHECK(absl::StartsWith(parts.status().message(), "batch message: "));
    return 0;
  }
  std::string payload;
  for (Bytes view : parts->payload) {
    FUZZ_CHECK(!view.empty());
    FUZZ_CHECK(InsideOneOf(blocks, slices, view));
    payload.append(reinterpret_cast<const char*>(view.data()), view.size());
  }
  FUZZ_CHECK(parts->header_bytes.size() + payload.size() <= whole.size());
  stoker::v1::BatchMessage reference;
  stoker::v1::BatchMessage header;
  const bool whole_parses = reference.ParseFromString(whole);
  const bool header_parses = header.ParseFromString(parts->header_bytes);
  // `data` is bytes (no UTF-8 check), so only the other fields decide whether protobuf parses.
  FUZZ_CHECK(whole_parses == header_parses);
  if (!whole_parses) return 0;
  FUZZ_CHECK(header.data().empty());
  FUZZ_CHECK(reference.data() == payload);
  header.set_data(payload);
  FUZZ_CHECK(Deterministic(header) == Deterministic(reference));
  return 0;
}
