#include "data/http_file.h"

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "data/http_request.h"

namespace stoker {
namespace {

// Maps an HTTP answer to a status; UNAVAILABLE means "retry".
absl::Status ResponseStatus(long http, long expected, const std::string& url) {
  if (http == expected) return absl::OkStatus();
  const std::string message = absl::StrCat(url, ": HTTP ", http);
  if (http == 404 || http == 410) return absl::NotFoundError(message);
  if (http == 401 || http == 403) return absl::PermissionDeniedError(message);
  if (http == 416) return absl::OutOfRangeError(message);
  if (http >= 300 && http < 400) {
    return absl::PermissionDeniedError(
        absl::StrCat(message, " (a redirect; not followed while --data-root limits URLs)"));
  }
  if (http >= 500) return absl::UnavailableError(message);
  return absl::FailedPreconditionError(absl::StrCat(message, " (expected ", expected, ")"));
}

HttpRequest Request(const std::string& method, const std::string& url, const HttpOptions& options) {
  HttpRequest request;
  request.method = method;
  request.url = url;
  request.timeout = options.request_timeout;
  request.connect_timeout = options.connect_timeout;
  request.follow_redirects = options.follow_redirects;
  return request;
}

// Immutable after construction; requests use the calling thread's curl handle.
class HttpFile : public RandomAccessFile {
 public:
  HttpFile(std::string url, uint64_t size, HttpOptions options)
      : url_(std::move(url)), size_(size), options_(std::move(options)) {}

  const std::string& name() const override { return url_; }
  uint64_t size() const override { return size_; }

  absl::Status ReadAt(uint64_t offset, size_t n, uint8_t* out) const override {
    RETURN_IF_ERROR(CheckReadRange(url_, size_, offset, n));
    if (n == 0) return absl::OkStatus();
    HttpRequest request = Request("GET", url_, options_);
    request.headers.push_back(absl::StrCat("Range: bytes=", offset, "-", offset + n - 1));
    request.out = out;
    request.out_capacity = n;
    return RetryUnavailable(options_.backoff, Clock::Real(), [&]() -> absl::Status {
      ASSIGN_OR_RETURN(HttpResponse response, CurlTransport()->Send(request));
      RETURN_IF_ERROR(ResponseStatus(response.status, 206, url_));
      if (response.written != n) {
        return absl::UnavailableError(
            absl::StrCat(url_, ": short range read (", response.written, " of ", n, " bytes)"));
      }
      return absl::OkStatus();
    });
  }

 private:
  const std::string url_;
  const uint64_t size_;
  const HttpOptions options_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenHttpFile(const std::string& url,
                                                               const HttpOptions& options) {
  int64_t length = -1;
  RETURN_IF_ERROR(RetryUnavailable(options.backoff, Clock::Real(), [&]() -> absl::Status {
    ASSIGN_OR_RETURN(HttpResponse response, CurlTransport()->Send(Request("HEAD", url, options)));
    RETURN_IF_ERROR(ResponseStatus(response.status, 200, url));
    length = response.content_length;
    return absl::OkStatus();
  }));
  if (length < 0) {
    return absl::FailedPreconditionError(absl::StrCat(url, ": no Content-Length in HEAD reply"));
  }
  return std::unique_ptr<RandomAccessFile>(
      new HttpFile(url, static_cast<uint64_t>(length), options));
}

}  // namespace stoker
