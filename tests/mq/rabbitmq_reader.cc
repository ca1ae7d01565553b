#include "mq/rabbitmq_reader.h"

#include <amqp.h>
#include <amqp_tcp_socket.h>
#include <sys/time.h>

#include <thread>

namespace canal::mq::testing {

namespace {

// One connection consuming `queue`; null on failure with *error set.
amqp_connection_state_t Open(uint16_t port, const std::string& queue, std::string* error) {
  amqp_connection_state_t conn = amqp_new_connection();
  amqp_socket_t* socket = amqp_tcp_socket_new(conn);
  struct timeval tv = {3, 0};
  if (socket == nullptr || amqp_socket_open_noblock(socket, "127.0.0.1", port, &tv) != AMQP_STATUS_OK) {
    *error = "cannot connect";
    amqp_destroy_connection(conn);
    return nullptr;
  }
  amqp_rpc_reply_t r = amqp_login(conn, "/", 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, "guest", "guest");
  if (r.reply_type == AMQP_RESPONSE_NORMAL) {
    amqp_channel_open(conn, 1);
    r = amqp_get_rpc_reply(conn);
  }
  if (r.reply_type == AMQP_RESPONSE_NORMAL) {
    amqp_basic_consume(conn, 1, amqp_cstring_bytes(queue.c_str()), amqp_empty_bytes, 0, /*no_ack=*/1, 0,
                       amqp_empty_table);
    r = amqp_get_rpc_reply(conn);
  }
  if (r.reply_type != AMQP_RESPONSE_NORMAL) {
    *error = "login, channel or consume of " + queue + " failed";
    amqp_destroy_connection(conn);
    return nullptr;
  }
  return conn;
}

}  // namespace

std::vector<std::string> ReadQueue(uint16_t port, const std::string& queue, std::chrono::milliseconds limit,
                                   const std::function<bool(const std::vector<std::string>&)>& until,
                                   std::string* error) {
  std::vector<std::string> out;
  error->clear();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  amqp_connection_state_t conn = nullptr;
  while (std::chrono::steady_clock::now() < deadline && !until(out)) {
    if (conn == nullptr) {
      conn = Open(port, queue, error);
      if (conn == nullptr) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
    }
    amqp_envelope_t envelope;
    amqp_maybe_release_buffers(conn);
    struct timeval tv = {0, 200 * 1000};
    amqp_rpc_reply_t r = amqp_consume_message(conn, &envelope, &tv, 0);
    if (r.reply_type == AMQP_RESPONSE_NORMAL) {
      out.emplace_back(static_cast<const char*>(envelope.message.body.bytes), envelope.message.body.len);
      amqp_destroy_envelope(&envelope);
      continue;
    }
    if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && r.library_error == AMQP_STATUS_TIMEOUT) continue;
    *error = "connection lost";
    amqp_destroy_connection(conn);
    conn = nullptr;
  }
  if (conn != nullptr) {
    amqp_channel_close(conn, 1, AMQP_REPLY_SUCCESS);
    amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(conn);
  }
  return out;
}

}  // namespace canal::mq::testing
