#include "plan/resume_plan.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "google/protobuf/util/message_differencer.h"
#include "plan/epoch_plan.h"

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

// Batches per rank when `n` batches are dealt over `world_size` ranks (the file comment's bpr).
uint64_t DealSize(uint64_t n, uint32_t world_size, bool drop_last) {
  return drop_last ? n / world_size : n / world_size + (n % world_size != 0 ? 1 : 0);
}

// The token's deal, Deal([0, universe) - done_before, rank, world_size), walked from the
// ranges: O(deal + ranges) time and memory, never O(universe). REQUIRES: done_before checked
// (CheckRanges against the universe).
std::vector<uint64_t> TokenDeal(const ResumeToken& token, bool drop_last) {
  const auto& done = token.done_before();
  uint64_t done_count = 0;
  for (const IndexRange& range : done) done_count += range.end() - range.begin();
  const uint64_t n = token.universe() - done_count;
  const uint32_t world_size = token.world_size();
  const uint64_t slots = DealSize(n, world_size, drop_last) * world_size;
  std::vector<uint64_t> out;
  out.reserve(DealSize(n, world_size, drop_last));
  int next_range = 0;     // the first done_before range not yet passed
  uint64_t value = 0;     // a candidate index of [0, universe)
  uint64_t position = 0;  // how many available indices lie below `value`
  for (uint64_t j = token.rank(); j < slots; j += world_size) {
    if (j >= n) {
      out.push_back(token.universe() + (j - n));  // a pad batch
      continue;
    }
    while (true) {  // move `value` to the j-th available index
      while (next_range < done.size() && done[next_range].begin() <= value) {
        value = std::max(value, done[next_range++].end());
      }
      const uint64_t gap_end =
          next_range < done.size() ? done[next_range].begin() : token.universe();
      if (j - position < gap_end - value) break;
      position += gap_end - value;
      value = gap_end;
    }
    value += j - position;
    position = j;
    out.push_back(value);
  }
  return out;
}

// The global batches of the deal that the token says were consumed; INVALID_ARGUMENT when one
// is not in the deal.
// Sorted vectors, not sets: a hostile token may make these as large as --max-resume-batches.
absl::StatusOr<std::vector<uint64_t>> TokenConsumed(size_t i, const ResumeToken& token,
                                                    const std::vector<uint64_t>& deal) {
  if (token.delivered_prefix() > deal.size()) {
    return TokenError(i, absl::StrCat("delivered_prefix ", token.delivered_prefix(),
                                      " is past the rank's ", deal.size(), " batches"));
  }
  std::vector<uint64_t> consumed(deal.begin(), deal.begin() + token.delivered_prefix());
  std::vector<uint64_t> in_deal = deal;
  std::sort(in_deal.begin(), in_deal.end());
  for (uint64_t g : FromRanges(token.delivered_other())) {
    if (!std::binary_search(in_deal.begin(), in_deal.end(), g)) {
      return TokenError(i, absl::StrCat("consumed batch ", g, " is not one of rank ", token.rank(),
                                        "'s batches of epoch ", token.epoch()));
    }
    consumed.push_back(g);
  }
  std::sort(consumed.begin(), consumed.end());
  consumed.erase(std::unique(consumed.begin(), consumed.end()), consumed.end());
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

// The tokens of one PlanResume call, parsed and checked against each other and the spec.
struct ParsedTokens {
  std::vector<ResumeToken> tokens;
  std::map<uint32_t, size_t> by_rank;  // rank -> index in tokens
};

// Checks one decoded token against the spec (index i, for messages).
absl::Status CheckToken(size_t i, const ResumeToken& token, const stoker::v1::JobSpec& spec,
                        uint64_t fingerprint) {
  if (token.world_size() == 0 || token.rank() >= token.world_size()) {
    return TokenError(
        i, absl::StrCat("rank ", token.rank(), " is outside world_size ", token.world_size()));
  }
  if (token.spec_fingerprint() != fingerprint) {
    return TokenError(i, absl::StrCat("taken from job '", token.job_name(),
                                      "' whose spec differs from this one (fingerprint ",
                                      token.spec_fingerprint(), ", this spec's ", fingerprint,
                                      "); only world_size may change when resuming"));
  }
  if (token.epoch() > spec.epochs()) {
    return TokenError(
        i, absl::StrCat("epoch ", token.epoch(), " is past the job's ", spec.epochs(), " epochs"));
  }
  RETURN_IF_ERROR(CheckRanges(i, "done_before", token.done_before(), token.universe()));
  // Consumed batches lie in the deal, whose pad batches (drop_last false) end below
  // universe + world_size; a range past that would only make FromRanges allocate.
  return CheckRanges(i, "delivered_other", token.delivered_other(),
                     token.universe() + token.world_size());
}

absl::StatusOr<ParsedTokens> ParseTokens(absl::Span<const std::string> tokens,
                                         const stoker::v1::JobSpec& spec) {
  if (tokens.empty()) return absl::InvalidArgumentError("resume_tokens: none given");
  const uint64_t fingerprint = SpecFingerprint(spec);
  ParsedTokens parsed;
  parsed.tokens.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    absl::StatusOr<ResumeToken> token = DecodeResumeToken(tokens[i]);
    if (!token.ok()) return TokenError(i, token.status().message());
    if (i > 0) RETURN_IF_ERROR(CheckSameRun(i, *token, parsed.tokens[0]));
    if (token->world_size() != 0 && token->rank() < token->world_size() &&
        !parsed.by_rank.emplace(token->rank(), i).second) {
      return TokenError(i, absl::StrCat("rank ", token->rank(), " is given twice"));
    }
    RETURN_IF_ERROR(CheckToken(i, *token, spec, fingerprint));
    parsed.tokens.push_back(*std::move(token));
  }
  return parsed;
}

