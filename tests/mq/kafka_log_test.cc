// librdkafka's own log lines go through the destination's spdlog logger (prefixed, escaped,
// levels mapped), not to stderr: a producer pointed at a port nobody listens on logs its
// connection failures there.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "canal/mq/kafka_producer.h"

namespace canal::mq {
namespace {

using namespace std::chrono_literals;

// A loopback port that was free a moment ago: nothing listens there.
uint16_t ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

TEST(KafkaProducerLog, LibrdkafkasLinesGoThroughTheDestinationsLogger) {
  std::ostringstream out;
  auto logger = std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_level(spdlog::level::debug);
  KafkaOptions o;
  o.properties = {{"bootstrap.servers", "127.0.0.1:" + std::to_string(ClosedPort())},
                  {"message.timeout.ms", "1500"},
                  {"reconnect.backoff.ms", "50"}};
  o.logger = logger;
  o.destination = "orders";
  std::unique_ptr<Producer> p;
  ASSERT_TRUE(MakeKafkaProducer(o, &p).ok());
  EncodedMessage m;
  m.topic = "t";
  m.partition = 0;
  m.payload = "x";
  m.origin = "db.t at bin.000001:4";
  // The topic's first message asks the cluster for it: nobody answers.
  const Status s = p->Send(m);
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_NE(s.message().find("asking for topic t"), std::string_view::npos) << s.ToString();
  p.reset();
  logger->flush();
  const std::string text = out.str();
  EXPECT_NE(text.find("[orders] librdkafka "), std::string::npos) << text;
  EXPECT_NE(text.find("Connection refused"), std::string::npos) << text;
  for (char c : text) {
    if (c != '\n') {
      EXPECT_TRUE(c >= 0x20 && c < 0x7F) << "an unescaped byte " << static_cast<int>(c);
    }
  }
}

}  // namespace
}  // namespace canal::mq
