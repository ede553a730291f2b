#include "data/testing/nginx_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/clock.h"

extern char** environ;

namespace stoker {
namespace testing {
namespace {

constexpr char kNginx[] = "/usr/sbin/nginx";

bool Answers(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return connected;
}

std::string Config(const std::string& dir, const std::string& root, int port) {
  return absl::StrFormat(R"(daemon off;
master_process off;
pid %1$s/nginx.pid;
error_log %1$s/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path %1$s/body;
  proxy_temp_path %1$s/proxy;
  fastcgi_temp_path %1$s/fastcgi;
  uwsgi_temp_path %1$s/uwsgi;
  scgi_temp_path %1$s/scgi;
  keepalive_requests 10000;
  server {
    listen 127.0.0.1:%2$d;
    root %3$s;
    location /status/503 { return 503; }
    location ~ ^/moved/(.*)$ { return 302 /$1; }
  }
}
)",
                         dir, port, root);
}

}  // namespace

absl::StatusOr<std::unique_ptr<NginxServer>> NginxServer::Start(const std::string& root) {
  if (::access(kNginx, X_OK) != 0) {
    return absl::FailedPreconditionError("nginx is not installed (scripts/install-deps.sh)");
  }
  std::unique_ptr<NginxServer> server(new NginxServer());
  server->port_ = FreeLoopbackPort();
  const std::string conf = server->dir_.File("nginx.conf");
  WriteFile(conf, Config(server->dir_.path(), root, server->port_));
  std::string prefix = server->dir_.path() + "/";
  std::vector<std::string> args = {
      kNginx, "-p", prefix, "-c", conf, "-e", server->dir_.File("error.log")};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  if (::posix_spawn(&server->pid_, kNginx, nullptr, nullptr, argv.data(), environ) != 0) {
    server->pid_ = -1;
    return absl::UnavailableError("cannot start nginx");
  }
  Clock* const clock = Clock::Real();
  const absl::Time deadline = clock->Now() + absl::Seconds(10);
  while (!Answers(server->port_)) {
    const bool exited = ::waitpid(server->pid_, nullptr, WNOHANG) != 0;
    if (exited) server->pid_ = -1;
    if (exited || clock->Now() > deadline) {
      return absl::UnavailableError(absl::StrCat("nginx did not answer on port ", server->port_,
                                                 ": ", ReadFile(server->dir_.File("error.log"))));
    }
    clock->SleepFor(absl::Milliseconds(20));
  }
  return server;
}

NginxServer::~NginxServer() {
  if (pid_ > 0 && ::kill(pid_, SIGTERM) == 0) ::waitpid(pid_, nullptr, 0);
}

std::string NginxServer::url() const { return absl::StrCat("http://127.0.0.1:", port_, "/"); }

}  // namespace testing
}  // namespace stoker
