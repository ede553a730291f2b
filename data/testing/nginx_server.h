#ifndef STOKER_DATA_TESTING_NGINX_SERVER_H_
#define STOKER_DATA_TESTING_NGINX_SERVER_H_

// Starts /usr/sbin/nginx on a free loopback port, serving a directory, for tests of HTTP range
// reads. The config, pid, logs and temp paths live in a private temporary directory; nginx runs
// in the foreground as the current user (daemon off, master_process off). "/status/503" always
// answers 503 (for retry tests); "/moved/<path>" redirects (302) to "/<path>". The destructor
// stops it.

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "data/testing/shard_fixtures.h"

namespace stoker {
namespace testing {

// Thread-compatible.
class NginxServer {
 public:
  // FAILED_PRECONDITION when nginx is not installed; UNAVAILABLE when it does not answer within
  // 10 s (its error log is in the message).
  static absl::StatusOr<std::unique_ptr<NginxServer>> Start(const std::string& root);
  ~NginxServer();

  // "http://127.0.0.1:<port>/"
  std::string url() const;

 private:
  NginxServer() = default;
  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace testing
}  // namespace stoker

#endif  // STOKER_DATA_TESTING_NGINX_SERVER_H_
