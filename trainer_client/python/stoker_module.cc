// The pybind11 glue of the Python module `stoker` (the C++ part, `stoker._stoker`): converts
// types and statuses, and nothing else. The Python side (stoker/loader.py) turns the DLPack
// capsules into DLPack producers (__dlpack__), and those into torch tensors or NumPy arrays.
//
// Zero copy: Batch.images_dlpack() hands out a DLManagedTensor (dlpack_abi.h) whose data is the
// received payload (Batch::data(): gathered once into one buffer when it arrived in pieces,
// wire/batch_payload.h) or the DeviceFeeder's output when converting; its manager context
// holds a reference to the Batch (or the converted tensor and its feeder), dropped by the
// deleter when the consumer frees the tensor.
//
// The GIL is released while blocking: Loader construction (OpenJob), next(), stop().
// A failed absl::Status raises what stoker.errors.error_from_status makes of its code and
// message (a stoker.StokerError subclass, stoker/errors.py).

#include <Python.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/coordinator_client.h"
#include "coordinator/coordinator_trace_client.h"
#include "data/dataset_io.h"
#include "jobspec/job_spec_args.h"
#include "trainer_client/batch.h"
#include "trainer_client/client_tail.h"
#include "trainer_client/device/device_feeder.h"
#include "trainer_client/device/gpu_utilization.h"
#include "trainer_client/device/tail_on_device.h"
#include "trainer_client/hybrid/hybrid_producer.h"
#include "trainer_client/loader.h"
#include "trainer_client/python/dlpack_abi.h"
#include "trainer_client/python/dlpack_capsule.h"
#include "trainer_client/python/dlpack_shapes.h"
#include "trainer_client/python/pipeline_binding.h"
#include "trainer_client/python/python_loader_config.h"

#if STOKER_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace py = pybind11;

namespace stoker {
namespace {

// ---- Status → exception -------------------------------------------------------------------

// stoker.errors.error_from_status, looked up once at import (the module is never unloaded).
py::object* error_from_status = nullptr;

[[noreturn]] void ThrowStatus(const absl::Status& status) {
  py::object error =
      (*error_from_status)(static_cast<int>(status.code()), std::string(status.message()));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw py::error_already_set();
}

// ---- Batch ----------------------------------------------------------------------------------

dlpack::DLDataType DlpackTypeOf(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_FLOAT32:
      return {dlpack::kDLFloat, 32, 1};
    case v1::DTYPE_FLOAT16:
      return {dlpack::kDLFloat, 16, 1};
    case v1::DTYPE_BFLOAT16:
      return {dlpack::kDLBfloat, 16, 1};
    default:
      return {dlpack::kDLUInt, 8, 1};
  }
}

// A DeviceFeeder output with the feeder it came from (destroyed after the tensor).
struct ConvertedTensor {
  std::shared_ptr<DeviceFeeder> feeder;
  DeviceTensor tensor;
};

// What Python sees as stoker._stoker.Batch. Immutable.
struct PyBatch {
  Batch batch;
  std::shared_ptr<ConvertedTensor> converted;  // null unless the loader converts

  const void* images_address() const {
    return converted ? static_cast<const void*>(converted->tensor.data()) : batch.data();
  }

  // Where the images are: the host, or the feeder's device.
  dlpack::DLDevice images_device() const {
    if (!converted) return {dlpack::kDLCPU, 0};
    const DeviceId device = converted->tensor.device();
    return {device.kind == DeviceKind::kCuda ? dlpack::kDLCUDA : dlpack::kDLCPU, device.index};
  }

  py::capsule ImagesDlpack() const {
    if (converted) {
      const absl::Span<const int64_t> shape = converted->tensor.shape();
      return MakeDlpackCapsule(converted->tensor.data(), images_device(), {dlpack::kDLFloat, 32, 1},
                               std::vector<int64_t>(shape.begin(), shape.end()), converted);
    }
    // Checked against the payload: no capsule views past the bytes received.
    absl::StatusOr<std::vector<int64_t>> shape = ImagesDlpackShape(batch);
    if (!shape.ok()) ThrowStatus(shape.status());
    return MakeDlpackCapsule(batch.data(), {dlpack::kDLCPU, 0}, DlpackTypeOf(batch.dtype()),
                             *std::move(shape), std::make_shared<const Batch>(batch));
  }

