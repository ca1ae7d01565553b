// Helpers shared by the meta tests: a scratch directory and sample values.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/common/log_position.h"
#include "canal/meta/file_meta_manager.h"
#include "canal/meta/memory_meta_manager.h"
#include "canal/meta/meta_file.h"
#include "canal/meta/meta_types.h"

namespace canal::meta::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/canal_meta_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << pattern;
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The JSON of meta.dat's newest state, in either form (canal/meta/meta_file.h).
inline std::string ReadMetaJson(const std::string& path) {
  MetaFileContents contents;
  Status s = ReadMetaFile(path, &contents);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return contents.json;
}

// A meta.dat as Canal writes it: client 1001 of "example" at mysql-bin.000004:13885.
inline const std::string kCanalMetaFile =
    R"({"clientDatas":[{"clientIdentity":{"clientId":1001,"destination":"example","filter":""},)"
    R"("cursor":{"identity":{"slaveId":-1,"sourceAddress":{"address":"127.0.0.1","port":3306}},)"
    R"("postion":{"gtid":"","included":false,"journalName":"mysql-bin.000004","position":13885,)"
    R"("serverId":1,"timestamp":1591600659000}}}],"destination":"example"})";

// A destination whose file is corrupt: every call fails, naming the file.
inline void ExpectCorruptDestination(MetaManager* m, const std::string& path) {
  std::vector<ClientIdentity> clients;
  Status s = m->ListClients("example", &clients);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  EXPECT_TRUE(m->Subscribe(ClientIdentity{"example", 1001, ""}).IsCorruption());
  EXPECT_TRUE(m->Flush("example").IsCorruption());
}

inline void WriteFile(const std::string& path, const std::string& contents) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

inline LogPosition Pos(const std::string& file, uint64_t offset, int64_t ts = 1591600659000) {
  LogPosition p;
  p.journal_name = file;
  p.position = offset;
  p.server_id = 1;
  p.timestamp_ms = ts;
  return p;
}

// Canal's sample cursor (the one in kCanalMetaFile): mysql-bin.000004:13885
// of server 1, read through 127.0.0.1:3306 as slaveId -1.
inline LogPosition CanalPosition() { return Pos("mysql-bin.000004", 13885, 1591600659000); }
inline LogIdentity CanalIdentity() { return LogIdentity{-1, "127.0.0.1", 3306}; }

// CanalPosition() and CanalIdentity() as Canal's ZooKeeper cursor node, byte
// for byte (CANAL_PROTOCOL.md "ZooKeeper layout").
inline constexpr char kCanalCursor[] =
    R"({"@type":"com.alibaba.otter.canal.protocol.position.LogPosition","identity":{"slaveId":-1,)"
    R"("sourceAddress":{"address":"127.0.0.1","port":3306}},"postion":{"gtid":"","included":false,)"
    R"("journalName":"mysql-bin.000004","position":13885,"serverId":1,"timestamp":1591600659000}})";

inline PositionRange Range(uint64_t from, uint64_t to) {
  PositionRange r;
  r.start = Pos("mysql-bin.000004", from);
  r.end = Pos("mysql-bin.000004", to);
  r.ack = r.end;
  return r;
}

inline ClientIdentity Client(int16_t id = 1001, const std::string& destination = "example",
                             const std::string& filter = "") {
  return ClientIdentity{destination, id, filter};
}

// A MetaManager back end for parameterised tests: `make` builds one keeping
// its files (if any) under the given directory.
struct BackEnd {
  std::string name;
  std::function<std::unique_ptr<MetaManager>(const std::string& dir)> make;
};

// Every back end that runs without a server (ZooKeeper's has its own suite).
inline auto LocalBackEnds() {
  return ::testing::Values(BackEnd{"Memory", [](const std::string&) -> std::unique_ptr<MetaManager> {
                                     return std::make_unique<MemoryMetaManager>();
                                   }},
                           BackEnd{"File", [](const std::string& dir) -> std::unique_ptr<MetaManager> {
                                     return std::make_unique<FileMetaManager>(
                                         FileMetaOptions{dir, std::chrono::milliseconds(1000)});
                                   }});
}

inline std::string BackEndName(const ::testing::TestParamInfo<BackEnd>& info) { return info.param.name; }

// A started manager of the parameter's back end with Client() subscribed.
class BackEndTest : public ::testing::TestWithParam<BackEnd> {
 protected:
  void SetUp() override {
    meta_ = GetParam().make(dir_.path());
    ASSERT_TRUE(meta_->Start().ok());
    ASSERT_TRUE(meta_->Subscribe(client_).ok());
  }
  void TearDown() override { EXPECT_TRUE(meta_->Stop().ok()); }

  ScratchDir dir_;
  std::unique_ptr<MetaManager> meta_;
  ClientIdentity client_ = Client();
};

}  // namespace canal::meta::testing