// Same world size as the tokens: the caller's own token's deal stays.
absl::Status ResumeSameWorld(const ParsedTokens& parsed, const stoker::v1::JobSpec& spec,
                             uint32_t rank, ResumePoint& point) {
  auto own = parsed.by_rank.find(rank);
  if (own == parsed.by_rank.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "resume_tokens: none of the ", parsed.tokens.size(), " tokens is of rank ", rank));
  }
  const ResumeToken& token = parsed.tokens[own->second];
  std::vector<uint64_t> deal = TokenDeal(token, spec.drop_last());
  RETURN_IF_ERROR(TokenConsumed(own->second, token, deal).status());
  point.set_universe(token.universe());
  *point.mutable_done_before() = token.done_before();
  point.mutable_deal()->Assign(deal.begin(), deal.end());
  point.set_delivered_prefix(token.delivered_prefix());
  *point.mutable_delivered_other() = token.delivered_other();
  return absl::OkStatus();
}

// Another world size: the remaining batches of every old rank are dealt anew.
absl::Status ResumeNewWorld(const ParsedTokens& parsed, const stoker::v1::JobSpec& spec,
                            uint32_t rank, uint64_t limit, ResumePoint& point) {
  const ResumeToken& first = parsed.tokens[0];
  const uint32_t world_size = spec.world_size();
  const bool drop_last = spec.drop_last();
  if (parsed.by_rank.size() != first.world_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("resuming with world_size ", world_size, " from a checkpoint of world_size ",
                     first.world_size(), " needs the tokens of all ", first.world_size(),
                     " ranks, got ", parsed.by_rank.size()));
  }
  // done_before and every rank's consumed batches, sorted, without duplicates
  std::vector<uint64_t> gone = FromRanges(first.done_before());
  for (size_t i = 0; i < parsed.tokens.size(); ++i) {
    const ResumeToken& token = parsed.tokens[i];
    ASSIGN_OR_RETURN(std::vector<uint64_t> consumed,
                     TokenConsumed(i, token, TokenDeal(token, drop_last)));
    gone.insert(gone.end(), consumed.begin(), consumed.end());
  }
  std::sort(gone.begin(), gone.end());
  gone.erase(std::unique(gone.begin(), gone.end()), gone.end());
  std::vector<uint64_t> remaining;
  auto next_gone = gone.begin();
  for (uint64_t g = 0; g < first.universe(); ++g) {
    while (next_gone != gone.end() && *next_gone < g) ++next_gone;
    if (next_gone == gone.end() || *next_gone != g) remaining.push_back(g);
  }
  const uint64_t per_rank = DealSize(remaining.size(), world_size, drop_last);
  const uint64_t pads =
      per_rank * world_size > remaining.size() ? per_rank * world_size - remaining.size() : 0;
  const uint64_t universe = first.universe() + pads;
  if (universe > limit) {
    return absl::InvalidArgumentError(absl::StrCat("resume_tokens: the resumed epoch would use ",
                                                   universe, " batch indices, past the limit of ",
                                                   limit, " (too many resumes)"));
  }
  std::vector<uint64_t> deal = Deal(remaining, first.universe(), rank, world_size, drop_last);
  point.set_universe(universe);
  for (IndexRange& range : ToRanges(gone)) *point.add_done_before() = std::move(range);
  point.mutable_deal()->Assign(deal.begin(), deal.end());
  return absl::OkStatus();
}

}  // namespace

