#ifndef STOKER_COORDINATOR_ETCD_ETCD_STORE_CODEC_H_
#define STOKER_COORDINATOR_ETCD_ETCD_STORE_CODEC_H_

// The keys and values of the etcd StateStore (etcd_state_store.h), without etcd: key names,
// log values (framed StateUpdate records), the snapshot's meta and its chunks. Decoding errors
// are DATA_LOSS "etcd key <key>: <what>", so that an operator can find the damaged key.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "etcd/etcdserver/etcdserverpb/rpc.pb.h"
#include "stoker/v1/journal.pb.h"

namespace stoker {

// One chunk's value (a frame of up to this many snapshot bytes) stays under 1 MiB, so that a
// transaction of one chunk fits etcd's 1.5 MiB request limit with room to spare.
inline constexpr size_t kEtcdSnapshotChunkBytes = (1u << 20) - 64;

// "<prefix>log/<20-digit first sequence>": one group commit's records, first..first+n-1.
std::string EtcdLogKey(absl::string_view prefix, uint64_t first_sequence);
// "<prefix>log/<20-digit sequence>.large": a record too large for one transaction; its value
// is a manifest (an EtcdSnapMeta) of its parts, "<prefix>large/<20-digit sequence>/<part>",
// written before it.
std::string EtcdLargeRecordKey(absl::string_view prefix, uint64_t sequence);
std::string EtcdLargePrefix(absl::string_view prefix);
std::string EtcdLargePartsPrefix(absl::string_view prefix, uint64_t sequence);
std::string EtcdLargePartKey(absl::string_view prefix, uint64_t sequence, size_t part);
// The first sequence a log key names (and whether it is a large record's); DATA_LOSS naming
// the key when it is not one.
absl::StatusOr<uint64_t> ParseEtcdLogKey(absl::string_view prefix, absl::string_view key,
                                         bool* large);
std::string EtcdLogPrefix(absl::string_view prefix);
std::string EtcdSnapMetaKey(absl::string_view prefix);
std::string EtcdSnapPrefix(absl::string_view prefix);
// "<prefix>snap/<20-digit generation>/", under which its chunks "<6-digit index>" lie.
std::string EtcdSnapGenerationPrefix(absl::string_view prefix, uint64_t generation);
std::string EtcdSnapChunkKey(absl::string_view prefix, uint64_t generation, size_t chunk);

// Transaction operations: a put, a delete of the keys [key, range_end).
etcdserverpb::RequestOp EtcdPutOp(std::string key, std::string value);
etcdserverpb::RequestOp EtcdDeleteRangeOp(std::string key, std::string range_end);

// snap/meta: the current snapshot (and a large record's manifest). Its value is a frame
// (common/byte_codec.h) of [u64 generation][u64 through][u32 chunks][u32 crc32c of the snapshot
// bytes][u64 bytes].
struct EtcdSnapMeta {
  uint64_t generation = 0;
  uint64_t through = 0;  // the last sequence the snapshot covers
  uint32_t chunks = 0;
  uint32_t crc = 0;  // CRC-32C of the snapshot bytes (the chunks' payloads, in order)
  uint64_t bytes = 0;
};
std::string EncodeEtcdSnapMeta(const EtcdSnapMeta& meta);
absl::StatusOr<EtcdSnapMeta> DecodeEtcdSnapMeta(absl::string_view key, absl::string_view value);

// `bytes` in chunk values (frames of up to kEtcdSnapshotChunkBytes); sets meta's chunks, crc
// and bytes. And back, checked against `meta` (read from `meta_key`, which a mismatch names).
std::vector<std::string> EncodeEtcdChunks(absl::string_view bytes, EtcdSnapMeta* meta);
absl::StatusOr<std::string> DecodeEtcdChunks(
    absl::string_view meta_key, const EtcdSnapMeta& meta,
    const std::vector<std::pair<std::string, std::string>>& chunks);

// The chunk values of a snapshot: its bytes (FileJournal::Frame of the `restore` update) in
// frames of up to kEtcdSnapshotChunkBytes. Sets meta's chunks, crc and bytes.
std::vector<std::string> EncodeEtcdSnapshot(const stoker::v1::StateUpdate& restore,
                                            EtcdSnapMeta* meta);
// The `restore` update back from its chunks (key, value), in order, checked against `meta`
// (read from `meta_key`, which a mismatch names).
absl::StatusOr<stoker::v1::StateUpdate> DecodeEtcdSnapshot(
    absl::string_view meta_key, const EtcdSnapMeta& meta,
    const std::vector<std::pair<std::string, std::string>>& chunks);

// A log value: the framed records, concatenated.
void AppendEtcdLogRecord(const stoker::v1::StateUpdate& update, std::string* value);
// Appends the records of a log value to `out`.
absl::Status DecodeEtcdLogValue(absl::string_view key, absl::string_view value,
                                std::vector<stoker::v1::StateUpdate>* out);

}  // namespace stoker

#endif  // STOKER_COORDINATOR_ETCD_ETCD_STORE_CODEC_H_
