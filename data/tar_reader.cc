#include "data/tar_reader.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

constexpr size_t kBlock = 512;
constexpr uint64_t kMaxNameOrClsBytes = 64 * 1024;

uint64_t PaddedSize(uint64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

// Octal field (NUL or space terminated). False when it is not a number.
bool ParseOctal(const uint8_t* field, size_t n, uint64_t* value) {
  *value = 0;
  size_t i = 0;
  while (i < n && field[i] == ' ') ++i;
  if (i == n || field[i] < '0' || field[i] > '7') return false;
  for (; i < n && field[i] >= '0' && field[i] <= '7'; ++i) *value = *value * 8 + (field[i] - '0');
  return true;
}

bool ChecksumOk(const uint8_t* header) {
  uint64_t stored;
  if (!ParseOctal(header + 148, 8, &stored)) return false;
  uint64_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i) sum += (i >= 148 && i < 156) ? ' ' : header[i];
  return sum == stored;
}

std::string Field(const uint8_t* p, size_t n) {
  const char* text = reinterpret_cast<const char*>(p);
  return std::string(text, strnlen(text, n));
}

// The "path" value of a pax extended header, or empty. Each record is "LEN key=value\n", LEN
// counting the whole record; a record whose LEN does not cover its own "LEN " and newline, or
// runs past the header, ends the parse.
std::string PaxPath(const std::string& pax) {
  size_t pos = 0;
  while (pos < pax.size()) {
    const size_t space = pax.find(' ', pos);
    uint64_t length;
    if (space == std::string::npos ||
        !absl::SimpleAtoi(absl::string_view(pax).substr(pos, space - pos), &length) ||
        length > pax.size() - pos || pos + length < space + 2) {
      break;
    }
    absl::string_view record(pax.data() + space + 1, pos + length - space - 2);
    if (absl::ConsumePrefix(&record, "path=")) return std::string(record);
    pos += length;
  }
  return "";
}

bool IsImageExtension(const std::string& ext) {
  return ext == "jpg" || ext == "jpeg" || ext == "png" || ext == "webp";
}

// Accumulates files into samples by key.
class SampleGrouper {
 public:
  explicit SampleGrouper(const std::vector<std::string>& field_extensions)
      : field_extensions_(field_extensions) {}

  absl::Status Add(const RandomAccessFile& file, const std::string& path, uint64_t offset,
                   uint64_t size, ShardIndex* index, std::vector<std::string>* keys) {
    const size_t slash = path.rfind('/');
    const size_t dot = path.find('.', slash == std::string::npos ? 0 : slash + 1);
    if (dot == std::string::npos) return absl::OkStatus();
    const std::string key = path.substr(0, dot);
    const std::string ext = absl::AsciiStrToLower(path.substr(dot + 1));
    const auto field = std::find(field_extensions_.begin(), field_extensions_.end(), ext);
    if (IsImageExtension(ext) && size <= UINT32_MAX && !positions_.count(key)) {
      positions_[key] = index->samples.size();
      index->samples.push_back(SampleLocation{offset, static_cast<uint32_t>(size), label(key)});
      AddSampleFields(key, index);
      if (keys != nullptr) keys->push_back(key);
    } else if (field != field_extensions_.end()) {
      AddField(key, static_cast<size_t>(field - field_extensions_.begin()),
               FieldLocation{offset, size}, index);
    } else if (ext == "cls" && size <= kMaxNameOrClsBytes) {
      std::string text(size, '\0');
      RETURN_IF_ERROR(file.ReadAt(offset, size, reinterpret_cast<uint8_t*>(text.data())));
      int64_t value;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &value)) value = -1;
      labels_[key] = value;
      auto it = positions_.find(key);
      if (it != positions_.end()) index->samples[it->second].label = value;
    }
    return absl::OkStatus();
  }

 private:
  // A field file: into its sample's locations when the image came first, else kept for it.
  void AddField(const std::string& key, size_t f, FieldLocation location, ShardIndex* index) {
    const auto it = positions_.find(key);
    if (it != positions_.end()) {
      index->fields[it->second * field_extensions_.size() + f] = location;
      return;
    }
    std::vector<FieldLocation>& early = early_fields_[key];
    early.resize(field_extensions_.size());
    early[f] = location;
  }
  // The new sample's field locations: those of files seen before its image, others absent.
  void AddSampleFields(const std::string& key, ShardIndex* index) {
    if (field_extensions_.empty()) return;
    const auto early = early_fields_.find(key);
    if (early == early_fields_.end()) {
      index->fields.resize(index->fields.size() + field_extensions_.size());
      return;
    }
    index->fields.insert(index->fields.end(), early->second.begin(), early->second.end());
    early_fields_.erase(early);
  }
  int64_t label(const std::string& key) const {
    auto it = labels_.find(key);
    return it == labels_.end() ? -1 : it->second;
  }
  std::unordered_map<std::string, size_t> positions_;
  std::unordered_map<std::string, int64_t> labels_;
  const std::vector<std::string>& field_extensions_;
  // Field files of keys whose image has not been seen yet.
  std::unordered_map<std::string, std::vector<FieldLocation>> early_fields_;
};

}  // namespace

bool IsTarShard(const std::string& location) { return absl::EndsWith(location, ".tar"); }

absl::StatusOr<ShardIndex> LoadTarShardIndex(const RandomAccessFile& file,
                                             std::vector<std::string>* keys,
                                             const std::vector<std::string>& field_extensions) {
  ShardIndex index;
  index.field_count = static_cast<uint32_t>(field_extensions.size());
  SampleGrouper grouper(field_extensions);
  uint8_t header[kBlock];
  std::string long_name;
  uint64_t offset = 0;
  const uint64_t size = file.size();
  while (true) {
    if (offset + kBlock > size) {
      index.damage = absl::StrCat("archive ends without its end marker at offset ", offset);
      break;
    }
    RETURN_IF_ERROR(file.ReadAt(offset, kBlock, header));
    if (header[0] == 0) break;  // End-of-archive marker.
    uint64_t entry_size;
    if (!ChecksumOk(header) || !ParseOctal(header + 124, 12, &entry_size) ||
        offset + kBlock + entry_size > size) {
      index.damage = absl::StrCat("damaged tar entry at offset ", offset);
      break;
    }
    const uint64_t data = offset + kBlock;
    const char type = static_cast<char>(header[156]);
    if ((type == 'L' || type == 'x') && entry_size <= kMaxNameOrClsBytes) {
      std::string text(entry_size, '\0');
      RETURN_IF_ERROR(file.ReadAt(data, entry_size, reinterpret_cast<uint8_t*>(text.data())));
      long_name = type == 'L' ? std::string(text.c_str()) : PaxPath(text);
    } else if (type == '0' || type == '\0') {
      std::string path = long_name;
      if (path.empty()) {
        const std::string prefix = Field(header + 345, 155);
        path = Field(header, 100);
        if (std::memcmp(header + 257, "ustar", 5) == 0 && !prefix.empty()) {
          path = absl::StrCat(prefix, "/", path);
        }
      }
      long_name.clear();
      RETURN_IF_ERROR(grouper.Add(file, path, data, entry_size, &index, keys));
    } else {
      long_name.clear();
    }
    offset = data + PaddedSize(entry_size);
  }
  return index;
}

}  // namespace stoker
