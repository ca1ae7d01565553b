// MQ-mode benchmark driver: canal-server publishing an already-written binlog
// (bench/gen_bench_binlog.sh, 1,000,000 rows) to Kafka (librdkafka's mock
// cluster, 3 brokers, in this process) or to RabbitMQ (a sandbox broker).
//
// The end is when the destination's cursor (conf/bench/meta.dat), which moves
// only behind the broker's confirmation of each batch, stops moving for 3 s;
// the rows are the server's own count ("MQ: published ... R rows" at its
// stop). RabbitMQ's queue is then drained and its rows counted as a check;
// the Kafka mock keeps only the last 5 MB of a partition, so the tests, not
// this driver, read Kafka back.
//
//   mq_bench kafka    --server BIN --work DIR --mysql-port P --first-file F --rows N [--canal-port C]
//                     [--transaction]   (exactly once: canal.mq.transaction = true)
//   mq_bench rabbitmq --server BIN --work DIR --mysql-port P --first-file F --rows N --rabbit-port R
//
// Prints one JSON line: rows, seconds (server start to the last cursor move),
// rows_per_s, server CPU seconds (user + system, from /proc) and CPU
// microseconds per row. Exit 1 when fewer rows were published (or, RabbitMQ,
// received) than --rows within 600 s.
#include <amqp.h>
#include <amqp_tcp_socket.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Rows in a flat message: the objects at depth 1 of its "data" array (strings
// skipped with their escapes, so no value can fool the count).
uint64_t FlatRows(std::string_view json) {
  size_t at = json.find("\"data\":[");
  if (at == std::string_view::npos) return 0;
  uint64_t rows = 0;
  int depth = 0;
  for (size_t i = at + 8; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"') {
      for (++i; i < json.size() && json[i] != '"'; ++i) {
        if (json[i] == '\\') ++i;
      }
    } else if (c == '{') {
      if (depth++ == 0) ++rows;
    } else if (c == '}') {
      --depth;
    } else if (c == ']' && depth == 0) {
      break;
    }
  }
  return rows;
}

