// RabbitMqProducer: Producer over rabbitmq-c (AMQP 0-9-1) with publisher
// confirms. Each message goes to rabbitmq.exchange with its topic as the
// routing key (Canal's rule), persistent unless rabbitmq.deliveryMode = 1,
// and `mandatory`, so a message no queue would receive comes back and stops
// the destination instead of vanishing. Confirm() waits for the broker's
// basic.ack of every message; a nack, a closed channel or connection is an
// error and the batch is published again on a new connection.
//
// Errors that no retry can fix are InvalidArgument (the publisher stops the
// destination), with the reply code as the Status subcode: the login refused
// (403 ACCESS_REFUSED: wrong user or password; 530 NOT_ALLOWED: the virtual
// host), a message over the broker's max_message_size (406, naming its size,
// routing key, origin and the limit), a missing exchange (404) or no write
// permission (403). A broker that accepts the connection but does not answer
// the AMQP handshake within 5 s, or does not answer an RPC within 5 s, is an
// IOError (retried). The broker's texts are escaped (printable ASCII).
#pragma once

#include <memory>

#include "canal/common/status.h"
#include "canal/mq/mq_config.h"
#include "canal/mq/producer.h"

namespace canal::mq {

// Connects, logs in, opens a channel in confirm mode and declares what the
// options ask for. IOError when the broker cannot be reached or does not
// answer; InvalidArgument when it refuses the login, the virtual host or a
// declaration.
Status MakeRabbitMqProducer(const RabbitMqOptions& options, std::unique_ptr<Producer>* out);

}  // namespace canal::mq
