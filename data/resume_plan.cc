#include "data/resume_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "data/epoch_plan.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/message_differencer.h"

namespace stoker {
namespace {

using stoker::v1::IndexRange;
using stoker::v1::ResumePoint;
using stoker::v1::ResumeToken;

absl::Status TokenError(size_t i, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("resume_tokens[", i, "]: ", what));
}

// INVALID_ARGUMENT unless the ranges are non-empty, sorted, disjoint and end at or below `limit`.
absl::Status CheckRanges(size_t i, const char* field,
                         const google::protobuf::RepeatedPtrField<IndexRange>& ranges,
                         uint64_t limit) {
  uint64_t previous_end = 0;
  for (int j = 0; j < ranges.size(); ++j) {
    const IndexRange& range = ranges[j];
    if (range.begin() >= range.end() || range.end() > limit ||
        (j > 0 && range.begin() < previous_end)) {
      return TokenError(
          i, absl::StrCat(field, "[", j, "]: [", range.begin(), ", ", range.end(),
                          ") is empty, unsorted, overlapping or past the universe ", limit));
    }
    previous_end = range.end();
  }
  return absl::OkStatus();
}

// The token's deal: Deal([0, universe) - done_before, rank, world_size).
std::vector<uint64_t> TokenDeal(const ResumeToken& token, bool drop_last) {
  std::vector<uint64_t> available;
  available.reserve(token.universe());
  uint64_t next = 0;
  for (const IndexRange& range : token.done_before()) {
    for (; next < range.begin(); ++next) available.push_back(next);
    next = range.end();
  }
  for (; next < token.universe(); ++next) available.push_back(next);
  return Deal(available, token.universe(), token.rank(), token.world_size(), drop_last);
}

// The global batches of the deal that the token says were consumed; INVALID_ARGUMENT when one
// is not in the deal.
absl::StatusOr<std::set<uint64_t>> TokenConsumed(size_t i, const ResumeToken& token,
                                                 const std::vector<uint64_t>& deal) {
  if (token.consumed_prefix() > deal.size()) {
    return TokenError(i, absl::StrCat("consumed_prefix ", token.consumed_prefix(),
                                      " is past the rank's ", deal.size(), " batches"));
  }
  std::set<uint64_t> consumed(deal.begin(), deal.begin() + token.consumed_prefix());
  const std::set<uint64_t> in_deal(deal.begin(), deal.end());
  for (uint64_t g : FromRanges(token.consumed_other())) {
    if (in_deal.count(g) == 0) {
      return TokenError(i, absl::StrCat("consumed batch ", g, " is not one of rank ", token.rank(),
                                        "'s batches of epoch ", token.epoch()));
    }
    consumed.insert(g);
  }
  return consumed;
}

// Checks that `token` (index i > 0) belongs with `first`.
absl::Status CheckSameRun(size_t i, const ResumeToken& token, const ResumeToken& first) {
  auto differs = [&](const char* field, auto value, auto want) {
    return TokenError(i, absl::StrCat(field, " ", value, " differs from resume_tokens[0]'s ", want,
                                      ": tokens must come from the same checkpoint"));
  };
  if (token.job_name() != first.job_name()) {
    return differs("job", absl::StrCat("'", token.job_name(), "'"),
                   absl::StrCat("'", first.job_name(), "'"));
  }
  if (token.world_size() != first.world_size()) {
    return differs("world_size", token.world_size(), first.world_size());
  }
  if (token.epoch() != first.epoch()) return differs("epoch", token.epoch(), first.epoch());
  if (token.spec_fingerprint() != first.spec_fingerprint()) {
    return differs("spec fingerprint", token.spec_fingerprint(), first.spec_fingerprint());
  }
  if (token.universe() != first.universe()) {
    return differs("universe", token.universe(), first.universe());
  }
  if (token.done_before_size() != first.done_before_size() ||
      !std::equal(token.done_before().begin(), token.done_before().end(),
                  first.done_before().begin(), [](const IndexRange& a, const IndexRange& b) {
                    return google::protobuf::util::MessageDifferencer::Equals(a, b);
                  })) {
    return TokenError(i,
                      "done_before differs from resume_tokens[0]'s: tokens must come from "
                      "the same checkpoint");
  }
  return absl::OkStatus();
}

}  // namespace

uint64_t SpecFingerprint(const stoker::v1::JobSpec& spec) {
  stoker::v1::JobSpec copy = spec;
  copy.clear_world_size();
  return JobSpecHash(copy);
}

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

