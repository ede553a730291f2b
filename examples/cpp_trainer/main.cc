// A minimal "trainer": opens a Stoker job, loops over its epochs and computes the mean pixel of
// every batch (standing in for a training step).
//
//   stoker_cpp_trainer --coordinator=127.0.0.1:7070 [--job=NAME] [--epochs=2] [--rank=0
//                      --world-size=1] [--num-samples=1024]
//                      (--tls-cert=F --tls-key=F --tls-ca=F | --insecure)
//
// Without --job, a per-process job name is used (fine for one rank; ranks of one job must share
// a name). Only the public client API is used: trainer_client/loader.h (target stoker::client).

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "trainer_client/loader.h"

namespace {

struct Args {
  std::string coordinator = "127.0.0.1:7070";
  std::string job;  // empty: a name unique to this process (one rank only)
  unsigned long epochs = 2;
  unsigned long rank = 0;
  unsigned long world_size = 1;
  unsigned long num_samples = 1024;
  stoker::TlsConfig tls;  // The files, or insecure: one of them is required.
};

constexpr char kUsage[] =
    "usage: stoker_cpp_trainer [--coordinator=HOST:PORT] [--job=NAME] [--epochs=N]\n"
    "                          [--rank=R] [--world-size=W] [--num-samples=N]\n"
    "                          (--tls-cert=F --tls-key=F --tls-ca=F | --insecure)\n";

// Returns false (after printing why) on a bad argument.
bool ParseArgs(int argc, char** argv, Args* args, bool* help) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    char* end = nullptr;
    const unsigned long number = std::strtoul(value.c_str(), &end, 10);
    const bool is_number = !value.empty() && *end == '\0';
    if (name == "--help" || name == "-h") {
      *help = true;
    } else if (name == "--coordinator" && !value.empty()) {
      args->coordinator = value;
    } else if (name == "--job" && !value.empty()) {
      args->job = value;
    } else if (name == "--epochs" && is_number) {
      args->epochs = number;
    } else if (name == "--rank" && is_number) {
      args->rank = number;
    } else if (name == "--world-size" && is_number) {
      args->world_size = number;
    } else if (name == "--num-samples" && is_number) {
      args->num_samples = number;
    } else if (name == "--tls-cert" && !value.empty()) {
      args->tls.cert_file = value;
    } else if (name == "--tls-key" && !value.empty()) {
      args->tls.key_file = value;
    } else if (name == "--tls-ca" && !value.empty()) {
      args->tls.ca_file = value;
    } else if (name == "--insecure" && value.empty()) {
      args->tls.insecure = true;
    } else {
      std::fprintf(stderr, "stoker_cpp_trainer: bad argument '%s'\n%s", arg.c_str(), kUsage);
      return false;
    }
  }
  return true;
}

// The job: small synthetic images, converted to float32 in [0, 1] by the workers.
stoker::v1::JobSpec MakeSpec(const Args& args) {
  stoker::v1::JobSpec spec;
  stoker::v1::SyntheticSource* source = spec.mutable_dataset()->mutable_synthetic();
  source->set_num_samples(args.num_samples);
  source->set_height(64);
  source->set_width(64);
  source->set_channels(3);
  source->set_num_classes(10);
  spec.mutable_pipeline()->add_ops()->mutable_to_float();
  spec.mutable_pipeline()->set_output_layout(stoker::v1::LAYOUT_CHW);
  spec.set_batch_size(32);
  spec.set_seed(42);
  spec.set_shuffle(stoker::v1::SHUFFLE_MODE_GLOBAL);
  spec.set_world_size(static_cast<uint32_t>(args.world_size));
  spec.set_epochs(static_cast<uint32_t>(args.epochs));
  return spec;
}

double MeanPixel(const stoker::Batch& batch) {
  double sum = 0;
  size_t count = 0;
  if (auto floats = batch.elements<float>(); !floats.empty()) {
    for (float v : floats) sum += v;
    count = floats.size();
  } else {
    for (uint8_t v : batch.elements<uint8_t>()) sum += v / 255.0;
    count = batch.size_bytes();
  }
  return count > 0 ? sum / count : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  bool help = false;
  if (!ParseArgs(argc, argv, &args, &help)) return 2;
  if (help) {
    std::printf("%s", kUsage);
    return 0;
  }

  stoker::LoaderOptions options;
  options.coordinator_address = args.coordinator;
  // A job name is consumed once: reruns need a new one. Every rank of a job uses the same name.
  options.job_name = args.job.empty() ? "cpp-trainer-" + std::to_string(getpid()) : args.job;
  options.spec = MakeSpec(args);
  options.rank = static_cast<uint32_t>(args.rank);
  options.tls = args.tls;
  if (absl::Status status = options.Validate(); !status.ok()) {
    std::fprintf(stderr, "stoker_cpp_trainer: %s\n", status.ToString().c_str());
    return 2;
  }
  absl::StatusOr<std::unique_ptr<stoker::Loader>> loader = stoker::Loader::Open(options);
  if (!loader.ok()) {
    std::fprintf(stderr, "stoker_cpp_trainer: %s\n", loader.status().ToString().c_str());
    return 1;
  }
  std::printf("job %llu: %llu batches per epoch, %u epochs\n",
              static_cast<unsigned long long>((*loader)->job_id()),
              static_cast<unsigned long long>((*loader)->batches_per_epoch()), (*loader)->epochs());

  for (uint32_t e = 0; e < (*loader)->epochs(); ++e) {
    stoker::EpochRange epoch = (*loader)->Epoch();
    double mean_sum = 0;
    uint64_t batches = 0;
    for (const stoker::Batch& batch : epoch) {
      mean_sum += MeanPixel(batch);  // the "training step"
      ++batches;
    }
    if (!epoch.status().ok()) {
      std::fprintf(stderr, "stoker_cpp_trainer: %s\n", epoch.status().ToString().c_str());
      return 1;
    }
    std::printf("epoch %u: %llu batches, mean pixel %.4f\n", epoch.epoch(),
                static_cast<unsigned long long>(batches), batches ? mean_sum / batches : 0.0);
  }
  const stoker::LoaderStats stats = (*loader)->stats();
  std::printf("data wait %.1f%%, duplicates dropped %llu\n", 100 * stats.data_wait_fraction(),
              static_cast<unsigned long long>(stats.duplicates_dropped));
  return 0;
}
