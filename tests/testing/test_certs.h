#ifndef STOKER_TESTS_TESTING_TEST_CERTS_H_
#define STOKER_TESTS_TESTING_TEST_CERTS_H_

// Throwaway certificates and bearer tokens for tests, made by scripts/dev-certs.sh (the script
// users run) in a fresh temporary directory that the destructor removes.
//
//   ASSIGN_OR_RETURN(std::shared_ptr<TestCerts> certs, TestCerts::Make());
//   config.tls = certs->For("worker");

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/tls/tls_config.h"

namespace stoker {

// Thread-compatible.
class TestCerts {
 public:
  // INTERNAL naming the command when dev-certs.sh fails (openssl missing: install-deps.sh).
  static absl::StatusOr<std::shared_ptr<TestCerts>> Make();
  ~TestCerts();
  TestCerts(const TestCerts&) = delete;
  TestCerts& operator=(const TestCerts&) = delete;

  // Certificate, key and CA of `name`: a role ("worker") or "other-trainer" (signed by another
  // CA; the CA bundle is still the cluster's).
  TlsConfig For(const std::string& name) const;
  TlsConfig For(Role role) const { return For(std::string(RoleName(role))); }
  // The CA and `role`'s bearer token file, no certificate.
  TlsConfig TokenOnly(Role role) const;
  // The file of every role's token (a server's accept_bearer_tokens_file).
  std::string tokens_file() const { return dir_ + "/tokens"; }
  std::string ca() const { return dir_ + "/ca.pem"; }
  const std::string& dir() const { return dir_; }
  // Re-issues `role`'s certificate and key from the same CA (new files renamed over the old).
  absl::Status Renew(const std::string& role) const;

 private:
  explicit TestCerts(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace stoker

#endif  // STOKER_TESTS_TESTING_TEST_CERTS_H_
