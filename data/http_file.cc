#include "data/http_file.h"

#include <curl/curl.h>

#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

// One easy handle per thread: curl keeps that thread's connections alive between requests.
class ThreadCurl {
 public:
  ThreadCurl() {
    static std::once_flag global_init;
    std::call_once(global_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    handle_ = curl_easy_init();
  }
  ~ThreadCurl() {
    if (handle_ != nullptr) curl_easy_cleanup(handle_);
  }
  CURL* get() { return handle_; }

 private:
  CURL* handle_ = nullptr;
};

CURL* ThisThreadCurl() {
  thread_local ThreadCurl curl;
  return curl.get();
}

// Where a range response goes: exactly `capacity` bytes at most.
struct Sink {
  uint8_t* out;
  size_t capacity;
  size_t written = 0;
};

size_t WriteToSink(char* data, size_t size, size_t count, void* user) {
  Sink* sink = static_cast<Sink*>(user);
  const size_t n = size * count;
  if (n > sink->capacity - sink->written) return 0;  // More than asked for: abort the transfer.
  std::memcpy(sink->out + sink->written, data, n);
  sink->written += n;
  return n;
}

bool Retryable(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_COULDNT_RESOLVE_HOST:
      return true;
    default:
      return false;
  }
}

// Maps a finished request to a status; UNAVAILABLE means "retry".
absl::Status RequestStatus(CURLcode code, long http, long expected, const std::string& url) {
  if (code != CURLE_OK) {
    const std::string message = absl::StrCat(url, ": ", curl_easy_strerror(code));
    return Retryable(code) ? absl::UnavailableError(message)
                           : absl::FailedPreconditionError(message);
  }
  if (http == expected) return absl::OkStatus();
  const std::string message = absl::StrCat(url, ": HTTP ", http);
  if (http == 404 || http == 410) return absl::NotFoundError(message);
  if (http == 401 || http == 403) return absl::PermissionDeniedError(message);
  if (http == 416) return absl::OutOfRangeError(message);
  if (http >= 500) return absl::UnavailableError(message);
  return absl::FailedPreconditionError(absl::StrCat(message, " (expected ", expected, ")"));
}

void SetCommon(CURL* curl, const std::string& url, const HttpOptions& options) {
  curl_easy_reset(curl);  // Keeps the connection cache.
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(options.request_timeout)));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(options.connect_timeout)));
}

// Immutable after construction; requests use the calling thread's handle.
class HttpFile : public RandomAccessFile {
 public:
  HttpFile(std::string url, uint64_t size, HttpOptions options)
      : url_(std::move(url)), size_(size), options_(std::move(options)) {}

  const std::string& name() const override { return url_; }
  uint64_t size() const override { return size_; }

  absl::Status ReadAt(uint64_t offset, size_t n, uint8_t* out) const override {
    RETURN_IF_ERROR(CheckReadRange(url_, size_, offset, n));
    if (n == 0) return absl::OkStatus();
    const std::string range = absl::StrCat(offset, "-", offset + n - 1);
    return RetryUnavailable(options_.backoff, Clock::Real(), [&]() -> absl::Status {
      CURL* curl = ThisThreadCurl();
      SetCommon(curl, url_, options_);
      Sink sink{out, n};
      curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());
      curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &WriteToSink);
      curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
      const CURLcode code = curl_easy_perform(curl);
      long http = 0;
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http);
      RETURN_IF_ERROR(RequestStatus(code, http, 206, url_));
      if (sink.written != n) {
        return absl::UnavailableError(
            absl::StrCat(url_, ": short range read (", sink.written, " of ", n, " bytes)"));
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
  curl_off_t length = -1;
  RETURN_IF_ERROR(RetryUnavailable(options.backoff, Clock::Real(), [&]() -> absl::Status {
    CURL* curl = ThisThreadCurl();
    SetCommon(curl, url, options);
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    const CURLcode code = curl_easy_perform(curl);
    long http = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http);
    RETURN_IF_ERROR(RequestStatus(code, http, 200, url));
    curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    return absl::OkStatus();
  }));
  if (length < 0) {
    return absl::FailedPreconditionError(absl::StrCat(url, ": no Content-Length in HEAD reply"));
  }
  return std::unique_ptr<RandomAccessFile>(
      new HttpFile(url, static_cast<uint64_t>(length), options));
}

}  // namespace stoker
