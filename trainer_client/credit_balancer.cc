#include "trainer_client/credit_balancer.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace stoker {
namespace {

constexpr size_t kMaxArrivals = 1 << 14;  // bounds a stream's rate window

}  // namespace

CreditBalancer::CreditBalancer(const Config& config) : config_(config) {}

uint64_t CreditBalancer::effective_budget() const {
  return std::max<uint64_t>({config_.budget_batches, streams_.size(), 1});
}

uint32_t CreditBalancer::AddStream(StreamId id, absl::Time now) {
  Stream& stream = streams_[id];
  stream = Stream{};
  stream.opened = now;
  const uint64_t budget = effective_budget();
  const uint64_t even = std::clamp<uint64_t>(budget / streams_.size(), 1, config_.max_share);
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
      shares_[other_id] = other.share;
    }
  }
  stream.share = static_cast<uint32_t>(even);
  shares_[id] = stream.share;
  return stream.share;
}

void CreditBalancer::RemoveStream(StreamId id) {
  streams_.erase(id);
  shares_.erase(id);
}

void CreditBalancer::OnGrant(StreamId id, uint32_t n, absl::Time now) {
  auto it = streams_.find(id);
  if (it == streams_.end() || n == 0) return;
  it->second.grants.push_back(Grant{now, n});
}

void CreditBalancer::OnBatch(StreamId id, absl::Time now) {
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  Stream& stream = it->second;
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

void CreditBalancer::PruneArrivals(Stream& stream, absl::Time now) const {
  while (!stream.arrivals.empty() && stream.arrivals.front() <= now - config_.rate_window) {
    stream.arrivals.pop_front();
  }
}

double CreditBalancer::RateOf(const Stream& stream, absl::Time now) const {
  uint64_t count = 0;
  for (auto it = stream.arrivals.rbegin(); it != stream.arrivals.rend(); ++it) {
    if (*it <= now - config_.rate_window) break;
    ++count;
  }
  const absl::Duration span = std::min(config_.rate_window, now - stream.opened);
  if (span <= absl::ZeroDuration()) return 0;
  return static_cast<double>(count) / absl::ToDoubleSeconds(span);
}

double CreditBalancer::Rate(StreamId id, absl::Time now) const {
  auto it = streams_.find(id);
  return it == streams_.end() ? 0 : RateOf(it->second, now);
}

absl::Duration CreditBalancer::P99(std::vector<absl::Duration> samples) {
  if (samples.empty()) return absl::ZeroDuration();
  const size_t rank = static_cast<size_t>(std::ceil(0.99 * samples.size())) - 1;
  std::nth_element(samples.begin(), samples.begin() + rank, samples.end());
  return samples[rank];
}

absl::Duration CreditBalancer::P99Latency(StreamId id) const {
  auto it = streams_.find(id);
  if (it == streams_.end()) return absl::ZeroDuration();
  return P99({it->second.latencies.begin(), it->second.latencies.end()});
}

absl::Duration CreditBalancer::P99Latency() const {
  std::vector<absl::Duration> all;
  for (const auto& [id, stream] : streams_) {
    all.insert(all.end(), stream.latencies.begin(), stream.latencies.end());
  }
  return P99(std::move(all));
}

absl::Duration CreditBalancer::OverdueAfter() const {
  return std::max(config_.stall_floor, P99Latency() * config_.stall_factor);
}

bool CreditBalancer::StalledOf(const Stream& stream, absl::Time now) const {
  if (stream.grants.empty()) return false;  // nothing asked of it
  const absl::Time since = std::max(stream.last_arrival, stream.grants.front().at);
  const absl::Duration limit =
      std::max(config_.stall_floor,
               P99({stream.latencies.begin(), stream.latencies.end()}) * config_.stall_factor);
  return now - since > limit;
}

bool CreditBalancer::Stalled(StreamId id, absl::Time now) const {
  auto it = streams_.find(id);
  return it != streams_.end() && StalledOf(it->second, now);
}

std::map<CreditBalancer::StreamId, uint32_t> CreditBalancer::Targets(absl::Time now) {
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
    if (StalledOf(stream, now)) it->second = 0;
    total += it->second;
  }
  const uint64_t budget = effective_budget();
  const uint64_t spare = budget - streams_.size();
  std::map<StreamId, uint32_t> targets;
  // Nothing measurable (all stalled), or balancing switched off: even split.
  if (!config_.balance || total <= 0) {
    for (const auto& [id, stream] : streams_) {
      targets[id] =
          static_cast<uint32_t>(std::min<uint64_t>(1 + spare / streams_.size(), config_.max_share));
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
  for (auto& [id, target] : targets) target = std::min(target, config_.max_share);
  return targets;
}

const std::map<CreditBalancer::StreamId, uint32_t>& CreditBalancer::Rebalance(absl::Time now) {
  if (streams_.empty()) return shares_;
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
  if (deficit > 0 && room > 0) {
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
  for (const auto& [id, stream] : streams_) shares_[id] = stream.share;
  return shares_;
}

uint32_t CreditBalancer::share(StreamId id) const {
  auto it = shares_.find(id);
  return it == shares_.end() ? 0 : it->second;
}

}  // namespace stoker
