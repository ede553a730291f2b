#include "common/tls/bearer_tokens.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/text_file.h"

namespace stoker {
namespace {

// Most bytes a token file may have: it holds a few short lines.
constexpr size_t kMaxTokenFileBytes = 64 << 10;

bool IsTokenChar(char c) { return c > ' ' && c < 127; }

absl::Status BadLine(absl::string_view field, int line, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": line ", line, ": ", why));
}

}  // namespace

absl::StatusOr<std::vector<BearerToken>> ParseBearerTokens(absl::string_view field,
                                                           absl::string_view text) {
  std::vector<BearerToken> tokens;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) {
      return BadLine(field, line_number, "expected role:token or role@tenant:token");
    }
    absl::string_view who = line.substr(0, colon);
    Principal principal;
    if (const size_t at = who.find('@'); at != absl::string_view::npos) {
      const absl::string_view tenant = who.substr(at + 1);
      if (absl::Status bad = CheckTenantName("tenant", tenant); !bad.ok()) {
        return BadLine(field, line_number, bad.message());
      }
      principal.tenant = std::string(tenant);
      who = who.substr(0, at);
    }
    std::optional<Role> role = RoleFromName(who);
    if (!role.has_value()) {
      return BadLine(field, line_number,
                     "unknown role (expected coordinator, worker, trainer, operator or scaler)");
    }
    principal.role = *role;
    const absl::string_view token = line.substr(colon + 1);
    if (token.size() < kMinTokenLength) {
      return BadLine(field, line_number,
                     absl::StrCat("token shorter than ", kMinTokenLength, " characters"));
    }
    for (char c : token) {
      if (!IsTokenChar(c)) {
        return BadLine(field, line_number, "token has a space or a non-printable character");
      }
    }
    tokens.push_back({std::move(principal), std::string(token)});
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": no role:token line"));
  }
  return tokens;
}

absl::StatusOr<std::vector<BearerToken>> ReadBearerTokens(absl::string_view field,
                                                          const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(field, path, kMaxTokenFileBytes));
  return ParseBearerTokens(field, text);
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  // Every byte of b is looked at whatever a holds; a volatile accumulator keeps the compiler
  // from stopping early.
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    diff = diff | (x ^ static_cast<unsigned char>(b[i]));
  }
  return diff == 0;
}

BearerTokenFile::BearerTokenFile(std::string field, std::string path, absl::Duration recheck,
                                 Clock* clock)
    : field_(std::move(field)), path_(std::move(path)), recheck_(recheck), clock_(clock) {
  absl::MutexLock lock(&mu_);
  checked_ = absl::InfinitePast();
  Refresh();
}

void BearerTokenFile::Refresh() {
  const absl::Time now = clock_->Now();
  if (now - checked_ < recheck_) return;
  checked_ = now;
  std::string version = FileVersion(path_);
  if (version.empty() || version == version_) return;
  absl::StatusOr<std::vector<BearerToken>> tokens = ReadBearerTokens(field_, path_);
  if (!tokens.ok()) {
    STOKER_LOG(ERROR) << "keeping the previous bearer tokens: " << tokens.status();
    return;
  }
  if (!version_.empty()) {
    STOKER_LOG(INFO) << "reloaded bearer tokens from " << path_;
  }
  tokens_ = *std::move(tokens);
  version_ = std::move(version);
}

std::optional<Principal> BearerTokenFile::PrincipalOf(absl::string_view token) {
  absl::MutexLock lock(&mu_);
  Refresh();
  std::optional<Principal> found;
  for (const BearerToken& known : tokens_) {  // No early exit.
    if (ConstantTimeEquals(token, known.token)) found = known.principal;
  }
  return found;
}

std::string BearerTokenFile::OwnToken() {
  absl::MutexLock lock(&mu_);
  Refresh();
  return tokens_.empty() ? "" : tokens_.front().token;
}

}  // namespace stoker
