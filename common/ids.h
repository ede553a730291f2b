#ifndef STOKER_COMMON_IDS_H_
#define STOKER_COMMON_IDS_H_

// Job and worker ids (docs/architecture.md, Failure handling, "Ids never alias"). An id is
//
//   (incarnation << 32) | serial
//
// where the incarnation is a random non-zero 32-bit number a coordinator picks when it starts
// without state (no journal, or an empty one) and journals, and the serial counts from 1 within
// it. A coordinator restarted on its journal keeps its incarnation, so its ids stay valid; one
// that lost its state picks another, so an id of the old state can never name a new job or
// worker: it is refused (FAILED_PRECONDITION), never taken for someone else's. Ids of journals
// written before incarnations existed have incarnation 0 and stay valid where they are known.
//
// People see the serial ("job 3", "worker 2": ShortId); the full id travels in every message.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace stoker {

inline constexpr uint64_t MakeId(uint32_t incarnation, uint32_t serial) {
  return (uint64_t{incarnation} << 32) | serial;
}
inline constexpr uint32_t IncarnationOf(uint64_t id) { return static_cast<uint32_t>(id >> 32); }
inline constexpr uint32_t SerialOf(uint64_t id) { return static_cast<uint32_t>(id); }

// The short form people read: the serial.
inline std::string ShortId(uint64_t id) { return absl::StrCat(SerialOf(id)); }

// The incarnation as people read it in logs: 8 hex digits.
inline std::string IncarnationName(uint32_t incarnation) {
  return absl::StrCat(absl::Hex(incarnation, absl::kZeroPad8));
}

// The answer to a call that names job `job_id` when the job does not exist, or exists but the
// caller may not see it (another tenant's): one answer for both, so that it tells nothing.
inline absl::Status JobNotFound(uint64_t job_id) {
  return absl::NotFoundError(absl::StrCat("job ", ShortId(job_id), ": no such job"));
}

}  // namespace stoker

#endif  // STOKER_COMMON_IDS_H_
