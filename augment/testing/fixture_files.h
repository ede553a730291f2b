#ifndef STOKER_AUGMENT_TESTING_FIXTURE_FILES_H_
#define STOKER_AUGMENT_TESTING_FIXTURE_FILES_H_

// For tests: the bytes of the real photos Debian's packages ship (python3-skimage's data folder,
// python3-pil's test images), installed by scripts/install-deps.sh. A missing file fails the
// calling test, naming the package.

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace stoker {

inline std::vector<uint8_t> ReadFixtureFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good())
      << "cannot open " << path
      << " (python3-skimage or python3-pil, installed by scripts/install-deps.sh)";
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace stoker

#endif  // STOKER_AUGMENT_TESTING_FIXTURE_FILES_H_
