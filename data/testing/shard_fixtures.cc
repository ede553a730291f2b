#include "data/testing/shard_fixtures.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "data/manifest.h"
#include "data/shard_reader.h"
#include "data/shard_writer.h"
#include "data/storage.h"
#include "data/storage_backend.h"
#include "gtest/gtest.h"

namespace stoker {
namespace testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(base != nullptr ? base : "/tmp", "/stoker-test-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code error;
  std::filesystem::remove_all(path_, error);
}

std::string SampleBytes(uint64_t i) {
  std::string bytes = absl::StrCat("sample-", i, "-");
  while (bytes.size() < 200 + i % 97) bytes += static_cast<char>('a' + (bytes.size() * 7 + i) % 26);
  return bytes;
}

void WriteTestShard(const std::string& path, uint64_t first, uint64_t count) {
  auto writer = ShardWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (uint64_t i = first; i < first + count; ++i) {
    const std::string data = SampleBytes(i);
    ASSERT_TRUE(
        (*writer)
            ->Add(absl::StrCat("k", i), static_cast<int64_t>(i % 10),
                  absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(data.data()), data.size()))
            .ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
}

std::string WriteTestDataset(const std::string& dir, int shards, uint64_t per_shard) {
  stoker::v1::ShardManifest manifest;
  manifest.set_version(1);
  for (int s = 0; s < shards; ++s) {
    const std::string name = absl::StrFormat("shard-%05d.stoker", s);
    WriteTestShard(dir + "/" + name, s * per_shard, per_shard);
    auto* shard = manifest.add_shards();
    shard->set_path(name);
    shard->set_records(per_shard);
    shard->set_bytes(std::filesystem::file_size(dir + "/" + name));
  }
  for (int c = 0; c < 10; ++c) manifest.add_class_names(absl::StrCat("c", c));
  const std::string path = dir + "/manifest.json";
  EXPECT_TRUE(WriteManifest(*Storage::FromEnvironment(), manifest, path).ok());
  return path;
}

void CorruptShardRecord(const std::string& path, uint64_t record) {
  auto file = OpenLocalFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  auto index = LoadStokerShardIndex(**file);
  ASSERT_TRUE(index.ok() && record < index->samples.size()) << path;
  const SampleLocation location = index->samples[record];
  std::string bytes = ReadFile(path);
  bytes[location.offset + location.length - 10] ^= 0x40;
  WriteFile(path, bytes);
}

void WriteTar(const std::string& path, const std::vector<TarEntry>& entries) {
  std::string out;
  for (const TarEntry& entry : entries) {
    char header[512] = {};
    std::snprintf(header, 100, "%s", entry.name.c_str());
    std::snprintf(header + 100, 8, "%07o", 0644);
    std::snprintf(header + 108, 8, "%07o", 0);
    std::snprintf(header + 116, 8, "%07o", 0);
    std::snprintf(header + 124, 12, "%011o", static_cast<unsigned>(entry.data.size()));
    std::snprintf(header + 136, 12, "%011o", 0);
    header[156] = '0';
    std::memcpy(header + 257, "ustar", 6);
    std::memcpy(header + 263, "00", 2);
    std::memset(header + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : header) sum += c;
    std::snprintf(header + 148, 8, "%06o", sum);
    out.append(header, 512);
    out += entry.data;
    out.append((512 - entry.data.size() % 512) % 512, '\0');
  }
  out.append(1024, '\0');
  WriteFile(path, out);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace testing
}  // namespace stoker
