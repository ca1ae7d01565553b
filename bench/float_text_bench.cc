// FLOAT/DOUBLE value text: Canal's forms (Java's String.valueOf, java_float_text.cc)
// against MySQL's (shortest digits via std::to_chars), through AppendCanalValue
// as the sink calls it, once per value into a reused string.
//
//   build/bin/float_text_bench [--benchmark_filter=...]
//
// Value sets: "decimal" = what databases mostly hold (up to 12 significant
// digits, a few fraction digits: 123.45, 0.0125, 98765.4321), "random" = random
// bit patterns (17-digit doubles over the whole exponent range), "integer" =
// whole numbers below 1e7, "float" = FLOAT columns holding short decimals,
// "scientific" = 10 significant digits times 10^-30 .. 10^30 (measurements,
// physical constants).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "canal/render/canal_value.h"

namespace {

using namespace canal::binlog;
using namespace canal::render;

enum Set { kDecimal, kRandom, kInteger, kFloat, kScientific };

std::vector<ColumnValue> Values(Set set) {
  std::mt19937_64 rng(42);
  std::vector<ColumnValue> values(4096);
  for (ColumnValue& v : values) {
    v.kind = set == kFloat ? ColumnValue::Kind::kFloat : ColumnValue::Kind::kDouble;
    v.type = set == kFloat ? ColumnType::kFloat : ColumnType::kDouble;
    switch (set) {
      case kDecimal: {
        const double digits = static_cast<double>(rng() % 1000000000000ULL);
        v.f64 = digits / std::pow(10.0, static_cast<double>(rng() % 8));
        break;
      }
      case kRandom: {
        uint64_t bits;
        do {
          bits = rng();
          std::memcpy(&v.f64, &bits, sizeof bits);
        } while (!std::isfinite(v.f64));
        break;
      }
      case kInteger:
        v.f64 = static_cast<double>(rng() % 10000000);
        break;
      case kFloat:
        v.f32 = static_cast<float>(static_cast<double>(rng() % 10000000) / std::pow(10.0, static_cast<double>(rng() % 5)));
        break;
      case kScientific:
        v.f64 = static_cast<double>(rng() % 10000000000ULL) * std::pow(10.0, static_cast<double>(rng() % 61) - 39.0);
        break;
    }
  }
  return values;
}

void BM_FloatText(benchmark::State& state) {
  const auto set = static_cast<Set>(state.range(0));
  ValueFormatOptions options;
  options.forms = state.range(1) == 0 ? TextForms::kCanal : TextForms::kMysql;
  const std::vector<ColumnValue> values = Values(set);
  ColumnInfo column;
  column.type = column.real_type = set == kFloat ? ColumnType::kFloat : ColumnType::kDouble;
  std::string out;
  size_t i = 0;
  for (auto _ : state) {
    out.clear();
    benchmark::DoNotOptimize(AppendCanalValue(values[i], column, options, &out).ok());
    i = (i + 1) & (values.size() - 1);
  }
  state.SetItemsProcessed(state.iterations());
  static const char* kSets[] = {"decimal", "random", "integer", "float", "scientific"};
  state.SetLabel(std::string(kSets[set]) + (options.forms == TextForms::kCanal ? " canal" : " mysql"));
}
BENCHMARK(BM_FloatText)->ArgsProduct({{kDecimal, kRandom, kInteger, kFloat, kScientific}, {0, 1}});

}  // namespace

BENCHMARK_MAIN();
