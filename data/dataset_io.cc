#include "data/dataset_io.h"

#include "data/open_shards.h"
#include "data/storage_backend.h"

namespace stoker {

DatasetIo DatasetIo::FromEnvironment() {
  return DatasetIo{Storage::FromEnvironment(), std::make_shared<OpenShardPool>(OpenShardLimits{})};
}

}  // namespace stoker