std::vector<uint64_t> Deal(absl::Span<const uint64_t> order, uint64_t universe, uint32_t rank,
                           uint32_t world_size, bool drop_last) {
  const uint64_t n = order.size();
  const uint64_t per_rank = drop_last ? n / world_size : (n + world_size - 1) / world_size;
  std::vector<uint64_t> out;
  out.reserve(per_rank);
  for (uint64_t j = rank; j < per_rank * world_size; j += world_size) {
    out.push_back(j < n ? order[j] : universe + (j - n));
  }
  return out;
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

std::vector<uint64_t> RemainingBatches(const ResumePoint& point) {
  std::set<uint64_t> other;
  for (uint64_t g : FromRanges(point.consumed_other())) other.insert(g);
  std::vector<uint64_t> out;
  for (int j = static_cast<int>(std::min<uint64_t>(point.consumed_prefix(), point.deal_size()));
       j < point.deal_size(); ++j) {
    if (other.count(point.deal(j)) == 0) out.push_back(point.deal(j));
  }
  return out;
}

absl::StatusOr<ResumePoint> PlanResume(absl::Span<const std::string> tokens,
                                       const stoker::v1::JobSpec& spec, uint64_t num_samples,
                                       uint32_t rank) {
  if (tokens.empty()) return absl::InvalidArgumentError("resume_tokens: none given");
  const uint64_t fingerprint = SpecFingerprint(spec);
  std::vector<ResumeToken> parsed(tokens.size());
  std::map<uint32_t, size_t> by_rank;
  for (size_t i = 0; i < tokens.size(); ++i) {
    ResumeToken& token = parsed[i];
    if (!token.ParseFromString(tokens[i])) {
      return TokenError(i, "not a serialized ResumeToken (it does not parse)");
    }
    if (token.version() != kResumeTokenVersion) {
      return TokenError(i, absl::StrCat("version ", token.version(), " is not supported (want ",
                                        kResumeTokenVersion, ")"));
    }
    if (i > 0) RETURN_IF_ERROR(CheckSameRun(i, token, parsed[0]));
    if (token.world_size() == 0 || token.rank() >= token.world_size()) {
      return TokenError(
          i, absl::StrCat("rank ", token.rank(), " is outside world_size ", token.world_size()));
    }
    if (!by_rank.emplace(token.rank(), i).second) {
      return TokenError(i, absl::StrCat("rank ", token.rank(), " is given twice"));
    }
    if (token.spec_fingerprint() != fingerprint) {
      return TokenError(i, absl::StrCat("taken from job '", token.job_name(),
                                        "' whose spec differs from this one (fingerprint ",
                                        token.spec_fingerprint(), ", this spec's ", fingerprint,
                                        "); only world_size may change when resuming"));
    }
    if (token.epoch() > spec.epochs()) {
      return TokenError(i, absl::StrCat("epoch ", token.epoch(), " is past the job's ",
                                        spec.epochs(), " epochs"));
    }
    RETURN_IF_ERROR(CheckRanges(i, "done_before", token.done_before(), token.universe()));
    RETURN_IF_ERROR(CheckRanges(i, "consumed_other", token.consumed_other(), ~uint64_t{0}));
  }
  const ResumeToken& first = parsed[0];
  const uint32_t world_size = spec.world_size();
  const bool drop_last = spec.drop_last();
  ResumePoint point;
  point.set_resumed(true);
  point.set_spec_fingerprint(fingerprint);
  point.set_epoch(first.epoch());
  if (first.epoch() == spec.epochs()) return point;  // Everything was delivered.

  const uint64_t limit = BatchIndexLimit(
      BatchesPerRank(num_samples, spec.batch_size(), world_size, drop_last) * world_size,
      world_size);
  if (world_size == first.world_size()) {
    auto own = by_rank.find(rank);
    if (own == by_rank.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("resume_tokens: none of the ", tokens.size(), " tokens is of rank ", rank));
    }
    const ResumeToken& token = parsed[own->second];
    if (token.universe() > limit) {
      return TokenError(own->second, absl::StrCat("universe ", token.universe(),
                                                  " is past the epoch's limit of ", limit));
    }
    std::vector<uint64_t> deal = TokenDeal(token, drop_last);
    RETURN_IF_ERROR(TokenConsumed(own->second, token, deal).status());
    point.set_universe(token.universe());
    *point.mutable_done_before() = token.done_before();
    point.mutable_deal()->Assign(deal.begin(), deal.end());
    point.set_consumed_prefix(token.consumed_prefix());
    *point.mutable_consumed_other() = token.consumed_other();
    return point;
  }
  if (by_rank.size() != first.world_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("resuming with world_size ", world_size, " from a checkpoint of world_size ",
                     first.world_size(), " needs the tokens of all ", first.world_size(),
                     " ranks, got ", by_rank.size()));
  }
  std::set<uint64_t> gone;  // done_before and every rank's consumed batches
  for (uint64_t g : FromRanges(first.done_before())) gone.insert(g);
  for (size_t i = 0; i < parsed.size(); ++i) {
    ASSIGN_OR_RETURN(std::set<uint64_t> consumed,
                     TokenConsumed(i, parsed[i], TokenDeal(parsed[i], drop_last)));
    gone.insert(consumed.begin(), consumed.end());
  }
  std::vector<uint64_t> remaining;
  for (uint64_t g = 0; g < first.universe(); ++g) {
    if (gone.count(g) == 0) remaining.push_back(g);
  }
  const uint64_t per_rank =
      drop_last ? remaining.size() / world_size : (remaining.size() + world_size - 1) / world_size;
  const uint64_t pads =
      per_rank * world_size > remaining.size() ? per_rank * world_size - remaining.size() : 0;
  const uint64_t universe = first.universe() + pads;
  if (universe > limit) {
    return absl::InvalidArgumentError(absl::StrCat("resume_tokens: the resumed epoch would use ",
                                                   universe, " batch indices, past the limit of ",
                                                   limit, " (too many resumes)"));
  }
  std::vector<uint64_t> deal = Deal(remaining, first.universe(), rank, world_size, drop_last);
  std::vector<uint64_t> gone_sorted(gone.begin(), gone.end());
  point.set_universe(universe);
  for (IndexRange& range : ToRanges(gone_sorted)) *point.add_done_before() = std::move(range);
  point.mutable_deal()->Assign(deal.begin(), deal.end());
  return point;
}

}  // namespace stoker