double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  // Fields after the command: state(3) ... utime(14) stime(15).
  std::string rest = stat.substr(close + 2);
  char* p = rest.data();
  unsigned long long utime = 0, stime = 0;
  for (int field = 3; field <= 15; ++field) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(p, &end, 10);
    if (field == 14) utime = v;
    if (field == 15) stime = v;
    p = end;
    while (*p == ' ') ++p;
    if (field == 3) {  // the state is a letter
      while (*p != ' ' && *p != '\0') ++p;
      while (*p == ' ') ++p;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

void WriteConf(const fs::path& root, const std::string& server_props, int mysql_port, const std::string& first) {
  fs::remove_all(root);
  fs::create_directories(root / "conf" / "bench");
  std::ofstream(root / "conf" / "canal.properties") << server_props;
  std::ofstream(root / "conf" / "bench" / "instance.properties")
      << "canal.instance.master.address = 127.0.0.1:" << mysql_port
      << "\ncanal.instance.dbUsername = canal\ncanal.instance.dbPassword = canal\n"
         "canal.instance.master.journal.name = "
      << first << "\ncanal.instance.master.position = 4\ncanal.mq.topic = bench\n";
}

pid_t StartServer(const std::string& bin, const fs::path& root) {
  pid_t pid = fork();
  if (pid == 0) {
    const std::string conf = (root / "conf").string(), logs = (root / "logs").string();
    freopen((root / "stdout.log").c_str(), "w", stdout);
    freopen((root / "stdout.log").c_str(), "a", stderr);
    execl(bin.c_str(), bin.c_str(), "--conf", conf.c_str(), "--logs", logs.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Waits until `file` has not changed for `quiet` (after changing at least
// once) or `limit` passes; the time of its last change.
Clock::time_point WaitUntilStill(const fs::path& file, std::chrono::seconds quiet, std::chrono::seconds limit) {
  std::string last;
  auto changed = Clock::now();
  bool moved = false;
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    std::ifstream in(file);
    std::string now((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (now != last) {
      last = std::move(now);
      changed = Clock::now();
      moved = moved || !last.empty();
    } else if (moved && Clock::now() - changed > quiet) {
      break;
    }
    usleep(50 * 1000);
  }
  return changed;
}

// "MQ: published N batches, M messages, R rows" in the destination's log: R.
// From the destination's last "MQ: published ..." line: the rows, and the most ring bytes the
// publisher had sent and not yet seen confirmed.
uint64_t PublishedRows(const fs::path& log, uint64_t* peak_in_flight_bytes) {
  std::ifstream in(log);
  std::string line;
  uint64_t rows = 0;
  while (std::getline(in, line)) {
    size_t at = line.find(" messages, ");
    if (line.find("MQ: published") == std::string::npos || at == std::string::npos) continue;
    rows = std::strtoull(line.c_str() + at + 11, nullptr, 10);
    const size_t peak = line.find("at most ");
    *peak_in_flight_bytes = peak == std::string::npos ? 0 : std::strtoull(line.c_str() + peak + 8, nullptr, 10);
  }
  return rows;
}

// Consumes until `rows` rows came or 120 s pass; the rows seen.
uint64_t ConsumeRabbit(int port, uint64_t rows) {
  uint64_t seen = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (seen < rows && Clock::now() < deadline) {
    amqp_connection_state_t conn = amqp_new_connection();
    amqp_socket_t* socket = amqp_tcp_socket_new(conn);
    struct timeval tv = {3, 0};
    if (amqp_socket_open_noblock(socket, "127.0.0.1", port, &tv) != AMQP_STATUS_OK ||
        amqp_login(conn, "/", 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, "guest", "guest").reply_type !=
            AMQP_RESPONSE_NORMAL) {
      amqp_destroy_connection(conn);
      sleep(1);
      continue;
    }
    amqp_channel_open(conn, 1);
    amqp_basic_qos(conn, 1, 0, 1000, 0);
    amqp_basic_consume(conn, 1, amqp_cstring_bytes("bench"), amqp_empty_bytes, 0, 1, 0, amqp_empty_table);
    if (amqp_get_rpc_reply(conn).reply_type != AMQP_RESPONSE_NORMAL) {
      amqp_destroy_connection(conn);
      sleep(1);
      continue;
    }
    while (seen < rows && Clock::now() < deadline) {
      amqp_envelope_t envelope;
      amqp_maybe_release_buffers(conn);
      struct timeval wait = {0, 200 * 1000};
      amqp_rpc_reply_t r = amqp_consume_message(conn, &envelope, &wait, 0);
      if (r.reply_type == AMQP_RESPONSE_NORMAL) {
        seen += FlatRows({static_cast<const char*>(envelope.message.body.bytes), envelope.message.body.len});
        amqp_destroy_envelope(&envelope);
      } else if (!(r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && r.library_error == AMQP_STATUS_TIMEOUT)) {
        break;
      }
    }
    amqp_destroy_connection(conn);
  }
  return seen;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"MQ-mode benchmark driver"};
  std::string server, work, first;
  int mysql_port = 0, rabbit_port = 0, canal_port = 14260;
  uint64_t rows = 1000000;
  auto common = [&](CLI::App* sub) {
    sub->add_option("--server", server)->required();
    sub->add_option("--work", work)->required();
    sub->add_option("--mysql-port", mysql_port)->required();
    sub->add_option("--first-file", first)->required();
    sub->add_option("--rows", rows);
    sub->add_option("--canal-port", canal_port);
  };
  CLI::App* kafka = app.add_subcommand("kafka");
  common(kafka);
  bool transaction = false;
  kafka->add_flag("--transaction", transaction, "exactly once: canal.mq.transaction = true");
  CLI::App* rabbit = app.add_subcommand("rabbitmq");
  common(rabbit);
  rabbit->add_option("--rabbit-port", rabbit_port)->required();
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);

  const std::string base = "canal.ip = 127.0.0.1\ncanal.port = " + std::to_string(canal_port) +
                           "\ncanal.destinations = bench\ncanal.auto.scan = false\n";
  const fs::path root =
      fs::path(work) / (kafka->parsed() ? (transaction ? "kafka-transactions" : "kafka") : "rabbitmq");
  rd_kafka_t* mock_rk = nullptr;
  rd_kafka_mock_cluster_t* mock = nullptr;
  std::string props;
  if (kafka->parsed()) {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);  // the mock's handle needs no brokers
    mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    mock = rd_kafka_mock_cluster_new(mock_rk, 3);
    rd_kafka_mock_topic_create(mock, "bench", 1, 3);
    rd_kafka_mock_topic_create(mock, "canal_positions", 1, 3);
    props = base + "canal.serverMode = kafka\nkafka.bootstrap.servers = " + rd_kafka_mock_cluster_bootstraps(mock) +
            "\nkafka.linger.ms = 5\ncanal.mq.canalBatchSize = 500\n" +
            (transaction ? "canal.mq.transaction = true\n" : "");
  } else {
    props = base + "canal.serverMode = rabbitMQ\nrabbitmq.host = 127.0.0.1:" + std::to_string(rabbit_port) +
            "\nrabbitmq.exchange = bench\nrabbitmq.deliveryMode = direct\nrabbitmq.queue = bench\n"
            "rabbitmq.routingKey = bench\ncanal.mq.canalBatchSize = 500\n";
  }
  WriteConf(root, props, mysql_port, first);
  const auto t0 = Clock::now();
  const pid_t pid = StartServer(server, root);
  const auto last_move = WaitUntilStill(root / "conf" / "bench" / "meta.dat", std::chrono::seconds(3),
                                        std::chrono::seconds(600));
  const double seconds = std::chrono::duration<double>(last_move - t0).count();
  const double cpu = CpuSeconds(pid);
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  uint64_t peak_bytes = 0;
  const uint64_t published = PublishedRows(root / "logs" / "bench" / "bench.log", &peak_bytes);
  const uint64_t received = rabbit->parsed() ? ConsumeRabbit(rabbit_port, rows) : published;
  if (mock != nullptr) rd_kafka_mock_cluster_destroy(mock);
  if (mock_rk != nullptr) rd_kafka_destroy(mock_rk);
  const uint64_t seen = std::min(published, received);
  std::printf("{\"broker\":\"%s\",\"rows\":%llu,\"seconds\":%.2f,\"rows_per_s\":%.0f,\"server_cpu_s\":%.2f,"
              "\"cpu_us_per_row\":%.2f,\"peak_in_flight_bytes\":%llu}\n",
              kafka->parsed() ? (transaction ? "kafka-mock-transactions" : "kafka-mock") : "rabbitmq",
              static_cast<unsigned long long>(seen), seconds, static_cast<double>(seen) / seconds, cpu,
              seen ? cpu * 1e6 / static_cast<double>(seen) : 0.0, static_cast<unsigned long long>(peak_bytes));
  if (received < published) std::fprintf(stderr, "mq_bench: %llu rows published, %llu received\n",
                                         static_cast<unsigned long long>(published),
                                         static_cast<unsigned long long>(received));
  return seen >= rows ? 0 : 1;
}
