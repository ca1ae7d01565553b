// FLOAT and DOUBLE text exactly as Canal's JVM prints them: Java's
// String.valueOf(float) / String.valueOf(double) of JDK 8-18 (the FloatingDecimal
// algorithm; JDK 19 switched to a shortest-digits one). Canal builds its value
// strings that way, so consumers comparing text with Canal's see the same bytes.
//
// That algorithm is not always the shortest round-trip form ("2.82879384806159008E17",
// float 1.0E10 as "1.0E10" but 1.23456792E8 with 9 digits): a shortest-digits
// formatter plus Java's layout does not match it, so this is a reimplementation
// of its digit generation, checked against a real JVM on a million values
// (tests/render/java_float_text_test.cc).
//
// Pure functions, no allocation, thread-safe.
#pragma once

#include <cstddef>

namespace canal::render {

// Longest text either function writes ("-1.23456789012345678E-308" and the like).
inline constexpr size_t kJavaFloatTextMax = 32;

// Writes the Java text of `v` at `out` (room for kJavaFloatTextMax chars, no NUL);
// returns the end. NaN, Infinity and -Infinity print as Java prints them.
char* WriteJavaDoubleText(double v, char* out);
char* WriteJavaFloatText(float v, char* out);

// WriteJavaDoubleText without its shortcut for the double nearest to a decimal
// of at most 15 digits in [1e-3, 1e7), which prints that decimal without Java's
// digit generator: always the generator. The same text; for the tests that
// check so.
char* WriteJavaDoubleTextByGenerator(double v, char* out);

}  // namespace canal::render
