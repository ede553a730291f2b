// main() of a corpus replay (CTest label fuzz): feeds every file under the given folders (and
// every file given directly) to the target's LLVMFuzzerTestOneInput, in sorted order, one at a
// time. Fails when it found no file at all, so an empty or misnamed corpus cannot pass. A bug in
// the target shows as a crash or a sanitizer report (in build-asan) naming the input last printed.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_input.h"

namespace {

std::vector<std::string> CorpusFiles(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path().string());
      }
    } else if (std::filesystem::is_regular_file(path)) {
      files.push_back(path.string());
    } else {
      std::cerr << "replay: no such file or folder: " << path << "\n";
      std::exit(2);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> files = CorpusFiles(argc, argv);
  if (files.empty()) {
    std::cerr << "replay: no corpus files under the given paths\n";
    return 2;
  }
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::cerr << "replay: " << file << " (" << bytes.size() << " bytes)\n";
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::cout << "replayed " << files.size() << " inputs\n";
  return 0;
}
