// The position topic of exactly-once Kafka publishing (publisher.h): one
// message per committed transaction, keyed by destination, written inside the
// transaction it describes, read back read_committed on start and after any
// transaction whose outcome is unknown.
//
// Value (JSON): {"cursor":{...meta's cursor JSON...},"destination":"example",
// "sequence":42,"transaction":"5f0c...-42"}. `sequence` grows by one per
// committed transaction of the destination, across restarts and servers, so
// the newest wins even if the topic's partition count changed.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "canal/common/status.h"
#include "canal/mq/producer.h"

namespace canal::mq {

std::string EncodePositionMessage(const std::string& destination, const CommittedPosition& position);
// Corruption naming what is wrong; *destination is the message's.
Status DecodePositionMessage(std::string_view value, std::string* destination, CommittedPosition* out);

// Reads every partition of `topic` up to the end it had when the read began
// (read_committed: what aborted or still-open transactions wrote is not seen;
// an open transaction of another destination delays the read until it ends, up
// to `timeout`). *found false when `destination` has no message, or the topic
// does not exist. `properties` are the producer's (the connection and security
// ones are used). IOError naming the broker and partition on failure.
Status ReadKafkaPosition(const std::map<std::string, std::string>& properties, const std::string& topic,
                         const std::string& destination, std::chrono::milliseconds timeout, CommittedPosition* out,
                         bool* found);

}  // namespace canal::mq
