#include "trainer_client/credit_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace stoker {
namespace {

constexpr size_t kMaxArrivals = 1 << 14;  // bounds a stream's rate window

absl::Duration P99(std::vector<absl::Duration> samples) {
  if (samples.empty()) return absl::ZeroDuration();
  const size_t rank = static_cast<size_t>(std::ceil(0.99 * samples.size())) - 1;
  std::nth_element(samples.begin(), samples.begin() + rank, samples.end());
  return samples[rank];
}

}  // namespace

CreditPolicy::Config CreditPolicy::ForJob(uint64_t prefetch_bytes, uint64_t batch_bytes,
                                          bool balance) {
  Config config;
  if (batch_bytes > 0) {
    config.budget_batches = std::max<uint64_t>(1, prefetch_bytes / batch_bytes);
    config.byte_cap = true;
  }
  config.balance = balance;
  return config;
}

const CreditPolicy::Stream* CreditPolicy::Find(StreamId id) const {
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : &it->second;
}

uint64_t CreditPolicy::effective_budget(std::optional<size_t> streams) const {
  return std::max<uint64_t>({config_.budget_batches, streams.value_or(streams_.size()), 1});
}

uint32_t CreditPolicy::AddStream(StreamId id, absl::Time now) {
  Stream& stream = streams_[id];
  stream = Stream{};
  stream.opened = now;
  const uint64_t budget = effective_budget();
  const uint64_t even = std::clamp<uint64_t>(budget / streams_.size(), 1, kMaxShare);
  // Scale the others down so that the sum stays within the budget.
  uint64_t others = 0;
  for (const auto& [other_id, other] : streams_) {
    if (other_id != id) others += other.share;
  }
  const uint64_t room = budget - even;
  if (others > room) {
    for (auto& [other_id, other] : streams_) {
      if (other_id == id) continue;
      other.share = static_cast<uint32_t>(
          std::max<uint64_t>(1, static_cast<uint64_t>(other.share) * room / others));
    }
  }
  stream.share = static_cast<uint32_t>(even);
  return stream.share;
}

void CreditPolicy::RemoveStream(StreamId id) { streams_.erase(id); }

void CreditPolicy::OnBatch(StreamId id, absl::Time now) {
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  Stream& stream = it->second;
  if (stream.outstanding > 0) --stream.outstanding;
  if (!stream.grants.empty()) {
    Grant& oldest = stream.grants.front();
    stream.latencies.push_back(now - oldest.at);
    if (stream.latencies.size() > config_.latency_samples) stream.latencies.pop_front();
    if (--oldest.credits == 0) stream.grants.pop_front();
  }
  stream.last_arrival = now;
  stream.arrivals.push_back(now);
  if (stream.arrivals.size() > kMaxArrivals) stream.arrivals.pop_front();
  PruneArrivals(stream, now);
}

void CreditPolicy::OnBuffered(StreamId id) {
  if (auto it = streams_.find(id); it != streams_.end()) ++it->second.held;
}

void CreditPolicy::OnHandedOut(StreamId id) {
  if (auto it = streams_.find(id); it != streams_.end() && it->second.held > 0) --it->second.held;
}

void CreditPolicy::PruneArrivals(Stream& stream, absl::Time now) const {
  while (!stream.arrivals.empty() && stream.arrivals.front() <= now - config_.rate_window) {
    stream.arrivals.pop_front();
  }
}

double CreditPolicy::RateOf(const Stream& stream, absl::Time now) const {
  uint64_t count = 0;
  for (auto it = stream.arrivals.rbegin(); it != stream.arrivals.rend(); ++it) {
    if (*it <= now - config_.rate_window) break;
    ++count;
  }
  const absl::Duration span = std::min(config_.rate_window, now - stream.opened);
  if (span <= absl::ZeroDuration()) return 0;
  return static_cast<double>(count) / absl::ToDoubleSeconds(span);
}

absl::Duration CreditPolicy::OverdueLimit(std::vector<absl::Duration> latencies) const {
  return std::max(config_.overdue_floor, P99(std::move(latencies)) * config_.overdue_factor);
}

absl::Duration CreditPolicy::P99Latency(StreamId id) const {
  const Stream* stream = Find(id);
  if (stream == nullptr) return absl::ZeroDuration();
  return P99({stream->latencies.begin(), stream->latencies.end()});
}

absl::Duration CreditPolicy::OverdueAfter() const {
  std::vector<absl::Duration> all;
  for (const auto& [id, stream] : streams_) {
    all.insert(all.end(), stream.latencies.begin(), stream.latencies.end());
  }
  return OverdueLimit(std::move(all));
}

bool CreditPolicy::SilentOf(const Stream& stream, absl::Time now) const {
  if (stream.grants.empty()) return false;  // nothing asked of it
  const absl::Time since = std::max(stream.last_arrival, stream.grants.front().at);
  return now - since > OverdueLimit({stream.latencies.begin(), stream.latencies.end()});
}

