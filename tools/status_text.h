#ifndef STOKER_TOOLS_STATUS_TEXT_H_
#define STOKER_TOOLS_STATUS_TEXT_H_

// The human form of a coordinator's GetStatus reply, as `stoker-ctl status` and `top` print it:
// every line fits in 80 columns (the advice is word-wrapped; job and worker ids appear in their
// short form, the serial without the coordinator's incarnation: common/ids.h).

#include <cstddef>
#include <string>

#include "stoker/v1/status.pb.h"

namespace stoker {

// `coordinator` is the address queried, shown in the first line.
std::string FormatStatus(const stoker::v1::GetStatusResponse& status,
                         const std::string& coordinator);

// The width every line of stoker-ctl's tables and text fits in.
inline constexpr size_t kTextWidth = 80;

// 0.257 → "26%".
std::string RoundedPercent(double fraction);

// The lines of `text` broken at spaces so that none exceeds `width`, each prefixed by `indent`
// (words longer than the width stay whole).
std::string WrapText(const std::string& text, size_t width, const std::string& indent);

}  // namespace stoker

#endif  // STOKER_TOOLS_STATUS_TEXT_H_
