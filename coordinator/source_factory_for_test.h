#ifndef STOKER_COORDINATOR_SOURCE_FACTORY_FOR_TEST_H_
#define STOKER_COORDINATOR_SOURCE_FACTORY_FOR_TEST_H_

// The SourceFactory of coordinator tests that open real datasets: CreateSource through a
// DatasetIo of their own, from the environment (no data roots, no cache). Tests only.

#include "coordinator/job_validation.h"
#include "data/dataset_io.h"

namespace stoker {

inline SourceFactory TestSourceFactory() { return SourceFactoryFor(DatasetIo::FromEnvironment()); }

}  // namespace stoker

#endif  // STOKER_COORDINATOR_SOURCE_FACTORY_FOR_TEST_H_
