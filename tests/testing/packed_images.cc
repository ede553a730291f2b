#include "tests/testing/packed_images.h"

#include "common/status_macros.h"
#include "pack/pack_plan.h"

namespace stoker {

absl::StatusOr<PackSummary> PackGeneratedImages(const Storage& storage,
                                                const ImageFolderSpec& images, PackOptions pack) {
  RETURN_IF_ERROR(GenerateImageFolder(images));
  pack.input = images.dir;
  ASSIGN_OR_RETURN(const PackPlan plan, PlanPack(storage, pack));
  PackCounters counters;
  return Pack(storage, pack, plan, &counters);
}

}  // namespace stoker