  // [N, num_classes] float32 soft labels (MixUp/CutMix).
  py::capsule SoftLabelsDlpack() const {
    absl::StatusOr<std::vector<int64_t>> shape = SoftLabelsDlpackShape(batch);
    if (!shape.ok()) ThrowStatus(shape.status());
    return MakeDlpackCapsule(batch.soft_labels().data(), {dlpack::kDLCPU, 0},
                             {dlpack::kDLFloat, 32, 1}, *std::move(shape),
                             std::make_shared<const Batch>(batch));
  }

  py::capsule LabelsDlpack() const {
    const absl::Span<const int64_t> labels = batch.labels();
    return MakeDlpackCapsule(labels.data(), {dlpack::kDLCPU, 0}, {dlpack::kDLInt, 64, 1},
                             {static_cast<int64_t>(labels.size())},
                             std::make_shared<const Batch>(batch));
  }
};

// ---- Loader ---------------------------------------------------------------------------------

// Hybrid mode's in-process producer for the loader `options` (their client id). It reads
// datasets as the trainer process would, through a storage of the environment alone (no data
// roots, no cache) and a pool of open shards of its own.
absl::StatusOr<std::unique_ptr<HybridProducer>> StartHybridProducer(
    const PythonLoaderConfig& config, const LoaderOptions& options) {
  ASSIGN_OR_RETURN(TlsConfig tls, config.HybridProducerTls());
  return HybridProducer::Start(options.coordinator_address, options.client_id,
                               config.hybrid_threads, tls, DatasetIo::FromEnvironment());
}

// The loader's DeviceFeeder when it converts (null otherwise). When the device runs the job's
// tail, with the normalization DeviceTailFactory folded from it inside Loader::Open (`folded`).
absl::StatusOr<std::shared_ptr<DeviceFeeder>> CreateFeeder(
    const PythonLoaderConfig& config, bool device_tail,
    const std::optional<DeviceNormalization>& folded) {
  if (!config.NeedsFeeder()) return nullptr;
  ASSIGN_OR_RETURN(DeviceOptions options, config.ToDeviceOptions());
  if (device_tail) {
    if (!folded.has_value()) {
      return absl::FailedPreconditionError(
          "device: the coordinator kept the pipeline's to_float/normalize tail on the workers "
          "(a coordinator that predates tail placement?); the device takes uint8 batches: end "
          "the pipeline before to_float and pass convert=ConvertOptions(mean=..., std=...)");
    }
    options.mean = folded->mean;
    options.std = folded->std;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<DeviceFeeder> feeder, DeviceFeeder::Create(options));
  return std::shared_ptr<DeviceFeeder>(std::move(feeder));
}

// Thread-safe (as Loader and DeviceFeeder are).
class PyLoader {
 public:
  static std::shared_ptr<PyLoader> Create(const PythonLoaderConfig& config) {
    absl::StatusOr<LoaderOptions> options = config.ToLoaderOptions();
    if (!options.ok()) ThrowStatus(options.status());
    const bool device_tail = config.DeviceRunsTail(options->spec.pipeline());
    // Where DeviceTailFactory leaves the placed tail's normalization for the feeder.
    auto folded = std::make_shared<std::optional<DeviceNormalization>>();
    std::unique_ptr<HybridProducer> hybrid;
    absl::StatusOr<std::unique_ptr<Loader>> loader;
    {
      py::gil_scoped_release release;
      if (config.hybrid_threads > 0) {
        absl::StatusOr<std::unique_ptr<HybridProducer>> started =
            StartHybridProducer(config, *options);
        if (started.ok()) {
          hybrid = *std::move(started);
        } else {
          loader = started.status();
        }
      }
      if (config.hybrid_threads == 0 || hybrid != nullptr) {
        LoaderEnv env;
        env.tail = device_tail ? DeviceTailFactory(folded) : ClientTailFactory();
        // Heartbeats then carry the GPU's utilization where NVML is present.
        if (const std::string bus_id = CudaPciBusIdOf(config.device); !bus_id.empty()) {
          env.gpu_utilization = NvmlGpuUtilizationSampler::Open(bus_id);
        }
        loader = Loader::Open(*options, std::move(env));
      }
    }
    if (!loader.ok()) ThrowStatus(loader.status());
    absl::StatusOr<std::shared_ptr<DeviceFeeder>> feeder =
        CreateFeeder(config, device_tail, *folded);
    if (!feeder.ok()) ThrowStatus(feeder.status());
    return std::shared_ptr<PyLoader>(
        new PyLoader(std::move(hybrid), std::move(*loader), *std::move(feeder), *options));
  }

