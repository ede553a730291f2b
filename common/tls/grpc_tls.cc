#include "common/tls/grpc_tls.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <algorithm>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/tls/bearer_tokens.h"

namespace stoker {
namespace {

namespace gx = ::grpc::experimental;

// "worker, trainer".
template <typename Roles>
std::string RoleNames(const Roles& roles) {
  std::vector<absl::string_view> names;
  for (Role role : roles) names.push_back(RoleName(role));
  return absl::StrJoin(names, ", ");
}

constexpr absl::string_view kBearerPrefix = "Bearer ";

// Watches the CA bundle, and the certificate and key when the config has them (a client with a
// bearer token may have none).
std::shared_ptr<gx::FileWatcherCertificateProvider> FileProvider(const TlsConfig& config) {
  const auto interval = static_cast<unsigned int>(absl::ToInt64Seconds(config.reload_interval));
  if (config.cert_file.empty()) {
    return std::make_shared<gx::FileWatcherCertificateProvider>(config.ca_file, interval);
  }
  return std::make_shared<gx::FileWatcherCertificateProvider>(config.key_file, config.cert_file,
                                                              config.ca_file, interval);
}

// Adds "authorization: Bearer <token>" to every call, the token read from the config's
// bearer_token_file (re-read when it changes).
class BearerTokenPlugin : public grpc::MetadataCredentialsPlugin {
 public:
  explicit BearerTokenPlugin(const TlsConfig& config)
      : file_("tls.bearer_token_file", config.bearer_token_file, config.reload_interval) {}

  grpc::Status GetMetadata(grpc::string_ref, grpc::string_ref, const grpc::AuthContext&,
                           std::multimap<std::string, std::string>* metadata) override {
    metadata->emplace("authorization", absl::StrCat(kBearerPrefix, file_.OwnToken()));
    return grpc::Status::OK;
  }

 private:
  BearerTokenFile file_;
};

// Accepts a server whose (already chain-verified) certificate names one of the expected roles.
class RoleVerifier : public gx::ExternalCertificateVerifier {
 public:
  explicit RoleVerifier(std::vector<Role> expected) : expected_(std::move(expected)) {}

  bool Verify(gx::TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> callback, grpc::Status* sync_status) override {
    std::vector<std::string> uris;
    for (const grpc::string_ref& uri : request->uri_names())
      uris.emplace_back(uri.data(), uri.size());
    absl::StatusOr<Principal> server = PrincipalFromUris(uris);
    if (!server.ok()) {
      *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                                  absl::StrCat("server ", server.status().message()));
    } else if (std::find(expected_.begin(), expected_.end(), server->role) == expected_.end()) {
      *sync_status =
          grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                       absl::StrCat("server certificate says role ", RoleName(server->role),
                                    ", expected ", RoleNames(expected_)));
    } else {
      *sync_status = grpc::Status::OK;
    }
    return true;  // Decided synchronously.
  }

  void Cancel(gx::TlsCustomVerificationCheckRequest*) override {}

 private:
  const std::vector<Role> expected_;
};

std::vector<std::string> PropertyValues(const grpc::AuthContext& auth, const char* name) {
  std::vector<std::string> values;
  for (const grpc::string_ref& value : auth.FindPropertyValues(name)) {
    values.emplace_back(value.data(), value.size());
  }
  return values;
}

}  // namespace

