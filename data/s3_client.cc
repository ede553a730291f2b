#include "data/s3_client.h"

#include <openssl/sha.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "data/http_status.h"

namespace stoker {
namespace {

constexpr char kEmptySha256[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

absl::Span<const uint8_t> AsBytes(const std::string& text) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace

absl::Status S3ErrorStatus(const HttpResponse& response, const S3Location& location,
                           const std::string& key_id, Clock* clock) {
  const std::string code = XmlValue(response.body, "Code").value_or("");
  const std::string where = location.ToUrl();
  const std::string detail = code.empty() ? absl::StrCat("HTTP ", response.status)
                                          : absl::StrCat(code, ", HTTP ", response.status);
  if (code == "RequestTimeTooSkewed") {
    return absl::FailedPreconditionError(absl::StrCat(
        where, ": this machine's clock differs from the server's by more than 15 minutes (", detail,
        "); correct the clock (NTP)"));
  }
  if (code == "ExpiredToken" || code == "TokenRefreshRequired") {
    return absl::UnauthenticatedError(absl::StrCat(where, ": the session token of access key id ",
                                                   key_id, " has expired (", detail, ")"));
  }
  if (code == "SlowDown") {  // S3 throttles with 503, and some S3-compatible stores with 400.
    return RetryableHttpStatus(response, absl::StrCat(where, ": ", detail), clock);
  }
  std::string message = absl::StrCat(where, ": ", detail);
  if (response.status == 401 || response.status == 403) {
    message = absl::StrCat(where, ": access denied (", detail, ") for access key id ", key_id);
  } else if (HttpStatusCode(response.status) == absl::StatusCode::kNotFound) {
    const std::string what = code == "NoSuchBucket"
                                 ? absl::StrCat("no such bucket ", location.bucket)
                             : code == "NoSuchKey" ? "no such key"
                                                   : "no such bucket or key";
    message = absl::StrCat(where, ": ", what, " (", detail, ")");
  }
  return HttpAnswerStatus(response, message, clock);
}

namespace {

// Immutable after construction.
class S3File : public RandomAccessFile {
 public:
  S3File(std::shared_ptr<S3Client> client, std::string url, S3Location location, uint64_t size)
      : client_(std::move(client)),
        url_(std::move(url)),
        location_(std::move(location)),
        size_(size) {}

  const std::string& name() const override { return url_; }
  uint64_t size() const override { return size_; }
  absl::Status ReadAt(uint64_t offset, size_t n, uint8_t* out) const override {
    RETURN_IF_ERROR(CheckReadRange(url_, size_, offset, n));
    if (n == 0) return absl::OkStatus();
    return client_->GetRange(location_, offset, n, out);
  }

 private:
  const std::shared_ptr<S3Client> client_;
  const std::string url_;
  const S3Location location_;
  const uint64_t size_;
};

}  // namespace

std::string Sha256Hex(absl::Span<const uint8_t> data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(data.data(), data.size(), digest);
  std::string hex;
  for (unsigned char byte : digest) absl::StrAppendFormat(&hex, "%02x", byte);
  return hex;
}

S3Client::S3Client(S3Config config, std::shared_ptr<AwsCredentialChain> credentials,
                   HttpTransport* http, Clock* clock)
    : config_(std::move(config)),
      credentials_(std::move(credentials)),
      http_(http),
      clock_(clock) {}

absl::StatusOr<HttpResponse> S3Client::CallOnce(const S3Location& location, HttpRequest request,
                                                const AwsCredentials& credentials) {
  request.aws_sigv4 = absl::StrCat("aws:amz:", config_.ResolvedRegion(), ":s3");
  request.access_key_id = credentials.access_key_id;
  request.secret_access_key = credentials.secret_access_key;
  if (!credentials.session_token.empty()) {
    request.headers.push_back(absl::StrCat("x-amz-security-token: ", credentials.session_token));
  }
  request.timeout = config_.request_timeout;
  request.connect_timeout = config_.connect_timeout;
  ++requests_;
  ASSIGN_OR_RETURN(HttpResponse response, http_->Send(request));
  if (response.status >= 200 && response.status < 300) return response;
  return S3ErrorStatus(response, location, credentials.access_key_id, clock_);
}

absl::StatusOr<HttpResponse> S3Client::Call(const S3Location& location, HttpRequest request,
                                            absl::Span<const uint8_t> body) {
  request.body = body;
  request.headers.push_back(
      absl::StrCat("x-amz-content-sha256: ", body.empty() ? kEmptySha256 : Sha256Hex(body)));
  absl::StatusOr<HttpResponse> result;
  const absl::Status status = RetryUnavailable(config_.backoff, clock_, [&]() -> absl::Status {
    for (int attempt = 0; attempt < 2; ++attempt) {
      ASSIGN_OR_RETURN(AwsCredentials credentials, credentials_->Get());
      result = CallOnce(location, request, credentials);
      if (result.status().code() != absl::StatusCode::kUnauthenticated) break;
      credentials_->Invalidate();  // The token expired: fetch new credentials, once.
    }
    return result.status();
  });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<uint64_t> S3Client::Head(const S3Location& location) {
  HttpRequest request;
  request.method = "HEAD";
  request.url = config_.ObjectUrl(location);
  ASSIGN_OR_RETURN(HttpResponse response, Call(location, request, {}));
  if (response.content_length < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(location.ToUrl(), ": no Content-Length in the HEAD answer"));
  }
  return static_cast<uint64_t>(response.content_length);
}

absl::Status S3Client::GetRange(const S3Location& location, uint64_t offset, size_t n,
                                uint8_t* out) {
  HttpRequest request;
  request.url = config_.ObjectUrl(location);
  request.headers.push_back(absl::StrCat("Range: bytes=", offset, "-", offset + n - 1));
  request.out = out;
  request.out_capacity = n;
  ASSIGN_OR_RETURN(HttpResponse response, Call(location, request, {}));
  if (response.written != n) {
    return absl::UnavailableError(absl::StrCat(location.ToUrl(), ": short range read (",
                                               response.written, " of ", n, " bytes)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> S3Client::Get(const S3Location& location) {
  HttpRequest request;
  request.url = config_.ObjectUrl(location);
  ASSIGN_OR_RETURN(HttpResponse response, Call(location, request, {}));
  return std::move(response.body);
}

absl::Status S3Client::Put(const S3Location& location, absl::Span<const uint8_t> data) {
  if (data.size() > config_.part_bytes) return PutMultipart(location, data);
  HttpRequest request;
  request.method = "PUT";
  request.url = config_.ObjectUrl(location);
  return Call(location, request, data).status();
}

absl::Status S3Client::PutMultipart(const S3Location& location, absl::Span<const uint8_t> data) {
  HttpRequest create;
  create.method = "POST";
  create.url = config_.ObjectUrl(location, {{"uploads", ""}});
  ASSIGN_OR_RETURN(HttpResponse created, Call(location, create, {}));
  const std::optional<std::string> upload_id = XmlValue(created.body, "UploadId");
  if (!upload_id.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat(location.ToUrl(), ": CreateMultipartUpload answered without an UploadId"));
  }
  std::string complete = "<CompleteMultipartUpload>";
  absl::Status status;
  for (uint64_t offset = 0, part = 1; offset < data.size() && status.ok();
       offset += config_.part_bytes, ++part) {
    HttpRequest upload;
    upload.method = "PUT";
    upload.url =
        config_.ObjectUrl(location, {{"partNumber", absl::StrCat(part)}, {"uploadId", *upload_id}});
    absl::StatusOr<HttpResponse> uploaded =
        Call(location, upload, data.subspan(offset, config_.part_bytes));
    status = uploaded.status();
    if (status.ok()) {
      absl::StrAppend(&complete, "<Part><PartNumber>", part, "</PartNumber><ETag>",
                      uploaded->headers["etag"], "</ETag></Part>");
    }
  }
  HttpRequest finish;
  finish.method = status.ok() ? "POST" : "DELETE";
  finish.url = config_.ObjectUrl(location, {{"uploadId", *upload_id}});
  if (!status.ok()) {
    Call(location, finish, {}).IgnoreError();  // Abort: S3 frees the parts.
    return status;
  }
  complete += "</CompleteMultipartUpload>";
  finish.headers.push_back("Content-Type: application/xml");
  ASSIGN_OR_RETURN(HttpResponse done, Call(location, finish, AsBytes(complete)));
  if (XmlValue(done.body, "Code").has_value()) {  // S3 may answer 200 with an error body.
    return absl::UnavailableError(absl::StrCat(
        location.ToUrl(), ": CompleteMultipartUpload: ", *XmlValue(done.body, "Code")));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<S3Object>> S3Client::List(const S3Location& prefix) {
  std::vector<S3Object> objects;
  std::string token;
  const S3Location bucket{prefix.bucket, ""};
  do {
    std::vector<std::pair<std::string, std::string>> query = {
        {"list-type", "2"},
        {"max-keys", absl::StrCat(config_.list_page_keys)},
        {"prefix", prefix.key}};
    if (!token.empty()) query.emplace_back("continuation-token", token);
    HttpRequest request;
    request.url = config_.ObjectUrl(bucket, std::move(query));
    ASSIGN_OR_RETURN(HttpResponse response, Call(prefix, request, {}));
    absl::string_view body = response.body;
    for (size_t at = body.find("<Contents>"); at != absl::string_view::npos;
         at = body.find("<Contents>", at + 1)) {
      const absl::string_view entry = body.substr(at, body.find("</Contents>", at) - at);
      S3Object object;
      object.key = XmlValue(entry, "Key").value_or("");
      if (!absl::SimpleAtoi(XmlValue(entry, "Size").value_or(""), &object.size)) {
        return absl::FailedPreconditionError(
            absl::StrCat(prefix.ToUrl(), ": a listing entry without a size"));
      }
      objects.push_back(std::move(object));
    }
    token = XmlValue(body, "IsTruncated").value_or("") == "true"
                ? XmlValue(body, "NextContinuationToken").value_or("")
                : "";
  } while (!token.empty());
  return objects;
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenS3File(std::shared_ptr<S3Client> client,
                                                             const std::string& url) {
  ASSIGN_OR_RETURN(S3Location location, ParseS3Url(url));
  ASSIGN_OR_RETURN(uint64_t size, client->Head(location));
  return std::unique_ptr<RandomAccessFile>(
      new S3File(std::move(client), url, std::move(location), size));
}

}  // namespace stoker
