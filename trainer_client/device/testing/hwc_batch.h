#ifndef STOKER_TRAINER_CLIENT_DEVICE_TESTING_HWC_BATCH_H_
#define STOKER_TRAINER_CLIENT_DEVICE_TESTING_HWC_BATCH_H_

// A batch as the device path receives it, made in memory for tests and the h2d benchmark:
// [n, h, w, c] HWC, labels 0..n-1, byte i of the payload = (i + seed) mod 251.

#include <memory>
#include <string>
#include <utility>

#include "stoker/v1/worker.pb.h"
#include "trainer_client/batch.h"

namespace stoker {

inline Batch MakeHwcBatch(int n, int h, int w, int c, int seed = 0,
                          v1::DType dtype = v1::DTYPE_UINT8) {
  auto message = std::make_shared<v1::BatchMessage>();
  v1::BatchHeader* header = message->mutable_header();
  for (int dim : {n, h, w, c}) header->add_shape(dim);
  header->set_dtype(dtype);
  header->set_layout(v1::LAYOUT_HWC);
  for (int i = 0; i < n; ++i) header->add_labels(i);
  std::string& data = *message->mutable_data();
  data.resize(static_cast<size_t>(n) * h * w * c);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i + seed) % 251);
  return Batch(std::move(message));
}

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_DEVICE_TESTING_HWC_BATCH_H_
