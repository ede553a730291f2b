#include "data/manifest_json.h"

#include <cstdint>
#include <limits>
#include <string>

namespace stoker {
namespace {

// A cursor over the text; every method returns false on anything outside the subset.
class Cursor {
 public:
  explicit Cursor(absl::string_view text) : text_(text) {}

  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ == text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  // A string of printable ASCII without escapes.
  bool String(std::string* out) {
    if (!Consume('"')) return false;
    const size_t begin = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c < 0x20 || c >= 0x7f || c == '\\') return false;
      ++pos_;
    }
    if (pos_ == text_.size()) return false;
    out->assign(text_.data() + begin, pos_ - begin);
    ++pos_;
    return true;
  }
  // Digits, bare or quoted, at most `max`; no sign, leading zero, fraction or exponent.
  bool Unsigned(uint64_t max, uint64_t* out) {
    const bool quoted = Consume('"');
    if (!quoted) SkipSpace();
    const size_t begin = pos_;
    uint64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (value > (max - digit) / 10) return false;
      value = value * 10 + digit;
      ++pos_;
    }
    const size_t digits = pos_ - begin;
    if (digits == 0 || (digits > 1 && text_[begin] == '0')) return false;
    if (quoted) {
      if (pos_ == text_.size() || text_[pos_] != '"') return false;
      ++pos_;
    } else if (pos_ < text_.size() &&
               (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')) {
      return false;
    }
    *out = value;
    return true;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

// `{ ... }` with each key at most once (bit i of `seen` for key i), calling member(key index).
template <typename Member>
bool Object(Cursor& in, std::initializer_list<absl::string_view> keys, Member member) {
  if (!in.Consume('{')) return false;
  if (in.Consume('}')) return true;
  uint32_t seen = 0;
  std::string key;
  do {
    if (!in.String(&key) || !in.Consume(':')) return false;
    int index = 0;
    for (absl::string_view k : keys) {
      if (k == key) break;
      ++index;
    }
    if (index == static_cast<int>(keys.size()) || (seen >> index & 1) != 0) return false;
    seen |= 1u << index;
    if (!member(index)) return false;
  } while (in.Consume(','));
  return in.Consume('}');
}

// `[ ... ]`, calling element() for each.
template <typename Element>
bool Array(Cursor& in, Element element) {
  if (!in.Consume('[')) return false;
  if (in.Consume(']')) return true;
  do {
    if (!element()) return false;
  } while (in.Consume(','));
  return in.Consume(']');
}

bool Shard(Cursor& in, stoker::v1::ManifestShard* shard) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  return Object(in, {"path", "records", "bytes"}, [&](int key) {
    uint64_t value = 0;
    switch (key) {
      case 0:
        return in.String(shard->mutable_path());
      case 1:
        if (!in.Unsigned(kMax, &value)) return false;
        shard->set_records(value);
        return true;
      default:
        if (!in.Unsigned(kMax, &value)) return false;
        shard->set_bytes(value);
        return true;
    }
  });
}

}  // namespace

std::optional<stoker::v1::ShardManifest> ParseManifestFast(absl::string_view text) {
  stoker::v1::ShardManifest manifest;
  Cursor in(text);
  bool class_names_seen = false;
  const bool parsed =
      Object(in, {"version", "shards", "classNames", "class_names", "fields"}, [&](int key) {
        uint64_t version = 0;
        switch (key) {
          case 0:
            if (!in.Unsigned(std::numeric_limits<uint32_t>::max(), &version)) return false;
            manifest.set_version(static_cast<uint32_t>(version));
            return true;
          case 1:
            return Array(in, [&] { return Shard(in, manifest.add_shards()); });
          case 4:
            return Array(in, [&] { return in.String(manifest.add_fields()); });
          default:  // Either spelling, but only one of them.
            if (class_names_seen) return false;
            class_names_seen = true;
            return Array(in, [&] { return in.String(manifest.add_class_names()); });
        }
      });
  if (!parsed || !in.AtEnd()) return std::nullopt;
  return manifest;
}

}  // namespace stoker
