#include "worker/advertise_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace stoker {
namespace {

std::string StripBrackets(const std::string& host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    return host.substr(1, host.size() - 2);
  }
  return host;
}

// An IPv6 literal gets brackets when a port follows it.
std::string JoinHostPort(const std::string& host, int port) {
  const std::string bare = StripBrackets(host);
  return bare.find(':') != std::string::npos ? absl::StrCat("[", bare, "]:", port)
                                             : absl::StrCat(bare, ":", port);
}

// "h:p" or "[v6]:p" has a port; "h", "v6" and "[v6]" do not.
bool HasPort(const std::string& address) {
  if (!address.empty() && address.front() == '[') return address.find("]:") != std::string::npos;
  return std::count(address.begin(), address.end(), ':') == 1;
}

}  // namespace

std::string HostOfAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  return StripBrackets(colon == std::string::npos ? address : address.substr(0, colon));
}

bool IsWildcardHost(const std::string& host) {
  const std::string bare = StripBrackets(host);
  return bare.empty() || bare == "0.0.0.0" || bare == "::";
}

bool IsLoopbackHost(const std::string& host) {
  const std::string bare = StripBrackets(host);
  return bare == "localhost" || bare == "::1" || absl::StartsWith(bare, "127.");
}

absl::Status CheckAdvertisable(const AdvertiseInputs& inputs) {
  const std::string& advertise_address = inputs.advertise_address;
  const std::string& listen_address = inputs.listen_address;
  const std::string& coordinator_address = inputs.coordinator_address;
  const bool coordinator_remote =
      !inputs.local_client_only && !IsLoopbackHost(HostOfAddress(coordinator_address));
  if (!advertise_address.empty()) {
    const std::string host = HasPort(advertise_address) ? HostOfAddress(advertise_address)
                                                        : StripBrackets(advertise_address);
    if (IsWildcardHost(host)) {
      return absl::InvalidArgumentError(absl::StrCat("advertise_address: '", advertise_address,
                                                     "' is not an address a client can dial"));
    }
    if (IsLoopbackHost(host) && coordinator_remote) {
      return absl::InvalidArgumentError(absl::StrCat(
          "advertise_address: '", advertise_address, "' is loopback but the coordinator (",
          coordinator_address, ") is not: remote clients would dial themselves"));
    }
    return absl::OkStatus();
  }
  if (IsLoopbackHost(HostOfAddress(listen_address)) && coordinator_remote) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen_address: '", listen_address, "' is loopback but the coordinator (",
        coordinator_address, ") is not; listen on 0.0.0.0 or set --advertise-address"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ResolveAdvertiseAddress(const AdvertiseInputs& inputs, int bound_port,
                                                    const LocalAddressFn& local_address) {
  RETURN_IF_ERROR(CheckAdvertisable(inputs));
  const std::string& advertise_address = inputs.advertise_address;
  const std::string& listen_address = inputs.listen_address;
  const std::string& coordinator_address = inputs.coordinator_address;
  if (!advertise_address.empty()) {
    return HasPort(advertise_address) ? advertise_address
                                      : JoinHostPort(advertise_address, bound_port);
  }
  const std::string listen_host = HostOfAddress(listen_address);
  if (!IsWildcardHost(listen_host)) return JoinHostPort(listen_host, bound_port);
  ASSIGN_OR_RETURN(const std::string local, local_address(HostOfAddress(coordinator_address)));
  if (IsWildcardHost(local)) {
    return absl::UnavailableError(absl::StrCat("no local address routes to the coordinator (",
                                               coordinator_address, "); set --advertise-address"));
  }
  return JoinHostPort(local, bound_port);
}

absl::StatusOr<std::string> LocalAddressToward(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const std::string bare = StripBrackets(host);
  if (const int rc = getaddrinfo(bare.c_str(), "9", &hints, &found); rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve coordinator host '", host, "': ", gai_strerror(rc)));
  }
  absl::StatusOr<std::string> result = absl::UnavailableError(
      absl::StrCat("no local address routes to coordinator host '", host, "'"));
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    const int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t length = sizeof(local);
    char text[INET6_ADDRSTRLEN] = {};
    const bool ok = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
                    getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0 &&
                    getnameinfo(reinterpret_cast<sockaddr*>(&local), length, text, sizeof(text),
                                nullptr, 0, NI_NUMERICHOST) == 0;
    close(fd);
    if (ok) {
      result = std::string(text);
      break;
    }
  }
  freeaddrinfo(found);
  return result;
}

}  // namespace stoker
