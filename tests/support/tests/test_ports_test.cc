// The tests' port table (support/test_ports.h): blocks that never overlap,
// and no test that binds a port outside it.
#include "support/test_ports.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace canal::testing {
namespace {

static_assert(TestPort("server_e2e") == 13471);
static_assert(TestPort("server_e2e", 15) == 13486);

TEST(TestPorts, BlocksDoNotOverlapAndHaveNames) {
  for (size_t i = 0; i < std::size(kPortBlocks); ++i) {
    const PortBlock& a = kPortBlocks[i];
    EXPECT_FALSE(a.name.empty());
    EXPECT_GT(a.count, 0) << a.name;
    EXPECT_FALSE(a.users.empty()) << a.name << " says who uses it";
    EXPECT_LE(uint32_t{a.first} + a.count, 65536u) << a.name;
    // Clear of the ports our programs default to (11111, 11112) and of the
    // ephemeral range the kernel hands out (32768 and up).
    EXPECT_GT(a.first, 11112) << a.name;
    EXPECT_LT(uint32_t{a.first} + a.count, 32768u) << a.name;
    for (size_t j = 0; j < i; ++j) {
      const PortBlock& b = kPortBlocks[j];
      EXPECT_NE(a.name, b.name) << "two blocks named " << a.name;
      const bool apart = a.first + a.count <= b.first || b.first + b.count <= a.first;
      EXPECT_TRUE(apart) << a.name << " [" << a.first << ", " << a.first + a.count << ") overlaps " << b.name
                         << " [" << b.first << ", " << b.first + b.count << ")";
    }
  }
}

// A port written as a number in a test (not through TestPort) is one the
// table does not know of: two suites could take it at once.
std::vector<std::string> LiteralPortsIn(const std::filesystem::path& file) {
  static const std::regex kLiteral(
      R"((k\w*Ports?\w*(\[\d*\])?\s*=\s*\{?\s*\d{4,5}\b)|(Suite<\s*\d{4,5}\s*>)|(StartServer\(\s*\d{4,5}\s*\)))");
  std::vector<std::string> found;
  std::ifstream in(file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const size_t comment = line.find("//");
    const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
    if (std::regex_search(code, kLiteral)) found.push_back(file.string() + ":" + std::to_string(n) + ": " + line);
  }
  return found;
}

TEST(TestPorts, NoTestDeclaresALiteralPort) {
  const std::filesystem::path tests = std::filesystem::path(CANAL_SOURCE_DIR) / "tests";
  ASSERT_TRUE(std::filesystem::is_directory(tests)) << tests;
  std::vector<std::string> found;
  size_t scanned = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(tests)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
    if (entry.path().filename() == "test_ports.h" || entry.path().filename() == "test_ports_test.cc") continue;
    ++scanned;
    for (std::string& f : LiteralPortsIn(entry.path())) found.push_back(std::move(f));
  }
  EXPECT_GT(scanned, 100u) << "the scan found too few test files under " << tests;
  std::ostringstream all;
  for (const std::string& f : found) all << "\n  " << f;
  EXPECT_TRUE(found.empty()) << "ports written as numbers; take them from support/test_ports.h (TestPort):"
                             << all.str();
}

TEST(TestPorts, TheScanSeesEachFormOfALiteralPort) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "canal_test_ports_scan.cc";
  {
    std::ofstream out(file);
    out << "constexpr uint16_t kSandboxPort = 14001;\n"
           "constexpr uint16_t kServerPorts[2] = {14002, 14003};\n"
           "class S : public ServerSuite<14004> {};\n"
           "  StartServer(14005);\n"
           "constexpr uint16_t kFine = TestPort(\"hostile\", 1);\n"
           "// ServerSuite<14006> in a comment is fine\n";
  }
  EXPECT_EQ(LiteralPortsIn(file).size(), 4u);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace canal::testing