  // REQUIRES: the GIL is released. The batch, converted when the loader converts.
  absl::StatusOr<std::shared_ptr<PyBatch>> Wrap(const Batch& batch) const {
    auto wrapped = std::make_shared<PyBatch>();
    wrapped->batch = batch;
    if (feeder_ != nullptr) {
      // A traced batch's copy to the GPU (and its conversion there) is its h2d span.
      const bool traced = device() != "cpu" && loader_->Traced(batch);
      const int64_t copy_start = traced ? loader_->TraceClockNanos() : 0;
      absl::StatusOr<DeviceTensor> tensor = feeder_->Convert(batch);
      if (!tensor.ok()) return tensor.status();
#if STOKER_HAVE_CUDA
      // torch reads the tensor on its own stream, with no event to wait on: finish here.
      if (tensor->ready_event() != nullptr) {
        const cudaError_t error =
            cudaEventSynchronize(static_cast<cudaEvent_t>(tensor->ready_event()));
        if (error != cudaSuccess) {
          return absl::InternalError(
              absl::StrCat("cudaEventSynchronize: ", cudaGetErrorString(error)));
        }
      }
#endif
      if (traced) loader_->RecordDeviceCopy(batch, copy_start, loader_->TraceClockNanos());
      wrapped->converted = std::make_shared<ConvertedTensor>();
      wrapped->converted->feeder = feeder_;
      wrapped->converted->tensor = *std::move(tensor);
    }
    return wrapped;
  }

  std::shared_ptr<PyBatch> Next() {
    absl::StatusOr<std::shared_ptr<PyBatch>> result;
    {
      py::gil_scoped_release release;
      absl::StatusOr<Batch> batch = loader_->Next();
      if (batch.ok()) {
        result = Wrap(*batch);
      } else {
        result = batch.status();
      }
    }
    if (!result.ok()) ThrowStatus(result.status());
    return *std::move(result);
  }

  void Stop() {
    py::gil_scoped_release release;
    if (feeder_ != nullptr) feeder_->Stop();
    loader_->Stop();
    if (hybrid_ != nullptr) hybrid_->Stop();
  }

  // The job's batch timeline as Chrome Trace JSON (coordinator/coordinator_trace_client.h), with
  // the trainer's own certificate: StartTrace, `seconds` of this loader's batches, then every
  // GetTrace page.
  std::string Trace(uint32_t seconds, uint32_t sample_one_in) {
    absl::StatusOr<std::string> json;
    {
      py::gil_scoped_release release;
      const std::unique_ptr<CoordinatorClient> coordinator = NewGrpcCoordinatorClient(
          options_.coordinator_address, options_.rpc_timeout, options_.tls);
      json = CollectTraceJson(*coordinator, CollectTraceOptions{.job_id = loader_->job_id(),
                                                                .seconds = seconds,
                                                                .sample_one_in = sample_one_in});
    }
    if (!json.ok()) ThrowStatus(json.status());
    return *std::move(json);
  }

  Loader& loader() { return *loader_; }
  const std::string& job_name() const { return options_.job_name; }
  std::string device() const { return feeder_ ? feeder_->options().device : "cpu"; }

