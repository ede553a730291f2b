#include "data/http_request.h"

#include <curl/curl.h>

#include <cstring>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

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

// Where a response goes, and where an upload comes from.
struct Transfer {
  const HttpRequest* request;
  HttpResponse* response;
  size_t uploaded = 0;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  Transfer* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->request->out == nullptr) {
    t->response->body.append(data, n);
  } else {
    if (n > t->request->out_capacity - t->response->written) return 0;  // Abort: too long.
    std::memcpy(t->request->out + t->response->written, data, n);
  }
  t->response->written += n;
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  Transfer* t = static_cast<Transfer*>(user);
  const absl::string_view line(data, size * count);
  const size_t colon = line.find(':');
  if (colon != absl::string_view::npos) {
    t->response->headers[absl::AsciiStrToLower(line.substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return size * count;
}

size_t OnUpload(char* buffer, size_t size, size_t count, void* user) {
  Transfer* t = static_cast<Transfer*>(user);
  const size_t n = std::min(size * count, t->request->body.size() - t->uploaded);
  std::memcpy(buffer, t->request->body.data() + t->uploaded, n);
  t->uploaded += n;
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
    case CURLE_WRITE_ERROR:  // A longer body than asked for: ask again.
      return true;
    default:
      return false;
  }
}

void SetMethod(CURL* curl, const HttpRequest& request) {
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
}

// Thread-safe: state is per thread.
class CurlHttpTransport : public HttpTransport {
 public:
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    CURL* curl = ThisThreadCurl();
    curl_easy_reset(curl);  // Keeps the connection cache.
    HttpResponse response;
    Transfer transfer{&request, &response};
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION,
                     request.follow_redirects && request.aws_sigv4.empty() ? 1L : 0L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(absl::ToInt64Milliseconds(request.timeout)));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(absl::ToInt64Milliseconds(request.connect_timeout)));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, &OnUpload);
    curl_easy_setopt(curl, CURLOPT_READDATA, &transfer);
    SetMethod(curl, request);
    curl_slist* headers = nullptr;
    for (const std::string& header : request.headers) {
      headers = curl_slist_append(headers, header.c_str());
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    if (!request.aws_sigv4.empty()) {
      curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, request.aws_sigv4.c_str());
      curl_easy_setopt(curl, CURLOPT_USERNAME, request.access_key_id.c_str());
      curl_easy_setopt(curl, CURLOPT_PASSWORD, request.secret_access_key.c_str());
    }
    const CURLcode code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    curl_off_t length = -1;
    curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    response.content_length = length;
    // Forget the key pair: a later request on this handle must not inherit it.
    curl_easy_reset(curl);
    curl_slist_free_all(headers);
    if (code != CURLE_OK) {
      const std::string message =
          absl::StrCat(UrlForMessages(request.url), ": ", curl_easy_strerror(code));
      return Retryable(code) ? absl::UnavailableError(message)
                             : absl::FailedPreconditionError(message);
    }
    return response;
  }
};

}  // namespace

HttpTransport* CurlTransport() {
  static CurlHttpTransport* transport = new CurlHttpTransport();
  return transport;
}

std::string UrlForMessages(const std::string& url) { return url.substr(0, url.find('?')); }

}  // namespace stoker
