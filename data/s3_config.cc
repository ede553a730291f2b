#include "data/s3_config.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace stoker {
namespace {

constexpr absl::string_view kScheme = "s3://";

bool ValidBucket(absl::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  return std::all_of(bucket.begin(), bucket.end(), [](char c) {
    return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '.' || c == '-';
  });
}

// "http" or "https" and the rest of an endpoint, without a trailing slash.
std::pair<std::string, std::string> SplitEndpoint(absl::string_view endpoint) {
  const size_t sep = endpoint.find("://");
  absl::string_view rest = endpoint.substr(sep + 3);
  while (absl::ConsumeSuffix(&rest, "/")) {
  }
  return {std::string(endpoint.substr(0, sep)), std::string(rest)};
}

}  // namespace

bool IsS3Url(absl::string_view location) { return absl::StartsWith(location, kScheme); }

absl::StatusOr<S3Location> ParseS3Url(absl::string_view url) {
  if (!IsS3Url(url)) {
    return absl::InvalidArgumentError(absl::StrCat("\"", url, "\" is not an s3:// URL"));
  }
  absl::string_view rest = url.substr(kScheme.size());
  const size_t slash = rest.find('/');
  S3Location location;
  location.bucket = std::string(rest.substr(0, slash));
  if (slash != absl::string_view::npos) location.key = std::string(rest.substr(slash + 1));
  if (!ValidBucket(location.bucket)) {
    return absl::InvalidArgumentError(
        absl::StrCat(url, ": \"", location.bucket,
                     "\" is not a bucket name (3 to 63 characters of a-z, 0-9, '.' and '-')"));
  }
  return location;
}

std::string AwsUriEncode(absl::string_view text, bool keep_slash) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out.push_back(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", static_cast<unsigned char>(c));
    }
  }
  return out;
}

S3Config S3Config::FromEnvironment(const std::function<std::string(const std::string&)>& getenv) {
  S3Config config;
  config.endpoint = getenv("AWS_ENDPOINT_URL_S3");
  if (config.endpoint.empty()) config.endpoint = getenv("AWS_ENDPOINT_URL");
  config.region = getenv("AWS_REGION");
  if (config.region.empty()) config.region = getenv("AWS_DEFAULT_REGION");
  return config;
}

absl::Status S3Config::Validate() const {
  if (!endpoint.empty()) {
    if (!absl::StartsWith(endpoint, "http://") && !absl::StartsWith(endpoint, "https://")) {
      return absl::InvalidArgumentError(
          absl::StrCat("s3.endpoint: must start with http:// or https://, got \"", endpoint, "\""));
    }
    const std::string host = SplitEndpoint(endpoint).second;
    if (host.empty() || absl::StrContains(host, "/") || absl::StrContains(host, "?")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "s3.endpoint: must be scheme://host[:port] without a path, got \"", endpoint, "\""));
    }
  }
  if (part_bytes < (uint64_t{5} << 20) || part_bytes > (uint64_t{5} << 30)) {
    return absl::InvalidArgumentError("s3.part_bytes: must be in 5 MiB..5 GiB");
  }
  return ValidateBackoffPolicy(backoff, "s3.backoff");
}

std::string S3Config::ObjectUrl(const S3Location& location,
                                std::vector<std::pair<std::string, std::string>> query) const {
  const auto [scheme, host] =
      endpoint.empty()
          ? std::pair<std::string, std::string>{"https", absl::StrCat("s3.", ResolvedRegion(),
                                                                      ".amazonaws.com")}
          : SplitEndpoint(endpoint);
  const bool virtual_hosted = addressing == Addressing::kVirtualHosted ||
                              (addressing == Addressing::kAuto && endpoint.empty() &&
                               !absl::StrContains(location.bucket, "."));
  std::string url = virtual_hosted
                        ? absl::StrCat(scheme, "://", location.bucket, ".", host, "/")
                        : absl::StrCat(scheme, "://", host, "/", location.bucket,
                                       location.key.empty() && !query.empty() ? "" : "/");
  absl::StrAppend(&url, AwsUriEncode(location.key, /*keep_slash=*/true));
  if (!query.empty()) {
    std::sort(query.begin(), query.end());
    std::vector<std::string> parts;
    for (const auto& [name, value] : query) {
      parts.push_back(absl::StrCat(AwsUriEncode(name, false), "=", AwsUriEncode(value, false)));
    }
    absl::StrAppend(&url, "?", absl::StrJoin(parts, "&"));
  }
  return url;
}

}  // namespace stoker
