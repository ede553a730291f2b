#ifndef STOKER_DATA_DATASET_IO_H_
#define STOKER_DATA_DATASET_IO_H_

// What a process reads datasets through: its Storage (data/storage_backend.h: the S3 endpoint and
// credentials, the data roots, the shard cache) and its OpenShardPool (data/open_shards.h: the
// shards held open, shared by every source of the process). A binary builds one in main.cc from
// its flags (StorageFlags::BuildDatasetIo) and hands it down to what opens sources (CreateSource,
// data/source.h); a test or a benchmark builds its own. There is no process-wide default.
//
// Shared pointers, not references: the sources opened through it keep both alive (a worker's job
// contexts, the trainer's hybrid producer) however long their owners hold them.

#include <memory>

namespace stoker {

class OpenShardPool;  // data/open_shards.h
class Storage;        // data/storage_backend.h

// A cheap value: copies share the same storage and pool. Both pointers are set in every
// DatasetIo handed to a source. Thread-safe (both objects are).
struct DatasetIo {
  std::shared_ptr<Storage> storage;
  std::shared_ptr<OpenShardPool> shards;

  // A storage from the environment alone (Storage::FromEnvironment: no data roots, no cache) and
  // a pool of default limits: for tests, benchmarks and the trainer's hybrid producer.
  static DatasetIo FromEnvironment();
};

}  // namespace stoker

#endif  // STOKER_DATA_DATASET_IO_H_
