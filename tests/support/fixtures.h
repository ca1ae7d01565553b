// Locating the shared binlog fixtures (../shared/fixtures in a developer checkout)
// from tests, and skipping fixture tests cleanly where they are absent (a user's
// clone has no shared/ folder).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "canal/common/status.h"

namespace canal::testing {

// Bodies (after the 19-byte header, before the 4-byte CRC32) of the events of
// `type` in a CRC32 binlog's bytes, found by walking the event sizes; stops at
// the first event that does not fit. For tests that pick raw events out.
std::vector<std::string> EventBodiesOfType(const std::string& file, uint8_t type);

// The shared/ folder: $CANAL_SHARED_DIR when set and non-empty, else the
// CANAL_SHARED_DIR compile definition. "" when that folder does not exist.
std::string SharedDir();

// SharedDir()/fixtures/binlog/<rel>; "" when SharedDir() is "".
std::string FixturePath(std::string_view rel);

// True when SharedDir()/fixtures/binlog exists.
bool FixturesAvailable();

// Reads a whole file as bytes. IOError naming the path when it cannot.
Status ReadFileToString(const std::string& path, std::string* out);

}  // namespace canal::testing

// First statement of a fixture test: skips it (with the reason) when the shared
// fixtures are not there.
#define CANAL_REQUIRE_FIXTURES()                                                 \
  do {                                                                           \
    if (!::canal::testing::FixturesAvailable()) {                                \
      GTEST_SKIP() << "../shared/fixtures not found (set CANAL_SHARED_DIR); "    \
                      "fixture tests need the developer checkout";               \
    }                                                                            \
  } while (0)
