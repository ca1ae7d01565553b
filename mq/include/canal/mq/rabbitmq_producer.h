// RabbitMqProducer: Producer over rabbitmq-c (AMQP 0-9-1) with publisher
// confirms. Each message goes to rabbitmq.exchange with its topic as the
// routing key (Canal's rule), persistent unless rabbitmq.deliveryMode = 1,
// and `mandatory`, so a message no queue would receive comes back and stops
// the destination instead of vanishing. Confirm() waits for the broker's
// basic.ack of every message; a nack, a closed channel or connection is an
// error and the batch is published again on a new connection.
#pragma once

#include <memory>

#include "canal/common/status.h"
#include "canal/mq/mq_config.h"
#include "canal/mq/producer.h"

namespace canal::mq {

// Connects, logs in, opens a channel in confirm mode and declares what the
// options ask for. IOError when the broker cannot be reached; InvalidArgument
// when it refuses the login or a declaration.
Status MakeRabbitMqProducer(const RabbitMqOptions& options, std::unique_ptr<Producer>* out);

}  // namespace canal::mq
