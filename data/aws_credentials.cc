#include "data/aws_credentials.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "data/http_status.h"
#include "data/s3_config.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace stoker {
namespace {

using Found = absl::StatusOr<std::optional<AwsCredentials>>;
using Section = std::map<std::string, std::string>;

constexpr absl::Duration kMaxRefreshMargin = absl::Minutes(5);
constexpr absl::Duration kMetadataTimeout = absl::Seconds(2);

std::string HomeFile(const AwsEnvironment& env, const std::string& variable,
                     const std::string& name) {
  const std::string path = env.getenv(variable);
  return path.empty() ? absl::StrCat(env.getenv("HOME"), "/.aws/", name) : path;
}

// The sections of an INI file: "[name]" headers and "key = value" lines.
std::map<std::string, Section> ParseIni(absl::string_view text) {
  std::map<std::string, Section> sections;
  Section* current = nullptr;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      current = &sections[std::string(absl::StripAsciiWhitespace(line.substr(1, line.size() - 2)))];
      continue;
    }
    const size_t eq = line.find('=');
    if (current == nullptr || eq == absl::string_view::npos) continue;
    (*current)[std::string(absl::StripAsciiWhitespace(line.substr(0, eq)))] =
        std::string(absl::StripAsciiWhitespace(line.substr(eq + 1)));
  }
  return sections;
}

// Credentials from one profile section; nullopt without aws_access_key_id.
Found FromSection(const Section& section, const std::string& where) {
  const auto id = section.find("aws_access_key_id");
  if (id == section.end()) return std::nullopt;
  const auto secret = section.find("aws_secret_access_key");
  if (secret == section.end() || secret->second.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": aws_access_key_id ", id->second, " has no aws_secret_access_key"));
  }
  AwsCredentials credentials;
  credentials.access_key_id = id->second;
  credentials.secret_access_key = secret->second;
  if (auto token = section.find("aws_session_token"); token != section.end()) {
    credentials.session_token = token->second;
  }
  credentials.source = where;
  return credentials;
}

absl::StatusOr<absl::Time> ParseExpiration(const std::string& text, const std::string& where) {
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": expiration \"", text, "\" is not an RFC 3339 time"));
  }
  return time;
}

// Credentials from the JSON the container and instance metadata endpoints answer.
absl::StatusOr<AwsCredentials> FromMetadataJson(const std::string& json, const std::string& where) {
  google::protobuf::Struct fields;
  if (!google::protobuf::util::JsonStringToMessage(json, &fields).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": the answer is not JSON"));
  }
  auto field = [&](const std::string& name) -> std::string {
    const auto it = fields.fields().find(name);
    return it == fields.fields().end() ? "" : it->second.string_value();
  };
  AwsCredentials credentials;
  credentials.access_key_id = field("AccessKeyId");
  credentials.secret_access_key = field("SecretAccessKey");
  credentials.session_token = field("Token");
  credentials.source = where;
  if (credentials.access_key_id.empty() || credentials.secret_access_key.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": the answer has no AccessKeyId and SecretAccessKey"));
  }
  if (!field("Expiration").empty()) {
    ASSIGN_OR_RETURN(credentials.expiration, ParseExpiration(field("Expiration"), where));
  }
  return credentials;
}

// GET (or PUT) on a metadata endpoint; the body of a 200 answer.
absl::StatusOr<std::string> FetchMetadata(const AwsEnvironment& env, const std::string& method,
                                          const std::string& url, std::vector<std::string> headers,
                                          const std::string& where) {
  HttpRequest request;
  request.method = method;
  request.url = url;
  request.headers = std::move(headers);
  request.timeout = kMetadataTimeout;
  request.connect_timeout = kMetadataTimeout;
  ASSIGN_OR_RETURN(HttpResponse response, env.http->Send(request));
  if (response.status == 200) return response.body;
  const std::string message =
      absl::StrCat(where, ": ", UrlForMessages(url), " answered HTTP ", response.status);
  const absl::Status status = HttpAnswerStatus(response, message, env.clock);
  return status.ok() ? absl::FailedPreconditionError(message) : status;  // A 2xx other than 200.
}

std::string FileOrEmpty(const AwsEnvironment& env, const std::string& path) {
  absl::StatusOr<std::string> text = env.read_file(path);
  return text.ok() ? std::string(absl::StripAsciiWhitespace(*text)) : "";
}

}  // namespace

std::optional<std::string> XmlValue(absl::string_view xml, absl::string_view tag) {
  const std::string open = absl::StrCat("<", tag, ">");
  const size_t begin = xml.find(open);
  if (begin == absl::string_view::npos) return std::nullopt;
  const size_t start = begin + open.size();
  const size_t end = xml.find(absl::StrCat("</", tag, ">"), start);
  if (end == absl::string_view::npos) return std::nullopt;
  return absl::StrReplaceAll(xml.substr(start, end - start), {{"&quot;", "\""},
                                                              {"&apos;", "'"},
                                                              {"&lt;", "<"},
                                                              {"&gt;", ">"},
                                                              {"&#34;", "\""},
                                                              {"&amp;", "&"}});
}

