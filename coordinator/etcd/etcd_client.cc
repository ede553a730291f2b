#include "coordinator/etcd/etcd_client.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace stoker {
namespace {

constexpr absl::string_view kEtcdScheme = "etcd://";

absl::Status EtcdTargetError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", what, " (want etcd://HOST:PORT[,HOST:PORT...]/PREFIX)"));
}

// HOST:PORT with a non-empty host (a bracketed IPv6 address included) and a port in 1..65535.
bool IsEtcdEndpoint(absl::string_view endpoint) {
  const size_t colon = endpoint.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return false;
  const absl::string_view port = endpoint.substr(colon + 1);
  int number = 0;
  return !port.empty() && std::all_of(port.begin(), port.end(), absl::ascii_isdigit) &&
         absl::SimpleAtoi(port, &number) && number >= 1 && number <= 65535;
}

}  // namespace

absl::StatusOr<EtcdTarget> ParseEtcdTarget(absl::string_view spec, absl::string_view field) {
  if (!absl::StartsWith(spec, kEtcdScheme)) {
    return EtcdTargetError(field, absl::StrCat("\"", spec, "\" is not an etcd:// address"));
  }
  const absl::string_view rest = spec.substr(kEtcdScheme.size());
  const size_t slash = rest.find('/');
  const absl::string_view hosts = rest.substr(0, slash);
  EtcdTarget target;
  if (!hosts.empty()) {
    for (absl::string_view endpoint : absl::StrSplit(hosts, ',')) {
      if (!IsEtcdEndpoint(endpoint)) {
        return EtcdTargetError(field,
                               absl::StrCat("etcd endpoint \"", endpoint, "\" is not HOST:PORT"));
      }
      target.endpoints.emplace_back(endpoint);
    }
  }
  if (target.endpoints.empty()) {
    return EtcdTargetError(field, absl::StrCat("no etcd endpoint in \"", spec, "\""));
  }
  absl::string_view prefix =
      slash == absl::string_view::npos ? absl::string_view() : rest.substr(slash);
  while (absl::ConsumeSuffix(&prefix, "/")) {
  }
  if (prefix.empty()) {
    return EtcdTargetError(field, absl::StrCat("no key prefix in \"", spec, "\""));
  }
  target.prefix = absl::StrCat(prefix, "/");
  return target;
}

std::string EtcdPrefixEnd(absl::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    unsigned char& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  // Every byte was 0xff (or no prefix): etcd reads "\0" as "every key from the start key on".
  return std::string(1, '\0');
}

}  // namespace stoker