  py::dict Stats() const {
    const LoaderStats stats = loader_->stats();
    py::dict d;
    d["batches_received"] = stats.batches_received;
    d["samples_received"] = stats.samples_received;
    d["bytes_received"] = stats.bytes_received;
    d["batches_delivered"] = stats.batches_delivered;
    d["duplicates_dropped"] = stats.duplicates_dropped;
    d["invalid_dropped"] = stats.invalid_dropped;
    d["streams_opened"] = stats.streams_opened;
    d["stream_failures"] = stats.stream_failures;
    d["corrupt_payloads"] = stats.corrupt_payloads;
    d["decode_seconds"] = stats.decode_seconds;
    d["failed"] = stats.failed;
    d["wait_seconds"] = stats.wait_seconds;
    d["step_seconds"] = stats.step_seconds;
    d["data_wait_fraction"] = stats.data_wait_fraction();
    d["budget_bytes"] = stats.budget_bytes;
    d["max_committed_bytes"] = stats.max_committed_bytes;
    d["max_stall_extra"] = stats.max_stall_extra;
    d["max_streams"] = stats.max_streams;
    d["overdue_reported"] = stats.overdue_reported;
    py::list workers;
    for (const WorkerReceiveStats& w : stats.workers) {
      py::dict wd;
      wd["worker_id"] = w.worker_id;
      wd["address"] = w.address;
      wd["batches"] = w.batches;
      wd["samples"] = w.samples;
      wd["bytes"] = w.bytes;
      wd["wire_bytes"] = w.wire_bytes;
      wd["produce_seconds"] = w.produce_seconds;
      wd["share"] = w.share;
      workers.append(wd);
    }
    d["workers"] = workers;
    return d;
  }

 private:
  PyLoader(std::unique_ptr<HybridProducer> hybrid, std::unique_ptr<Loader> loader,
           std::shared_ptr<DeviceFeeder> feeder, LoaderOptions options)
      : hybrid_(std::move(hybrid)),
        loader_(std::move(loader)),
        feeder_(std::move(feeder)),
        options_(std::move(options)) {}

  // Declared before loader_: destroyed after it, so the loader's streams end first.
  std::unique_ptr<HybridProducer> hybrid_;
  std::unique_ptr<Loader> loader_;
  std::shared_ptr<DeviceFeeder> feeder_;
  const LoaderOptions options_;
};

// The rest of the current epoch, as a Python iterator. Not thread-safe (like EpochRange).
class PyEpochIterator {
 public:
  explicit PyEpochIterator(std::shared_ptr<PyLoader> owner)
      : owner_(std::move(owner)), range_(new EpochRange(owner_->loader().Epoch())) {}

  uint32_t epoch() const { return range_->epoch(); }

  std::shared_ptr<PyBatch> Next() {
    if (done_) throw py::stop_iteration();
    absl::StatusOr<std::shared_ptr<PyBatch>> result = nullptr;
    {
      py::gil_scoped_release release;
      if (!it_.has_value()) {
        it_ = range_->begin();
      } else {
        ++*it_;
      }
      if (*it_ == range_->end()) {
        done_ = true;
      } else {
        result = owner_->Wrap(**it_);
      }
    }
    if (done_) {
      if (!range_->status().ok()) ThrowStatus(range_->status());
      throw py::stop_iteration();
    }
    if (!result.ok()) ThrowStatus(result.status());
    return *std::move(result);
  }

