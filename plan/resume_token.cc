#include "plan/resume_token.h"

#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace stoker {

using stoker::v1::IndexRange;
using stoker::v1::ResumePoint;
using stoker::v1::ResumeToken;

uint64_t JobSpecHash(const stoker::v1::JobSpec& spec) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    spec.SerializeToCodedStream(&coded);
  }
  uint64_t hash = 14695981039346656037ull;  // FNV-1a 64
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

uint64_t SpecFingerprint(const stoker::v1::JobSpec& spec) {
  stoker::v1::JobSpec copy = spec;
  copy.clear_world_size();
  return JobSpecHash(copy);
}

std::vector<IndexRange> ToRanges(absl::Span<const uint64_t> sorted) {
  std::vector<IndexRange> out;
  for (uint64_t g : sorted) {
    if (!out.empty() && out.back().end() == g) {
      out.back().set_end(g + 1);
    } else {
      IndexRange& range = out.emplace_back();
      range.set_begin(g);
      range.set_end(g + 1);
    }
  }
  return out;
}

std::vector<uint64_t> FromRanges(const google::protobuf::RepeatedPtrField<IndexRange>& ranges) {
  std::vector<uint64_t> out;
  for (const IndexRange& range : ranges) {
    for (uint64_t g = range.begin(); g < range.end(); ++g) out.push_back(g);
  }
  return out;
}

std::vector<bool> ConsumedBeforeResume(const ResumePoint& point) {
  std::vector<bool> consumed(point.deal_size(), false);
  if (!point.resumed()) return consumed;
  const uint64_t prefix = std::min<uint64_t>(point.delivered_prefix(), point.deal_size());
  for (uint64_t i = 0; i < prefix; ++i) consumed[i] = true;
  const std::vector<uint64_t> other = FromRanges(point.delivered_other());
  const absl::flat_hash_set<uint64_t> other_set(other.begin(), other.end());
  for (uint64_t i = prefix; i < consumed.size(); ++i) {
    if (other_set.contains(point.deal(static_cast<int>(i)))) consumed[i] = true;
  }
  return consumed;
}

std::string EncodeResumeToken(const ResumePoint& start, const RankPosition& position) {
  ResumeToken token;
  token.set_version(kResumeTokenVersion);
  token.set_job_name(position.job_name);
  token.set_spec_fingerprint(start.spec_fingerprint());
  token.set_tenant(start.tenant());
  token.set_world_size(position.world_size);
  token.set_rank(position.rank);
  token.set_epoch(position.epoch);
  if (start.resumed() && position.epoch == start.epoch()) {
    token.set_universe(start.universe());
    *token.mutable_done_before() = start.done_before();
  } else {
    token.set_universe(position.batches_per_rank * position.world_size);
  }
  token.set_delivered_prefix(position.prefix);
  for (IndexRange& range : ToRanges(position.other)) {
    *token.add_delivered_other() = std::move(range);
  }
  return token.SerializeAsString();
}

absl::StatusOr<ResumeToken> DecodeResumeToken(absl::string_view bytes) {
  ResumeToken token;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !token.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("not a serialized ResumeToken (it does not parse)");
  }
  if (token.version() == 1) {
    return absl::InvalidArgumentError(
        "resume token version 1 was made by an older Stoker whose shuffle differs; its positions "
        "would name other samples, so it cannot resume this job: start the epoch afresh (open the "
        "job without a token) or finish it with the older release");
  }
  if (token.version() != kResumeTokenVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "version ", token.version(), " is not supported (want ", kResumeTokenVersion, ")"));
  }
  return token;
}

}  // namespace stoker
