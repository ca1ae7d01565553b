#include "canal/metrics/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "canal/metrics/metric.h"
#include "canal/metrics/process_stats.h"

namespace canal::metrics {
namespace {

TEST(Exposition, CounterAndGaugeFamilies) {
  TextWriter w;
  ASSERT_TRUE(
      w.Family("canal_instance_transactions", "Transactions counter of canal instance", MetricType::kCounter));
  ASSERT_TRUE(w.Sample({{"destination", "example"}}, 42));
  ASSERT_TRUE(w.Sample({{"destination", "other"}}, 0));
  ASSERT_TRUE(w.Family("canal_instance_traffic_delay", "Traffic delay in milliseconds", MetricType::kGauge));
  ASSERT_TRUE(w.Sample({{"destination", "example"}}, 1500.5));
  EXPECT_EQ(w.text(),
            "# HELP canal_instance_transactions Transactions counter of canal instance\n"
            "# TYPE canal_instance_transactions counter\n"
            "canal_instance_transactions{destination=\"example\"} 42\n"
            "canal_instance_transactions{destination=\"other\"} 0\n"
            "# HELP canal_instance_traffic_delay Traffic delay in milliseconds\n"
            "# TYPE canal_instance_traffic_delay gauge\n"
            "canal_instance_traffic_delay{destination=\"example\"} 1500.5\n");
}

TEST(Exposition, SeriesWithoutLabelsAndEmptyFamily) {
  TextWriter w;
  ASSERT_TRUE(w.Family("process_open_fds", "Open fds", MetricType::kGauge));
  ASSERT_TRUE(w.Sample({}, 12));
  ASSERT_TRUE(w.Family("canal_instance_subscriptions", "Subscriptions", MetricType::kGauge));
  EXPECT_EQ(w.text(),
            "# HELP process_open_fds Open fds\n# TYPE process_open_fds gauge\nprocess_open_fds 12\n"
            "# HELP canal_instance_subscriptions Subscriptions\n# TYPE canal_instance_subscriptions gauge\n");
}

TEST(Exposition, EscapesLabelValuesAndHelp) {
  TextWriter w;
  ASSERT_TRUE(w.Family("canal_x", "help with \\ and\nnewline and \"quotes\"", MetricType::kGauge));
  ASSERT_TRUE(w.Sample({{"destination", "a\"b\\c\nd"}, {"kind", "é{}=,"}}, 1));
  EXPECT_EQ(w.text(),
            "# HELP canal_x help with \\\\ and\\nnewline and \"quotes\"\n"
            "# TYPE canal_x gauge\n"
            "canal_x{destination=\"a\\\"b\\\\c\\nd\",kind=\"é{}=,\"} 1\n");
}

TEST(Exposition, SpecialValues) {
  std::string out;
  AppendValue(std::numeric_limits<double>::quiet_NaN(), &out);
  out += ' ';
  AppendValue(std::numeric_limits<double>::infinity(), &out);
  out += ' ';
  AppendValue(-std::numeric_limits<double>::infinity(), &out);
  out += ' ';
  AppendValue(-3, &out);
  out += ' ';
  AppendValue(18446744073709551615.0, &out);  // beyond int64: the double printed exactly
  out += ' ';
  AppendValue(0.25, &out);
  EXPECT_EQ(out, "NaN +Inf -Inf -3 18446744073709551616 0.25");
}

TEST(Exposition, HistogramBucketsSumCount) {
  Histogram h({2.5, 10, 25, 100});
  h.Observe(1);
  h.Observe(2.5);  // on a bound: counts in that bucket (le is "less or equal")
  h.Observe(12);
  h.Observe(1000);
  TextWriter w;
  ASSERT_TRUE(
      w.Family("canal_instance_client_request_latency", "Client request latency.", MetricType::kHistogram));
  ASSERT_TRUE(w.HistogramSample({{"destination", "example"}}, h.Snapshot()));
  EXPECT_EQ(w.text(),
            "# HELP canal_instance_client_request_latency Client request latency.\n"
            "# TYPE canal_instance_client_request_latency histogram\n"
            "canal_instance_client_request_latency_bucket{destination=\"example\",le=\"2.5\"} 2\n"
            "canal_instance_client_request_latency_bucket{destination=\"example\",le=\"10\"} 2\n"
            "canal_instance_client_request_latency_bucket{destination=\"example\",le=\"25\"} 3\n"
            "canal_instance_client_request_latency_bucket{destination=\"example\",le=\"100\"} 3\n"
            "canal_instance_client_request_latency_bucket{destination=\"example\",le=\"+Inf\"} 4\n"
            "canal_instance_client_request_latency_sum{destination=\"example\"} 1015.5\n"
            "canal_instance_client_request_latency_count{destination=\"example\"} 4\n");
}

TEST(Exposition, HistogramBoundsAreSortedAndMerged) {
  Histogram h({10, 1, 10, std::numeric_limits<double>::infinity(), std::nan("")});
  EXPECT_EQ(h.bounds(), (std::vector<double>{1, 10}));
  const HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{0, 0}));
}

