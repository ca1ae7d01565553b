// Reads a RabbitMQ queue for the tests: every message, in order, taken off
// the queue (auto-ack).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace canal::mq::testing {

// Consumes `queue` on 127.0.0.1:`port` (guest/guest, vhost /) until `until`
// holds for the messages so far or `limit` passes; reconnects while the
// broker is away. Returns the payloads in arrival order; *error says why a
// connection failed last ("" when it never did).
std::vector<std::string> ReadQueue(uint16_t port, const std::string& queue, std::chrono::milliseconds limit,
                                   const std::function<bool(const std::vector<std::string>&)>& until,
                                   std::string* error);

}  // namespace canal::mq::testing
