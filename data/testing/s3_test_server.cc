#include "data/testing/s3_test_server.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "data/http_request.h"
#include "data/s3_config.h"
#include "gtest/gtest.h"

extern char** environ;

namespace stoker {
namespace testing {
namespace {

constexpr char kScript[] = STOKER_SOURCE_DIR "/tests/s3/s3_test_server.js";
constexpr char kModules[] = STOKER_SOURCE_DIR "/tests/s3/node_modules/s3rver";

std::string FindNode() {
  for (const char* path : {"/usr/bin/node", "/usr/bin/nodejs", "/usr/local/bin/node"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<S3TestServer>> S3TestServer::Start(S3TestServerOptions options) {
  if (FindNode().empty() || ::access(kModules, R_OK) != 0) {
    return absl::FailedPreconditionError(
        "node or tests/s3/node_modules is missing: run scripts/install-deps.sh");
  }
  std::unique_ptr<S3TestServer> server(new S3TestServer(std::move(options)));
  if (absl::Status status = server->Launch(); !status.ok()) return status;
  return server;
}

absl::Status S3TestServer::Launch() {
  const std::string port_file = dir_.File("port");
  ::unlink(port_file.c_str());
  std::vector<std::string> args = {FindNode(),
                                   "--openssl-legacy-provider",  // s3rver's listing tokens use DES.
                                   kScript,
                                   "--dir",
                                   dir_.File("objects"),
                                   "--port",
                                   absl::StrCat(port_),
                                   "--port-file",
                                   port_file,
                                   "--log",
                                   dir_.File("requests.log"),
                                   "--key",
                                   options_.access_key_id + ":" + options_.secret_access_key,
                                   "--sts-ttl",
                                   absl::StrCat(options_.sts_ttl_seconds),
                                   "--web-identity-token",
                                   options_.web_identity_token,
                                   "--role-arn",
                                   options_.role_arn,
                                   "--container-token",
                                   options_.container_token};
  for (const std::string& bucket : options_.buckets) {
    args.push_back("--bucket");
    args.push_back(bucket);
  }
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string output = dir_.File("output.log");
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const int spawned = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    pid_ = -1;
    return absl::UnavailableError("cannot start node");
  }
  Clock* const clock = Clock::Real();
  const absl::Time deadline = clock->Now() + absl::Seconds(20);
  while (!absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(port_file)), &port_) || port_ == 0) {
    const bool exited = ::waitpid(pid_, nullptr, WNOHANG) != 0;
    if (exited) pid_ = -1;
    if (exited || clock->Now() > deadline) {
      return absl::UnavailableError(
          absl::StrCat("the S3 test server did not start: ", ReadFile(output)));
    }
    clock->SleepFor(absl::Milliseconds(20));
  }
  return absl::OkStatus();
}

S3TestServer::~S3TestServer() { Stop(); }

void S3TestServer::Stop() {
  if (pid_ > 0 && ::kill(pid_, SIGTERM) == 0) ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

absl::Status S3TestServer::Restart() {
  Stop();
  return Launch();
}

std::string S3TestServer::endpoint() const { return absl::StrCat("http://127.0.0.1:", port_); }

std::vector<std::string> S3TestServer::LogLines() const {
  return absl::StrSplit(ReadFile(dir_.File("requests.log")), '\n', absl::SkipEmpty());
}

int S3TestServer::CountRequests(const std::string& method, const std::string& fragment) const {
  int count = 0;
  for (const std::string& line : LogLines()) {
    if (absl::StartsWith(line, method + " ") && absl::StrContains(line, fragment)) ++count;
  }
  return count;
}

void S3TestServer::FailNext(int count, int http_status, const std::string& retry_after) {
  HttpRequest request;
  request.method = "POST";
  request.url = absl::StrCat(endpoint(), "/__fail?count=", count, "&status=", http_status);
  if (!retry_after.empty()) {
    absl::StrAppend(&request.url, "&retry_after=", AwsUriEncode(retry_after, false));
  }
  absl::StatusOr<HttpResponse> answer = CurlTransport()->Send(request);
  EXPECT_TRUE(answer.ok() && answer->status == 204)
      << "the S3 test server refused __fail: "
      << (answer.ok() ? absl::StrCat("HTTP ", answer->status, " ", answer->body)
                      : answer.status().ToString());
}

std::string S3TestServer::Output() const { return ReadFile(dir_.File("output.log")); }

}  // namespace testing
}  // namespace stoker