 private:
  std::shared_ptr<PyLoader> owner_;
  std::unique_ptr<EpochRange> range_;
  std::optional<EpochRange::Iterator> it_;
  bool done_ = false;
};

// ---- Module ---------------------------------------------------------------------------------

void DefineConfig(py::module_& m) {
  py::class_<PythonLoaderConfig>(m, "LoaderConfig",
                                 "The arguments of stoker.Loader (python_loader_config.h).")
      .def(py::init<>())
      .def_readwrite("coordinator", &PythonLoaderConfig::coordinator)
      .def_readwrite("tls_cert", &PythonLoaderConfig::tls_cert)
      .def_readwrite("tls_key", &PythonLoaderConfig::tls_key)
      .def_readwrite("tls_ca", &PythonLoaderConfig::tls_ca)
      .def_readwrite("hybrid_tls_cert", &PythonLoaderConfig::hybrid_tls_cert)
      .def_readwrite("hybrid_tls_key", &PythonLoaderConfig::hybrid_tls_key)
      .def_readwrite("bearer_token_file", &PythonLoaderConfig::bearer_token_file)
      .def_readwrite("insecure", &PythonLoaderConfig::insecure)
      .def_readwrite("manifest", &PythonLoaderConfig::manifest)
      .def_readwrite("paths", &PythonLoaderConfig::paths)
      .def_readwrite("fields", &PythonLoaderConfig::fields)
      .def_readwrite("num_samples", &PythonLoaderConfig::num_samples)
      .def_readwrite("height", &PythonLoaderConfig::height)
      .def_readwrite("width", &PythonLoaderConfig::width)
      .def_readwrite("channels", &PythonLoaderConfig::channels)
      .def_readwrite("num_classes", &PythonLoaderConfig::num_classes)
      .def_readwrite("pipeline", &PythonLoaderConfig::pipeline)
      .def_readwrite("layout", &PythonLoaderConfig::layout)
      .def_readwrite("dtype", &PythonLoaderConfig::dtype)
      .def_readwrite("tail", &PythonLoaderConfig::tail)
      .def_readwrite("batch_size", &PythonLoaderConfig::batch_size)
      .def_readwrite("rank", &PythonLoaderConfig::rank)
      .def_readwrite("world_size", &PythonLoaderConfig::world_size)
      .def_readwrite("epochs", &PythonLoaderConfig::epochs)
      .def_readwrite("seed", &PythonLoaderConfig::seed)
      .def_readwrite("shuffle", &PythonLoaderConfig::shuffle)
      .def_readwrite("shuffle_block", &PythonLoaderConfig::shuffle_block)
      .def_readwrite("shuffle_window_shards", &PythonLoaderConfig::shuffle_window_shards)
      .def_readwrite("sweep_seed", &PythonLoaderConfig::sweep_seed)
      .def_readwrite("drop_last", &PythonLoaderConfig::drop_last)
      .def_readwrite("decoded_cache", &PythonLoaderConfig::decoded_cache)
      .def_readwrite("max_bad_sample_fraction", &PythonLoaderConfig::max_bad_sample_fraction)
      .def_readwrite("job_name", &PythonLoaderConfig::job_name)
      .def_readwrite("run_id", &PythonLoaderConfig::run_id)
      .def_readwrite("prefetch_bytes", &PythonLoaderConfig::prefetch_bytes)
      .def_readwrite("device", &PythonLoaderConfig::device)
      .def_readwrite("to_float", &PythonLoaderConfig::to_float)
      .def_readwrite("mean", &PythonLoaderConfig::mean)
      .def_readwrite("std", &PythonLoaderConfig::std)
      .def_readwrite("resident_batches", &PythonLoaderConfig::resident_batches)
      .def_readwrite("ordered", &PythonLoaderConfig::ordered)
      .def_readwrite("compression", &PythonLoaderConfig::compression)
      .def_readwrite("hybrid_threads", &PythonLoaderConfig::hybrid_threads)
      .def_readwrite("resume_tokens", &PythonLoaderConfig::resume_tokens)
      .def(
          "validate",
          [](const PythonLoaderConfig& config) {
            absl::StatusOr<LoaderOptions> options = config.ToLoaderOptions();
            if (!options.ok()) ThrowStatus(options.status());
            if (config.hybrid_threads > 0) {
              absl::StatusOr<TlsConfig> hybrid_tls = config.HybridProducerTls();
              if (!hybrid_tls.ok()) ThrowStatus(hybrid_tls.status());
            }
            // A bad device or conversion raises here; the placed tail is not known yet.
            absl::StatusOr<std::shared_ptr<DeviceFeeder>> feeder =
                CreateFeeder(config, /*device_tail=*/false, std::nullopt);
            if (!feeder.ok()) ThrowStatus(feeder.status());
          },
          "Raises what opening a loader with these arguments would raise before reaching the "
          "coordinator (bad arguments, an unusable device).")
      .def("job_spec_text",
           [](const PythonLoaderConfig& config) {
             absl::StatusOr<v1::JobSpec> spec = config.ToJobSpec();
             if (!spec.ok()) ThrowStatus(spec.status());
             return spec->DebugString();
           })
      .def("default_job_name", [](const PythonLoaderConfig& config) {
        absl::StatusOr<v1::JobSpec> spec = config.ToJobSpec();
        if (!spec.ok()) ThrowStatus(spec.status());
        return DefaultJobName(*spec, config.run_id);
      });
}

void DefineBatch(py::module_& m) {
  py::class_<PyBatch, std::shared_ptr<PyBatch>>(m, "Batch",
                                                "A received batch (immutable; shares memory).")
      .def("images_dlpack", &PyBatch::ImagesDlpack,
           "A DLPack capsule over the images (the payload itself, or the converted tensor).")
      .def("labels_dlpack", &PyBatch::LabelsDlpack, "A DLPack capsule over the int64 labels.")
      .def("soft_labels_dlpack", &PyBatch::SoftLabelsDlpack,
           "A DLPack capsule over the float32 [N, num_classes] soft labels (MixUp/CutMix; only "
           "when num_classes > 0).")
      .def_property_readonly("num_classes", [](const PyBatch& b) { return b.batch.num_classes(); })
      .def_property_readonly(
          "_payload_address",
          [](const PyBatch& b) { return reinterpret_cast<uintptr_t>(b.batch.data()); })
      .def_property_readonly(
          "_images_address",
          [](const PyBatch& b) { return reinterpret_cast<uintptr_t>(b.images_address()); })
      .def_property_readonly("images_device",
                             [](const PyBatch& b) {
                               const dlpack::DLDevice device = b.images_device();
                               return std::make_pair(static_cast<int>(device.device_type),
                                                     static_cast<int>(device.device_id));
                             })
      .def_property_readonly("converted", [](const PyBatch& b) { return b.converted != nullptr; })
      .def_property_readonly("shape",
                             [](const PyBatch& b) {
                               const absl::Span<const int64_t> s = b.batch.shape();
                               return std::vector<int64_t>(s.begin(), s.end());
                             })
      .def_property_readonly(
          "dtype", [](const PyBatch& b) { return std::string(DTypeName(b.batch.dtype())); })
      .def_property_readonly(
          "layout",
          [](const PyBatch& b) { return b.batch.layout() == v1::LAYOUT_CHW ? "chw" : "hwc"; })
      .def_property_readonly("labels",
                             [](const PyBatch& b) {
                               const absl::Span<const int64_t> s = b.batch.labels();
                               return std::vector<int64_t>(s.begin(), s.end());
                             })
      .def_property_readonly("sample_indices",
                             [](const PyBatch& b) {
                               const absl::Span<const uint64_t> s = b.batch.sample_indices();
                               return std::vector<uint64_t>(s.begin(), s.end());
                             })
      .def_property_readonly("num_samples", [](const PyBatch& b) { return b.batch.num_samples(); })
      .def_property_readonly("field_names",
                             [](const PyBatch& b) {
                               std::vector<std::string> names;
                               for (size_t c = 0; c < b.batch.num_fields(); ++c) {
                                 names.push_back(b.batch.field_name(c));
                               }
                               return names;
                             })
      .def(
          "field_values",
          [](const PyBatch& b, size_t column) {
            if (column >= b.batch.num_fields()) {
              throw py::index_error(
                  absl::StrCat("field column ", column, " of ", b.batch.num_fields()));
            }
            py::list values;
            for (size_t i = 0; i < b.batch.num_samples(); ++i) {
              const absl::Span<const uint8_t> value = b.batch.field_value(column, i);
              values.append(py::bytes(reinterpret_cast<const char*>(value.data()), value.size()));
            }
            return values;
          },
          py::arg("column"), "Each sample's value of field column `column`, as bytes (copies).")
      .def_property_readonly("size_bytes", [](const PyBatch& b) { return b.batch.size_bytes(); })
      .def_property_readonly("job_id", [](const PyBatch& b) { return b.batch.job_id(); })
      .def_property_readonly("epoch", [](const PyBatch& b) { return b.batch.epoch(); })
      .def_property_readonly("batch_index", [](const PyBatch& b) { return b.batch.batch_index(); })
      .def_property_readonly("worker_id", [](const PyBatch& b) { return b.batch.worker_id(); })
      .def_property_readonly("produce_seconds",
                             [](const PyBatch& b) { return b.batch.produce_seconds(); });
}

void DefineLoader(py::module_& m) {
  py::class_<PyEpochIterator>(m, "EpochIterator", "The rest of the current epoch's batches.")
      .def("__iter__", [](PyEpochIterator& it) -> PyEpochIterator& { return it; })
      .def("__next__", &PyEpochIterator::Next)
      .def_property_readonly("epoch", &PyEpochIterator::epoch);

  py::class_<PyLoader, std::shared_ptr<PyLoader>>(m, "Loader", "stoker::Loader (loader.h).")
      .def(py::init(&PyLoader::Create), py::arg("config"))
      .def("next", &PyLoader::Next,
           "The next batch (across epochs); EndOfJobError after the last one.")
      .def(
          "epoch",
          [](std::shared_ptr<PyLoader> self) { return new PyEpochIterator(std::move(self)); },
          "An iterator over the rest of the current epoch.")
      .def("stop", &PyLoader::Stop)
      .def("stats", &PyLoader::Stats)
      .def("trace", &PyLoader::Trace, py::arg("seconds"), py::arg("sample_one_in") = 0,
           "The job's batch timeline for `seconds` as Chrome Trace Event JSON (str).")
      .def(
          "resume_token",
          [](PyLoader& l) {
            std::string token;
            {
              py::gil_scoped_release release;
              token = l.loader().ResumeToken();
            }
            return py::bytes(token);
          },
          "Loader::ResumeToken(): where this rank stands (bytes), for a checkpoint.")
      .def_property_readonly("job_name", &PyLoader::job_name)
      .def_property_readonly("device", &PyLoader::device)
      .def_property_readonly("job_id", [](PyLoader& l) { return l.loader().job_id(); })
      .def_property_readonly("client_id", [](PyLoader& l) { return l.loader().client_id(); })
      .def_property_readonly("epochs", [](PyLoader& l) { return l.loader().epochs(); })
      .def_property_readonly("current_epoch",
                             [](PyLoader& l) { return l.loader().current_epoch(); })
      .def_property_readonly("batches_per_epoch",
                             [](PyLoader& l) { return l.loader().batches_per_epoch(); })
      .def_property_readonly("batch_bytes", [](PyLoader& l) { return l.loader().batch_bytes(); })
      .def_property_readonly("batch_shape", [](PyLoader& l) {
        const absl::Span<const int64_t> s = l.loader().batch_shape();
        return std::vector<int64_t>(s.begin(), s.end());
      });
}

}  // namespace
}  // namespace stoker

PYBIND11_MODULE(_stoker, m) {
  m.doc() = "Stoker's trainer client (C++ part); use the `stoker` package.";
  stoker::error_from_status =
      new py::object(py::module_::import("stoker.errors").attr("error_from_status"));
  stoker::DefineConfig(m);
  stoker::DefineBatch(m);
  stoker::DefineLoader(m);
  stoker::DefinePipelineFunctions(m, &stoker::ThrowStatus);
#if STOKER_HAVE_CUDA
  m.attr("HAVE_CUDA") = true;
#else
  m.attr("HAVE_CUDA") = false;
#endif
}
