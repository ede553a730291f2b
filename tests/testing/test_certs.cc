#include "tests/testing/test_certs.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace stoker {
namespace {

absl::Status RunDevCerts(const std::string& args) {
  const std::string command = absl::StrCat(STOKER_SOURCE_DIR, "/scripts/dev-certs.sh ", args);
  if (std::system(command.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("test certificates: '", command, "' failed"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<TestCerts>> TestCerts::Make() {
  char tmpl[] = "/tmp/stoker-certs-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return absl::InternalError("test certificates: mkdtemp failed");
  std::shared_ptr<TestCerts> certs(new TestCerts(tmpl));
  if (absl::Status status = RunDevCerts(certs->dir_); !status.ok()) return status;
  return certs;
}

TestCerts::~TestCerts() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

TlsConfig TestCerts::For(const std::string& name) const {
  TlsConfig config;
  config.cert_file = dir_ + "/" + name + ".pem";
  config.key_file = dir_ + "/" + name + ".key";
  config.ca_file = ca();
  return config;
}

TlsConfig TestCerts::TokenOnly(Role role) const {
  TlsConfig config;
  config.ca_file = ca();
  config.bearer_token_file = absl::StrCat(dir_, "/", RoleName(role), ".token");
  return config;
}

absl::Status TestCerts::Renew(const std::string& role) const {
  return RunDevCerts(absl::StrCat(dir_, " ", role));
}

}  // namespace stoker
