#include "data/http_file.h"

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "data/http_request.h"
#include "data/http_status.h"

namespace stoker {
namespace {

// The answer's status (data/http_status.h); a 2xx other than `expected` is FAILED_PRECONDITION
// (a server that ignores Range answers 200 with the whole file).
absl::Status ResponseStatus(const HttpResponse& response, long expected, const std::string& url) {
  if (response.status == expected) return absl::OkStatus();
  std::string message = absl::StrCat(url, ": HTTP ", response.status);
  if (response.status >= 300 && response.status < 400) {
    absl::StrAppend(&message, " (a redirect; not followed while --data-root limits URLs)");
  }
  const absl::Status status = HttpAnswerStatus(response, message, Clock::Real());
  if (!status.ok() && !absl::IsFailedPrecondition(status)) return status;
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
      RETURN_IF_ERROR(ResponseStatus(response, 206, url_));
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
    RETURN_IF_ERROR(ResponseStatus(response, 200, url));
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
