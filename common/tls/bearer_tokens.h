#ifndef STOKER_COMMON_TLS_BEARER_TOKENS_H_
#define STOKER_COMMON_TLS_BEARER_TOKENS_H_

// Bearer tokens: for simple setups, a peer's role may come from a shared secret per role instead
// of a client certificate (docs/security.md, "Bearer tokens").
//
// A token file holds one "role:token" or "role@tenant:token" line per token ('#' comments and
// blank lines skipped), role one of coordinator, worker, trainer, operator, scaler, tenant a
// tenant name (common/tls/principal.h; without one, the default tenant); a token is at least
// kMinTokenLength printable characters without spaces. A server's accepted-tokens file may list
// several tokens per role (rotation: add the new one, move the clients, drop the old one); a
// client's token file holds exactly one line, the token it sends. Files are re-read when they
// change on disk.
//
// Tokens travel only over TLS (the server still presents its certificate; the client then needs
// only the CA bundle and its token). No gRPC here: common/tls/grpc_tls.h sends and checks them.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/tls/principal.h"

namespace stoker {

inline constexpr size_t kMinTokenLength = 16;

struct BearerToken {
  Principal principal;
  std::string token;
};

// The tokens of a token file's text. INVALID_ARGUMENT naming `field` and the line number (never
// the line: it holds a secret) for a line that is not "role[@tenant]:token", an unknown role, a
// tenant that is not a tenant name or a token shorter than kMinTokenLength; also when the text
// holds no token.
absl::StatusOr<std::vector<BearerToken>> ParseBearerTokens(absl::string_view field,
                                                           absl::string_view text);

// ParseBearerTokens of the file at `path`; INVALID_ARGUMENT naming `field` when it cannot be read.
absl::StatusOr<std::vector<BearerToken>> ReadBearerTokens(absl::string_view field,
                                                          const std::string& path);

// Whether a == b, in time that depends on the lengths only, not on where they differ.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

// A token file kept current: re-read when its modification time, size or inode changed, checked
// at most once per `recheck`. A version that does not parse is logged and the last good tokens
// stay in use. Thread-safe.
class BearerTokenFile {
 public:
  // REQUIRES: ReadBearerTokens(field, path) is OK (TlsConfig::Validate checked it). `recheck`
  // is measured on `clock` (not owned).
  BearerTokenFile(std::string field, std::string path, absl::Duration recheck,
                  Clock* clock = Clock::Real());

  // The principal of `token`: compared with every token of the file in constant time, so the
  // time taken says nothing about which one matched or how close a guess came. nullopt: not
  // listed.
  std::optional<Principal> PrincipalOf(absl::string_view token);
  // The file's first token (a client's file holds one): the token this process sends.
  std::string OwnToken();

 private:
  // Re-reads the file when it changed and `recheck` passed since the last look.
  void Refresh() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string field_;
  const std::string path_;
  const absl::Duration recheck_;
  Clock* const clock_;
  absl::Mutex mu_;
  std::vector<BearerToken> tokens_ ABSL_GUARDED_BY(mu_);
  std::string version_ ABSL_GUARDED_BY(mu_);  // mtime, size and inode of what tokens_ came from.
  absl::Time checked_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_COMMON_TLS_BEARER_TOKENS_H_
