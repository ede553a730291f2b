#ifndef STOKER_TRAINER_CLIENT_PYTHON_PYTHON_LOADER_CONFIG_H_
#define STOKER_TRAINER_CLIENT_PYTHON_PYTHON_LOADER_CONFIG_H_

// The arguments of the Python `stoker.Loader` (trainer_client/python/stoker/loader.py), as plain
// C++ values, and their translation into the client's LoaderOptions and DeviceOptions. Kept free
// of pybind11 so that the binding (stoker_module.cc) only converts types.
//
// Thread-compatible value type.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jobspec/job_spec_args.h"
#include "stoker/v1/pipeline.pb.h"
#include "trainer_client/device/device_options.h"
#include "trainer_client/loader_options.h"

namespace stoker {

// The dataset, pipeline and plan arguments are JobSpecArgs' (job_spec_args.h); `dataset`
// in Python sets manifest or num_samples (and the synthetic image fields).
struct PythonLoaderConfig : JobSpecArgs {
  // host:port of the coordinator. Required.
  std::string coordinator;
  uint32_t rank = 0;
  // Empty: DefaultJobName(spec, run_id).
  std::string job_name;
  std::string run_id;
  // The defaults below that LoaderOptions also has are LoaderOptions' own (one definition);
  // Python's stoker.Loader reads all of them from here.
  uint64_t prefetch_bytes = LoaderOptions().prefetch_bytes;
  // "cpu", "cuda" or "cuda:N". On "cpu" batches are handed out as received (zero copy) unless
  // to_float; on CUDA uint8 HWC batches are converted (DeviceFeeder) and others refused, and
  // the feeder runs a pipeline's to_float / normalize tail itself (DeviceRunsTail).
  std::string device = "cpu";
  // Convert uint8 HWC batches to float32 NCHW, (x / 255 − mean) / std, with the DeviceFeeder
  // (Python: convert=ConvertOptions(...) on "cpu").
  bool to_float = false;
  std::vector<float> mean;
  std::vector<float> std;
  // Converted batches that may be alive at once (DeviceOptions::resident_batches).
  uint32_t resident_batches = 4;
  // Hybrid mode (Python: hybrid=HybridOptions(...)): producer threads of this process
  // (HybridProducer) private to this loader; 0 = none. With > 0 the loader gets a random client id
  // for them.
  uint32_t hybrid_threads = 0;
  // Payload compression of the worker streams (LoaderOptions::compression): "none", "lz4",
  // "zstd", "zstd:LEVEL" or "auto".
  std::string compression = LoaderOptions().compression;
  // Yield batches in plan order (LoaderOptions::ordered).
  bool ordered = LoaderOptions().ordered;
  // Tokens of a checkpoint to resume from (LoaderOptions::resume_tokens): this rank's own, or
  // every old rank's when the world size changed.
  std::vector<std::string> resume_tokens;
  // TLS (LoaderOptions::tls): this trainer's certificate and key and the CA bundle, PEM files,
  // or the CA and a bearer token file; or insecure for plaintext (Python: tls=TlsOptions(...),
  // whose fields are TlsConfig's: errors name them as "tls.cert_file").
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  std::string bearer_token_file;
  bool insecure = false;
  // Hybrid mode under TLS: the in-process producer's certificate (role worker) and key; it
  // trusts tls_ca. Python: HybridOptions' cert_file and key_file.
  std::string hybrid_tls_cert;
  std::string hybrid_tls_key;

  // The JobSpec these arguments describe. INVALID_ARGUMENT naming the Python argument.
  absl::StatusOr<v1::JobSpec> ToJobSpec() const;
  // Everything the Loader needs; job_name defaults to DefaultJobName. INVALID_ARGUMENT naming
  // the argument.
  absl::StatusOr<LoaderOptions> ToLoaderOptions() const;
  // Whether batches go through a DeviceFeeder, and its options.
  bool NeedsFeeder() const;
  // The in-process producer's TLS (hybrid mode): plaintext with insecure, else hybrid_tls_cert
  // and hybrid_tls_key with tls_ca. INVALID_ARGUMENT naming the Python argument.
  absl::StatusOr<TlsConfig> HybridProducerTls() const;
  absl::StatusOr<DeviceOptions> ToDeviceOptions() const;
  // True on a CUDA device without to_float/mean/std of our own, dtype "auto" or "float32", tail
  // not "worker", for a pipeline that ends in a tail (augment/tail_split.h): the coordinator
  // places the tail on this client, the workers send uint8 HWC and the DeviceFeeder applies the
  // tail's folded normalization (DeviceTailFactory, trainer_client/device/tail_on_device.h),
  // giving float32 NCHW on the device; the job's output layout is then CHW.
  bool DeviceRunsTail(const v1::PipelineSpec& pipeline) const;
};

// "py-" + 16 hex digits of a fixed 64-bit FNV-1a hash of the spec's deterministic serialization,
// plus "-" + `run_id` when not empty (the Python side passes $TORCHELASTIC_RUN_ID, so that every
// rank of one torchrun agrees and a new torchrun gets a new job). The same spec gives the same
// name in every process, on every machine.
std::string DefaultJobName(const v1::JobSpec& spec, const std::string& run_id);

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_PYTHON_PYTHON_LOADER_CONFIG_H_