AwsEnvironment AwsEnvironment::Real() {
  AwsEnvironment env;
  env.getenv = [](const std::string& name) -> std::string {
    const char* value = std::getenv(name.c_str());
    return value == nullptr ? "" : value;
  };
  env.read_file = [](const std::string& path) -> absl::StatusOr<std::string> {
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  };
  env.clock = Clock::Real();
  env.http = CurlTransport();
  return env;
}

Found CredentialsFromEnvironment(const AwsEnvironment& env) {
  const std::string id = env.getenv("AWS_ACCESS_KEY_ID");
  if (id.empty()) return std::nullopt;
  AwsCredentials credentials;
  credentials.access_key_id = id;
  credentials.secret_access_key = env.getenv("AWS_SECRET_ACCESS_KEY");
  credentials.session_token = env.getenv("AWS_SESSION_TOKEN");
  credentials.source = "environment";
  if (credentials.secret_access_key.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("AWS_ACCESS_KEY_ID is set (", id, ") but AWS_SECRET_ACCESS_KEY is not"));
  }
  return credentials;
}

Found CredentialsFromProfile(const AwsEnvironment& env) {
  const std::string named = env.getenv("AWS_PROFILE");
  const std::string profile = named.empty() ? "default" : named;
  const std::string credentials_file = HomeFile(env, "AWS_SHARED_CREDENTIALS_FILE", "credentials");
  const std::string config_file = HomeFile(env, "AWS_CONFIG_FILE", "config");
  bool seen = false;
  for (const auto& [file, section] :
       {std::pair<std::string, std::string>{credentials_file, profile},
        {config_file, profile == "default" ? profile : absl::StrCat("profile ", profile)}}) {
    absl::StatusOr<std::string> text = env.read_file(file);
    if (!text.ok()) continue;
    const std::map<std::string, Section> sections = ParseIni(*text);
    const auto it = sections.find(section);
    if (it == sections.end()) continue;
    seen = true;
    ASSIGN_OR_RETURN(std::optional<AwsCredentials> found,
                     FromSection(it->second, absl::StrCat("profile ", profile, " in ", file)));
    if (found.has_value()) return found;
  }
  if (!named.empty() && !seen) {
    return absl::NotFoundError(absl::StrCat("AWS_PROFILE=", named, ": no such profile in ",
                                            credentials_file, " or ", config_file));
  }
  return std::nullopt;
}

Found CredentialsFromWebIdentity(const AwsEnvironment& env) {
  const std::string token_file = env.getenv("AWS_WEB_IDENTITY_TOKEN_FILE");
  const std::string role = env.getenv("AWS_ROLE_ARN");
  if (token_file.empty() || role.empty()) return std::nullopt;
  const std::string where = absl::StrCat("web identity (role ", role, ")");
  absl::StatusOr<std::string> token = env.read_file(token_file);
  if (!token.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, ": cannot read AWS_WEB_IDENTITY_TOKEN_FILE ", token_file));
  }
  std::string session = env.getenv("AWS_ROLE_SESSION_NAME");
  if (session.empty()) session = "stoker";
  std::string endpoint = env.getenv("AWS_ENDPOINT_URL_STS");
  if (endpoint.empty()) endpoint = env.getenv("AWS_ENDPOINT_URL");
  if (endpoint.empty()) {
    const std::string region = S3Config::FromEnvironment(env.getenv).ResolvedRegion();
    endpoint = absl::StrCat("https://sts.", region, ".amazonaws.com");
  }
  const std::string form = absl::StrCat(
      "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=", AwsUriEncode(role, false),
      "&RoleSessionName=", AwsUriEncode(session, false),
      "&WebIdentityToken=", AwsUriEncode(absl::StripAsciiWhitespace(*token), false));
  HttpRequest request;
  request.method = "POST";
  request.url = absl::StrCat(absl::StripSuffix(endpoint, "/"), "/");
  request.headers = {"Content-Type: application/x-www-form-urlencoded"};
  request.body =
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(form.data()), form.size());
  ASSIGN_OR_RETURN(HttpResponse response, env.http->Send(request));
  if (response.status != 200) {
    const std::string code = XmlValue(response.body, "Code").value_or("");
    const std::string message = absl::StrCat(
        where, ": STS AssumeRoleWithWebIdentity answered HTTP ", response.status, " ", code);
    // STS refuses a token with 400 and one of these codes: the token, not the request, is bad.
    if (code == "InvalidIdentityToken" || code == "ExpiredTokenException" ||
        code == "IDPRejectedClaim") {
      return absl::PermissionDeniedError(message);
    }
    if (code == "IDPCommunicationError") return absl::UnavailableError(message);  // Retry.
    const absl::Status status = HttpAnswerStatus(response, message, env.clock);
    return status.ok() ? absl::FailedPreconditionError(message) : status;
  }
  AwsCredentials credentials;
  credentials.access_key_id = XmlValue(response.body, "AccessKeyId").value_or("");
  credentials.secret_access_key = XmlValue(response.body, "SecretAccessKey").value_or("");
  credentials.session_token = XmlValue(response.body, "SessionToken").value_or("");
  credentials.source = where;
  if (credentials.access_key_id.empty() || credentials.secret_access_key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": STS answer without credentials"));
  }
  if (auto expiration = XmlValue(response.body, "Expiration")) {
    ASSIGN_OR_RETURN(credentials.expiration, ParseExpiration(*expiration, where));
  }
  return credentials;
}

