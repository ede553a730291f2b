#ifndef STOKER_TOOLS_ADVISE_TEXT_H_
#define STOKER_TOOLS_ADVISE_TEXT_H_

// What `stoker-ctl advise` prints from a coordinator's GetStatus reply: the cluster's delivery
// and dollars now, and per job the advisor's table (coordinator/advisor_costs.h): samples/s,
// data wait, dollars per hour and per epoch, GPU-hours lost per epoch and samples per dollar,
// now and predicted at each candidate worker count, with the knee, the cheapest count and the
// advised one marked. Lines fit in 80 columns.

#include <string>

#include "stoker/v1/status.pb.h"

namespace stoker {

// `coordinator` is the address queried, shown in the first line.
std::string FormatAdvice(const stoker::v1::GetStatusResponse& status,
                         const std::string& coordinator);

// The advice part of `status` (for --json): each job's id, name, state and advice, and the
// cluster's figures; ranks and workers dropped.
stoker::v1::GetStatusResponse AdviceOnly(const stoker::v1::GetStatusResponse& status);

}  // namespace stoker

#endif  // STOKER_TOOLS_ADVISE_TEXT_H_
