#ifndef STOKER_WORKER_ADVERTISE_ADDRESS_H_
#define STOKER_WORKER_ADVERTISE_ADDRESS_H_

// The address a worker registers with the coordinator, which hands it to trainer clients: it
// must be one they can dial from their own hosts.
//
//   --advertise-address=H:P   used as given
//   --advertise-address=H     H and the bound port (Kubernetes: H = the pod IP, from the
//                             downward API)
//   unset, --listen=H:P       H, when H is a specific address
//   unset, --listen=0.0.0.0:P the local address of the route toward the coordinator: the
//                             interface the coordinator (and so, presumably, the trainers) reach
//                             this host through
// Never a wildcard (0.0.0.0, ::), and never a loopback address when the coordinator is not on
// loopback itself (a remote client would dial its own host) — unless the worker serves only a
// client on its own host (hybrid mode, WorkerConfig::hybrid_client_id).

#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace stoker {

// A host (no port) → the local IP address this host would use to reach it, or an error naming
// the host. Injected so the choice is tested without a network.
using LocalAddressFn = std::function<absl::StatusOr<std::string>(const std::string& host)>;

// The real one: resolves `host` and connect()s a UDP socket toward it (no packet is sent), then
// reads the socket's local address.
absl::StatusOr<std::string> LocalAddressToward(const std::string& host);

// "host:port" → "host" ("[::1]:80" → "::1"); what follows the last ':' is the port.
std::string HostOfAddress(const std::string& address);
// 0.0.0.0, ::, [::] or empty.
bool IsWildcardHost(const std::string& host);
// localhost, 127.0.0.0/8, ::1.
bool IsLoopbackHost(const std::string& host);

// Where a worker listens and whom it serves; the inputs of the address choice.
struct AdvertiseInputs {
  std::string advertise_address;    // --advertise-address; empty = derive
  std::string listen_address;       // --listen, host:port
  std::string coordinator_address;  // --coordinator, host:port
  bool local_client_only = false;   // only a client on this host dials it (loopback is fine)
};

// Static checks of the flags (WorkerConfig::Validate): INVALID_ARGUMENT naming
// advertise_address or listen_address when the result could only be one a remote client cannot
// dial.
absl::Status CheckAdvertisable(const AdvertiseInputs& inputs);

// The address to register, per the table above; `bound_port` is the port the server got.
// Errors: CheckAdvertisable's, or local_address's (UNAVAILABLE naming the coordinator).
absl::StatusOr<std::string> ResolveAdvertiseAddress(const AdvertiseInputs& inputs, int bound_port,
                                                    const LocalAddressFn& local_address);

}  // namespace stoker

#endif  // STOKER_WORKER_ADVERTISE_ADDRESS_H_
