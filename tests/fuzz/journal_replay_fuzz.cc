// Fuzz target: journal replay (coordinator/journal.h) of an arbitrary file, as a coordinator
// restart reads it: FileJournal::Load (magic, version, framing, crc, torn tail) and the replay of
// its records into a ClusterState.
//
// Input: the journal file's bytes. Invariants checked:
//   - Load fails only with DATA_LOSS (corruption) or FAILED_PRECONDITION (another version);
//   - after a successful Load the journal takes a new record, and loading it again gives the
//     same records plus that one (the torn tail, if any, was cut at a record boundary).
// Most mutations break the crc, so the records' contents are fuzzed by cluster_state_fuzz.cc;
// this target covers the framing and recovery.

#include "coordinator/cluster_state.h"
#include "coordinator/fake_journal_env_for_test.h"
#include "coordinator/journal.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::QuietProtobufLogs();
  const std::string path = "/fuzz/journal";
  stoker::FakeJournalEnv env;
  FUZZ_CHECK(
      env.ReplaceFile(path, absl::string_view(reinterpret_cast<const char*>(data), size)).ok());
  std::vector<stoker::v1::StateUpdate> updates;
  {
    stoker::FileJournal journal(path, &env);
    absl::StatusOr<std::vector<stoker::v1::StateUpdate>> loaded = journal.Load();
    if (!loaded.ok()) {
      FUZZ_CHECK(loaded.status().code() == absl::StatusCode::kDataLoss ||
                 loaded.status().code() == absl::StatusCode::kFailedPrecondition);
      return 0;
    }
    updates = *std::move(loaded);
    stoker::ClusterState state;
    for (const stoker::v1::StateUpdate& update : updates) state.Apply(update).IgnoreError();

    stoker::v1::StateUpdate heartbeat;
    heartbeat.mutable_worker_heartbeat()->set_worker_id(1);
    FUZZ_CHECK(journal.Sync(journal.Add(heartbeat)).ok());
    updates.push_back(heartbeat);
  }
  stoker::FileJournal reopened(path, &env);
  absl::StatusOr<std::vector<stoker::v1::StateUpdate>> again = reopened.Load();
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->size() == updates.size());
  for (size_t i = 0; i < updates.size(); ++i) {
    FUZZ_CHECK((*again)[i].SerializeAsString() == updates[i].SerializeAsString());
  }
  return 0;
}