TEST(Exposition, RefusesBadNames) {
  TextWriter w;
  EXPECT_FALSE(w.Family("", "h", MetricType::kGauge));
  EXPECT_FALSE(w.Family("9lives", "h", MetricType::kGauge));
  EXPECT_FALSE(w.Family("canal-instance", "h", MetricType::kGauge));
  EXPECT_FALSE(w.Family("canal instance", "h", MetricType::kGauge));
  EXPECT_EQ(w.text(), "");
  // A sample before any family.
  EXPECT_FALSE(w.Sample({}, 1));
  ASSERT_TRUE(w.Family("ns:canal_ok", "h", MetricType::kGauge));
  const std::string before = w.text();
  EXPECT_FALSE(w.Sample({{"__reserved", "x"}}, 1));
  EXPECT_FALSE(w.Sample({{"packet-type", "x"}}, 1));
  EXPECT_FALSE(w.Sample({{"a:b", "x"}}, 1));
  EXPECT_FALSE(w.Sample({{"", "x"}}, 1));
  EXPECT_FALSE(w.Sample({{"destination", "x"}, {"destination", "y"}}, 1));
  EXPECT_EQ(w.text(), before) << "a refused sample writes nothing";
  // The same family twice would make Prometheus reject the page.
  EXPECT_FALSE(w.Family("ns:canal_ok", "h", MetricType::kGauge));
  // ...and its samples must not land in the family before it.
  const std::string after_refusal = w.text();
  EXPECT_FALSE(w.Sample({{"destination", "x"}}, 1));
  EXPECT_EQ(w.text(), after_refusal);
  // The first violation is kept, with a count of all of them.
  EXPECT_EQ(w.refused(), 12u);
  EXPECT_EQ(w.status().code(), Status::Code::kInvalidArgument) << w.status().ToString();
  EXPECT_NE(w.status().ToString().find("metric name \"\""), std::string::npos) << w.status().ToString();
}

TEST(Exposition, AWriterWithNoViolationReportsOk) {
  TextWriter w;
  ASSERT_TRUE(w.Family("canal_ok", "h", MetricType::kGauge));
  ASSERT_TRUE(w.Sample({{"destination", "x"}}, 1));
  EXPECT_TRUE(w.status().ok());
  EXPECT_EQ(w.refused(), 0u);
}

TEST(Exposition, HistogramRules) {
  TextWriter w;
  Histogram h({1});
  ASSERT_TRUE(w.Family("canal_g", "h", MetricType::kGauge));
  EXPECT_FALSE(w.HistogramSample({}, h.Snapshot())) << "histogram series in a gauge family";
  ASSERT_TRUE(w.Family("canal_h", "h", MetricType::kHistogram));
  EXPECT_FALSE(w.Sample({}, 1)) << "plain sample in a histogram family";
  EXPECT_FALSE(w.HistogramSample({{"le", "1"}}, h.Snapshot())) << "le is the buckets' label";
  HistogramSnapshot broken = h.Snapshot();
  broken.cumulative.clear();
  EXPECT_FALSE(w.HistogramSample({}, broken));
  EXPECT_TRUE(w.HistogramSample({}, h.Snapshot()));
  EXPECT_NE(w.text().find("canal_h_bucket{le=\"+Inf\"} 0\n"), std::string::npos) << w.text();
}

TEST(Metrics, ConcurrentUpdatesAreAllCounted) {
  Counter c;
  Histogram h({1, 2});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.Add();
        h.Observe(i % 3);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 40000u);
  const HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.count, 40000u);
  EXPECT_EQ(s.cumulative.back(), 40000u);
  EXPECT_DOUBLE_EQ(s.sum, 4 * (3333 * 1 + 3333 * 2 + 0.0));
}

TEST(ProcessStats, ReadsThisProcess) {
  ProcessStats p;
  ASSERT_TRUE(ReadProcessStats(&p).ok());
  EXPECT_GT(p.resident_bytes, 0u);
  EXPECT_GE(p.threads, 1u);
  EXPECT_GE(p.open_fds, 3u);
  EXPECT_GT(p.max_fds, 0u);
  EXPECT_GT(p.start_time_seconds, 1e9);
  EXPECT_GE(p.cpu_seconds, 0);
}

}  // namespace
}  // namespace canal::metrics
