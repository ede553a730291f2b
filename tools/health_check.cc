#include "tools/health_check.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/grpc_settings.h"
#include "common/grpc_status.h"
#include "common/tls/grpc_tls.h"

namespace stoker {
namespace {

constexpr char kCheckMethod[] = "/grpc.health.v1.Health/Check";
constexpr uint32_t kStatusTag = (1 << 3) | 0;   // field 1, varint
constexpr uint32_t kServiceTag = (1 << 3) | 2;  // field 1, length-delimited

}  // namespace

const char* ServingStatusName(ServingStatus status) {
  switch (status) {
    case ServingStatus::kUnknown:
      return "UNKNOWN";
    case ServingStatus::kServing:
      return "SERVING";
    case ServingStatus::kNotServing:
      return "NOT_SERVING";
    case ServingStatus::kServiceUnknown:
      return "SERVICE_UNKNOWN";
  }
  return "UNKNOWN";
}

std::string EncodeHealthCheckRequest(const std::string& service) {
  std::string bytes;
  if (service.empty()) return bytes;  // proto3: a default field is not on the wire.
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream out(&stream);
  out.WriteTag(kServiceTag);
  out.WriteVarint32(static_cast<uint32_t>(service.size()));
  out.WriteString(service);
  return bytes;
}

absl::StatusOr<ServingStatus> ParseHealthCheckResponse(const std::string& bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  uint32_t status = 0;  // Absent: UNKNOWN.
  while (const uint32_t tag = in.ReadTag()) {
    if (tag == kStatusTag) {
      if (!in.ReadVarint32(&status)) {
        return absl::InternalError("health check response does not parse");
      }
    } else if (!google::protobuf::internal::WireFormatLite::SkipField(&in, tag)) {
      return absl::InternalError("health check response does not parse");
    }
  }
  if (in.CurrentPosition() != static_cast<int>(bytes.size())) {
    return absl::InternalError("health check response does not parse");
  }
  if (status > static_cast<uint32_t>(ServingStatus::kServiceUnknown)) {
    return absl::InternalError(absl::StrCat("health check response has status ", status));
  }
  return static_cast<ServingStatus>(status);
}

absl::StatusOr<ServingStatus> CheckHealth(const std::string& address, const std::string& service,
                                          absl::Duration timeout, const TlsConfig& tls) {
  grpc::GenericStub stub(
      grpc::CreateChannel(address, ChannelCredentials(tls, {Role::kCoordinator, Role::kWorker})));
  const std::string request_bytes = EncodeHealthCheckRequest(service);
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(timeout));
  context.set_wait_for_ready(false);
  grpc::Status status;
  absl::Notification done;
  stub.UnaryCall(&context, kCheckMethod, grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();
  if (!status.ok()) return FromGrpcStatus(status, absl::StrCat("health check of ", address));
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return absl::InternalError("health check response unreadable");
  std::string bytes;
  for (const grpc::Slice& part : slices) {
    bytes.append(reinterpret_cast<const char*>(part.begin()), part.size());
  }
  return ParseHealthCheckResponse(bytes);
}

}  // namespace stoker