Found CredentialsFromContainer(const AwsEnvironment& env) {
  std::string url = env.getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  const std::string relative = env.getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  if (!relative.empty()) url = absl::StrCat("http://169.254.170.2", relative);
  if (url.empty()) return std::nullopt;
  std::string token = env.getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
  const std::string token_file = env.getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
  if (!token_file.empty()) token = FileOrEmpty(env, token_file);
  std::vector<std::string> headers;
  if (!token.empty()) headers.push_back(absl::StrCat("Authorization: ", token));
  ASSIGN_OR_RETURN(std::string json,
                   FetchMetadata(env, "GET", url, headers, "container credentials endpoint"));
  return FromMetadataJson(json, "container credentials endpoint");
}

Found CredentialsFromInstanceMetadata(const AwsEnvironment& env) {
  if (absl::AsciiStrToLower(env.getenv("AWS_EC2_METADATA_DISABLED")) == "true") {
    return std::nullopt;
  }
  std::string endpoint = env.getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  if (endpoint.empty()) endpoint = "http://169.254.169.254";
  endpoint = std::string(absl::StripSuffix(endpoint, "/"));
  const std::string where = "instance metadata";
  absl::StatusOr<std::string> token =
      FetchMetadata(env, "PUT", absl::StrCat(endpoint, "/latest/api/token"),
                    {"X-aws-ec2-metadata-token-ttl-seconds: 21600"}, where);
  if (absl::IsUnavailable(token.status())) return std::nullopt;  // Not on EC2.
  RETURN_IF_ERROR(token.status());
  const std::vector<std::string> headers = {absl::StrCat("X-aws-ec2-metadata-token: ", *token)};
  const std::string base = absl::StrCat(endpoint, "/latest/meta-data/iam/security-credentials/");
  ASSIGN_OR_RETURN(std::string roles, FetchMetadata(env, "GET", base, headers, where));
  const std::string role(absl::StripAsciiWhitespace(roles.substr(0, roles.find('\n'))));
  if (role.empty()) return std::nullopt;  // An instance without a role.
  ASSIGN_OR_RETURN(std::string json, FetchMetadata(env, "GET", base + role, headers, where));
  return FromMetadataJson(json, absl::StrCat(where, " (role ", role, ")"));
}

absl::StatusOr<AwsCredentials> AwsCredentialChain::Get() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = env_.clock->Now();
  if (cached_.has_value()) {
    if (!cached_->expiration.has_value()) return *cached_;
    const absl::Duration margin =
        std::min(kMaxRefreshMargin, (*cached_->expiration - fetched_) / 4);
    if (now < *cached_->expiration - margin) return *cached_;
  }
  ASSIGN_OR_RETURN(AwsCredentials credentials, Resolve());
  cached_ = credentials;
  fetched_ = now;
  return credentials;
}

void AwsCredentialChain::Invalidate() {
  absl::MutexLock lock(&mu_);
  cached_.reset();
}

absl::StatusOr<AwsCredentials> AwsCredentialChain::Resolve() {
  using Source = Found (*)(const AwsEnvironment&);
  constexpr Source kSources[] = {&CredentialsFromEnvironment, &CredentialsFromProfile,
                                 &CredentialsFromWebIdentity, &CredentialsFromContainer,
                                 &CredentialsFromInstanceMetadata};
  for (const Source source : kSources) {
    ASSIGN_OR_RETURN(std::optional<AwsCredentials> found, source(env_));
    if (found.has_value()) return *std::move(found);
  }
  return absl::UnauthenticatedError(
      "no AWS credentials found (tried AWS_ACCESS_KEY_ID, the shared credentials and config "
      "files, AWS_WEB_IDENTITY_TOKEN_FILE, the container endpoint and instance metadata)");
}

}  // namespace stoker