std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const TlsConfig& config) {
  if (config.insecure) return grpc::InsecureServerCredentials();
  gx::TlsServerCredentialsOptions options(FileProvider(config));
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  // With bearer tokens a caller may come without a certificate (RoleGate then wants a token);
  // a certificate it does present must still verify.
  options.set_cert_request_type(config.accept_bearer_tokens_file.empty()
                                    ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                    : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  return gx::TlsServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const TlsConfig& config,
                                                             std::vector<Role> peer_roles) {
  if (config.insecure) return grpc::InsecureChannelCredentials();
  gx::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(FileProvider(config));
  options.watch_root_certs();
  if (!config.cert_file.empty()) options.watch_identity_key_cert_pairs();
  options.set_verify_server_certs(true);
  options.set_check_call_host(false);
  options.set_certificate_verifier(
      gx::ExternalCertificateVerifier::Create<RoleVerifier>(std::move(peer_roles)));
  std::shared_ptr<grpc::ChannelCredentials> tls = gx::TlsCredentials(options);
  if (config.bearer_token_file.empty()) return tls;
  return grpc::CompositeChannelCredentials(
      tls, grpc::MetadataCredentialsFromPlugin(std::make_unique<BearerTokenPlugin>(config)));
}

absl::StatusOr<Principal> PeerPrincipal(const grpc::AuthContext& auth) {
  if (!auth.IsPeerAuthenticated()) {
    return absl::UnauthenticatedError("no verified client certificate");
  }
  std::vector<std::string> uris = PropertyValues(auth, GRPC_PEER_URI_PROPERTY_NAME);
  if (uris.empty()) uris = PropertyValues(auth, GRPC_X509_SAN_PROPERTY_NAME);
  return PrincipalFromUris(uris);
}

RoleGate::RoleGate(const TlsConfig& config)
    : insecure_(config.insecure),
      tokens_(config.accept_bearer_tokens_file.empty()
                  ? nullptr
                  : std::make_shared<BearerTokenFile>("tls.accept_bearer_tokens_file",
                                                      config.accept_bearer_tokens_file,
                                                      config.reload_interval)) {}

absl::StatusOr<Principal> RoleGate::CallerPrincipal(const grpc::ServerContextBase& context) const {
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  absl::StatusOr<Principal> from_cert =
      auth == nullptr ? absl::UnauthenticatedError("no verified client certificate")
                      : PeerPrincipal(*auth);
  const auto& metadata = context.client_metadata();
  const auto header = metadata.find("authorization");
  if (header == metadata.end()) {
    if (from_cert.ok() || tokens_ == nullptr) return from_cert;
    return absl::UnauthenticatedError(
        absl::StrCat(from_cert.status().message(), ", and no bearer token (authorization header)"));
  }
  if (tokens_ == nullptr) {
    return absl::UnauthenticatedError(
        "a bearer token was sent, but this server accepts none (no --accept-bearer-tokens-file)");
  }
  absl::string_view value(header->second.data(), header->second.size());
  if (!absl::ConsumePrefix(&value, kBearerPrefix)) {
    return absl::UnauthenticatedError("authorization header is not 'Bearer <token>'");
  }
  std::optional<Principal> from_token = tokens_->PrincipalOf(value);
  if (!from_token.has_value()) {
    return absl::UnauthenticatedError("bearer token not recognised (--accept-bearer-tokens-file)");
  }
  if (from_cert.ok() && !(*from_cert == *from_token)) {
    return absl::PermissionDeniedError(absl::StrCat("certificate says ", PrincipalName(*from_cert),
                                                    ", bearer token says ",
                                                    PrincipalName(*from_token)));
  }
  return *std::move(from_token);
}

absl::StatusOr<std::optional<Principal>> RoleGate::Check(
    const grpc::ServerContextBase& context, const char* method,
    std::initializer_list<Role> allowed) const {
  if (insecure_) return std::optional<Principal>();
  absl::StatusOr<Principal> caller = CallerPrincipal(context);
  if (!caller.ok()) {
    CountRpcDenial(caller.status().code());
    return absl::Status(caller.status().code(),
                        absl::StrCat(method, ": ", caller.status().message()));
  }
  for (Role ok : allowed) {
    if (caller->role == ok) return std::optional<Principal>(*std::move(caller));
  }
  CountRpcDenial(absl::StatusCode::kPermissionDenied);
  return absl::PermissionDeniedError(absl::StrCat(method, ": role ", RoleName(caller->role),
                                                  " may not call it (allowed: ", RoleNames(allowed),
                                                  ")"));
}

}  // namespace stoker