std::map<StreamId, uint32_t> CreditPolicy::Targets(absl::Time now) {
  std::map<StreamId, double> weights;
  double warm_sum = 0;
  int warm = 0;
  for (auto& [id, stream] : streams_) {
    PruneArrivals(stream, now);
    if (now - stream.opened >= config_.rate_window) {
      const double rate = RateOf(stream, now);
      weights[id] = rate;
      warm_sum += rate;
      ++warm;
    }
  }
  const double mean = warm > 0 && warm_sum > 0 ? warm_sum / warm : 1.0;
  double total = 0;
  for (auto& [id, stream] : streams_) {
    auto it = weights.try_emplace(id, mean).first;  // young streams weigh the mean
    if (SilentOf(stream, now)) it->second = 0;
    total += it->second;
  }
  const uint64_t spare = effective_budget() - streams_.size();
  std::map<StreamId, uint32_t> targets;
  // Nothing measurable (all silent), or balancing switched off: even split.
  if (!config_.balance || total <= 0) {
    for (const auto& [id, stream] : streams_) {
      targets[id] =
          static_cast<uint32_t>(std::min<uint64_t>(1 + spare / streams_.size(), kMaxShare));
    }
    return targets;
  }
  // 1 + floor(spare × w / total), the remainder to the largest fractions.
  std::vector<std::pair<double, StreamId>> fractions;
  uint64_t given = 0;
  for (const auto& [id, weight] : weights) {
    const double exact = static_cast<double>(spare) * weight / total;
    const uint64_t whole = static_cast<uint64_t>(std::floor(exact));
    targets[id] = static_cast<uint32_t>(1 + whole);
    given += whole;
    fractions.emplace_back(exact - static_cast<double>(whole), id);
  }
  std::sort(fractions.begin(), fractions.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (size_t i = 0; given < spare && i < fractions.size(); ++i, ++given) {
    if (weights[fractions[i].second] > 0) ++targets[fractions[i].second];
  }
  for (auto& [id, target] : targets) target = std::min(target, kMaxShare);
  return targets;
}

void CreditPolicy::Rebalance(absl::Time now) {
  if (streams_.empty()) return;
  const std::map<StreamId, uint32_t> targets = Targets(now);
  // Shrink first (gradually), then let the growing streams share what is free.
  uint64_t sum = 0;
  uint64_t deficit = 0;
  for (auto& [id, stream] : streams_) {
    const uint32_t target = targets.at(id);
    if (target < stream.share) {
      const uint32_t gap = stream.share - target;
      const uint32_t step = std::max<uint32_t>(
          1, static_cast<uint32_t>(std::ceil(gap * std::clamp(config_.decay, 0.0, 1.0))));
      stream.share -= std::min(gap, step);
    } else {
      deficit += target - stream.share;
    }
    stream.share = std::max<uint32_t>(stream.share, 1);
    sum += stream.share;
  }
  const uint64_t budget = effective_budget();
  uint64_t room = budget > sum ? budget - sum : 0;
  if (deficit == 0 || room == 0) return;
  const uint64_t pool = std::min(room, deficit);
  for (auto& [id, stream] : streams_) {
    const uint32_t target = targets.at(id);
    if (target <= stream.share || room == 0) continue;
    const uint64_t want = target - stream.share;
    // Proportional to the deficit, rounded up so that small deficits progress too.
    const uint64_t grow = std::min({room, want, (pool * want + deficit - 1) / deficit});
    stream.share += static_cast<uint32_t>(grow);
    room -= grow;
  }
}

void CreditPolicy::UpdateStall(const ConsumerView& view, absl::Time now) {
  if (!view.waiting || view.ready) {
    stall_start_.reset();
    extra_ = 0;
    return;
  }
  if (!stall_start_) stall_start_ = now;
  if (view.buffered == 0) {  // the shares are not used up: no extra needed
    extra_ = 0;
    return;
  }
  const double seconds = absl::ToDoubleSeconds(now - *stall_start_);
  uint32_t extra = 1;
  if (seconds >= 1.0) extra = 2 + static_cast<uint32_t>(std::floor(std::log2(seconds)));
  extra_ = std::max(extra_, extra);
}

std::optional<absl::Duration> CreditPolicy::stalled_for(absl::Time now) const {
  if (!stall_start_) return std::nullopt;
  return now - *stall_start_;
}

uint64_t CreditPolicy::committed(size_t buffered) const {
  uint64_t total = buffered;
  for (const auto& [id, stream] : streams_) total += stream.outstanding;
  return total;
}

std::vector<CreditGrant> CreditPolicy::TakeCreditGrants(const ConsumerView& view, absl::Time now) {
  UpdateStall(view, now);
  std::vector<CreditGrant> grants;
  uint64_t room = UINT64_MAX;  // under the byte cap
  if (config_.byte_cap) {
    const uint64_t cap = effective_budget() + uint64_t{extra_} * streams_.size();
    const uint64_t used = committed(view.buffered);
    room = cap > used ? cap - used : 0;
  }
  for (auto& [id, stream] : streams_) {
    const uint64_t level = static_cast<uint64_t>(stream.share) + extra_;
    const uint64_t have = static_cast<uint64_t>(stream.outstanding) + stream.held;
    if (have >= level || room == 0) continue;
    const uint32_t owed = static_cast<uint32_t>(std::min(level - have, room));
    room -= owed;
    stream.outstanding += owed;
    stream.grants.push_back(Grant{now, owed});
    grants.push_back(CreditGrant{id, owed});
  }
  return grants;
}

}  // namespace stoker