std::vector<uint64_t> Deal(absl::Span<const uint64_t> order, uint64_t universe, uint32_t rank,
                           uint32_t world_size, bool drop_last) {
  const uint64_t n = order.size();
  const uint64_t per_rank = DealSize(n, world_size, drop_last);
  std::vector<uint64_t> out;
  out.reserve(per_rank);
  for (uint64_t j = rank; j < per_rank * world_size; j += world_size) {
    out.push_back(j < n ? order[j] : universe + (j - n));
  }
  return out;
}

std::vector<uint64_t> RemainingBatches(const ResumePoint& point) {
  const std::vector<bool> consumed = ConsumedBeforeResume(point);
  std::vector<uint64_t> out;
  for (int j = 0; j < point.deal_size(); ++j) {
    if (!consumed[j]) out.push_back(point.deal(j));
  }
  return out;
}

absl::StatusOr<ResumePoint> PlanResume(absl::Span<const std::string> tokens,
                                       const stoker::v1::JobSpec& spec, uint64_t num_samples,
                                       uint32_t rank, uint64_t max_universe) {
  ASSIGN_OR_RETURN(ParsedTokens parsed, ParseTokens(tokens, spec));
  const ResumeToken& first = parsed.tokens[0];
  ResumePoint point;
  point.set_resumed(true);
  point.set_spec_fingerprint(SpecFingerprint(spec));
  point.set_epoch(first.epoch());
  if (first.epoch() == spec.epochs()) return point;  // Everything was delivered.
  const uint32_t world_size = spec.world_size();
  const uint64_t limit = BatchIndexLimit(
      BatchesPerRank(num_samples, spec.batch_size(), world_size, spec.drop_last()) * world_size,
      world_size);
  // Before anything is sized by it: the deals and the remaining batches are O(universe).
  // Every token has the same universe (CheckSameRun).
  if (first.universe() > limit) {
    return TokenError(
        0, absl::StrCat("universe ", first.universe(), " is past the epoch's limit of ", limit));
  }
  if (first.universe() > max_universe) {
    return TokenError(
        0, absl::StrCat("universe ", first.universe(), " is over the coordinator's limit of ",
                        max_universe, " batches per resumed epoch (--max-resume-batches)"));
  }
  if (world_size == first.world_size()) {
    RETURN_IF_ERROR(ResumeSameWorld(parsed, spec, rank, point));
  } else {
    RETURN_IF_ERROR(ResumeNewWorld(parsed, spec, rank, std::min(limit, max_universe), point));
  }
  return point;
}

}  // namespace stoker
