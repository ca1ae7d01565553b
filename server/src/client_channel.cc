#include "client_channel.h"

#include <utility>  // before the Asio coroutine headers (Boost 1.74)

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <exception>
#include <limits>

#include "canal/server/client_text.h"
#include "canal/server/frame_codec.h"

namespace canal::server {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
using boost::system::error_code;

namespace {

// The inbox holds at most this many frames or bytes (a bigger frame is still
// read when the inbox is empty): Canal clients wait for each reply, so more
// than a few queued requests means a client that does not read.
constexpr size_t kInboxMaxFrames = 16;
constexpr size_t kInboxMaxBytes = 1 << 20;
// How long we wait for the client to close after an error Ack.
constexpr std::chrono::seconds kLinger{2};

// async_write's completion condition: everything, in sends as large as the
// socket takes. (Asio's own transfer_all caps each send at 64 KiB: a 4 MiB
// reply was 64 sendmsg calls, each waking the client.)
size_t WholeWrites(const error_code& ec, size_t /*bytes_so_far*/) {
  return ec ? 0 : std::numeric_limits<int32_t>::max();
}

// A gathered reply goes through TLS in copies of this size: each write of
// the TLS stream takes one buffer only, so small pieces would each be a
// record and a send of their own.
constexpr size_t kTlsStageBytes = 64 << 10;

// The end of a client's input: a clean close, or (TLS) a close without
// close_notify, which is how most clients end.
bool IsEndOfInput(const error_code& ec) {
  return ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
}

}  // namespace

void Reply::SetGathered(std::shared_ptr<store::RingStore> ring) {
  gather.clear();
  gather.reserve(pieces.size());
  for (std::string_view piece : pieces) gather.emplace_back(piece.data(), piece.size());
  gather_store = std::move(ring);
  ready = true;
}

ClientChannel::ClientChannel(SessionContext* context, SessionState* state, asio::ip::tcp::socket socket,
                             std::string peer, std::string local_address)
    : context_(context),
      state_(state),
      log_(context->logger.get()),
      socket_(std::move(socket)),
      peer_(std::move(peer)),
      local_address_(std::move(local_address)),
      request_ready_(socket_.get_executor()),
      inbox_space_(socket_.get_executor()),
      wake_(socket_.get_executor()),
      idle_timer_(socket_.get_executor()),
      tls_done_(socket_.get_executor()),
      last_receive_(Clock::now()),
      connected_at_(last_receive_),
      idle_timeout_(context->options.default_idle_timeout_ms) {
  if (context->tls) tls_ = std::make_unique<TlsStream>(socket_, *context->tls);
}

ClientChannel::~ClientChannel() = default;

void ClientChannel::Start(const std::shared_ptr<void>& keep_alive) {
  const auto on_exit = [](std::exception_ptr) {};  // both end on their own once the socket closes
  asio::co_spawn(socket_.get_executor(), ReadLoop(keep_alive), on_exit);
  asio::co_spawn(socket_.get_executor(), IdleWatch(keep_alive), on_exit);
}

void ClientChannel::WarnLimited(std::string_view key, const std::string& text) {
  std::string note;
  if (!context_->log_limiter.Allow(key, &note)) return;
  log_->warn("canal server {}: {}{}", local_address_, ClientText(text, kLogLineMax, /*escape_quotes=*/false), note);
}

void ClientChannel::SetCloseReasonIfEmpty(std::string reason) {
  if (close_reason_.empty()) close_reason_ = std::move(reason);
}

void ClientChannel::LoggedIn(std::chrono::milliseconds idle_timeout) {
  if (idle_timeout.count() > 0) idle_timeout_ = idle_timeout;
  idle_timer_.cancel();  // the watch re-arms: no login deadline, the client's idle timeout
}

bool ClientChannel::InboxFull() const {
  return !inbox_.empty() && (inbox_.size() >= kInboxMaxFrames || inbox_bytes_ >= kInboxMaxBytes);
}

awaitable<bool> ClientChannel::TlsHandshake() {
  error_code ec;
  co_await tls_->async_handshake(asio::ssl::stream_base::server, asio::redirect_error(use_awaitable, ec));
  if (state_->closed()) co_return false;  // the login deadline, or the server stopping
  if (ec) {
    // What OpenSSL says ("certificate verify failed", "wrong version
    // number", "peer did not return a certificate"), and for a client
    // certificate refused, why.
    std::string why = IsEndOfInput(ec) ? "the client closed the connection" : ec.message();
    const long verify = SSL_get_verify_result(tls_->native_handle());
    if (verify != X509_V_OK) why += "; client certificate: " + std::string(X509_verify_cert_error_string(verify));
    const std::string reason = "TLS handshake failed: " + why;
    WarnLimited("tls handshake failed", "closing the connection of " + Describe() + ": " + reason);
    Close(reason);
    co_return false;
  }
  tls_ready_ = true;
  tls_done_.cancel();
  co_return true;
}

awaitable<bool> ClientChannel::TlsReady() {
  error_code ec;
  while (!tls_ready_ && !state_->closed()) {
    tls_done_.expires_at(Clock::time_point::max());
    co_await tls_done_.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  co_return tls_ready_ && !state_->closed();
}

awaitable<void> ClientChannel::ReadLoop(std::shared_ptr<void> /*keep_alive*/) {
  error_code ec;
  std::string reason = "client closed the connection";
  if (tls_ && !co_await TlsHandshake()) co_return;
  while (!state_->closed()) {
    while (!state_->closed() && InboxFull()) {
      inbox_space_.expires_at(Clock::time_point::max());
      co_await inbox_space_.async_wait(asio::redirect_error(use_awaitable, ec));
    }
    if (state_->closed()) break;
    uint8_t header[kFrameHeaderBytes];
    if (tls_) {
      co_await asio::async_read(*tls_, asio::buffer(header), asio::redirect_error(use_awaitable, ec));
    } else {
      co_await asio::async_read(socket_, asio::buffer(header), asio::redirect_error(use_awaitable, ec));
    }
    if (ec) {
      if (!IsEndOfInput(ec)) reason = "read failed: " + ec.message();
      break;
    }
    last_receive_ = Clock::now();
    const uint32_t length = DecodeFrameLength(header);
    // Checked before anything is allocated: a bogus prefix must cost nothing,
    // and before login a frame can only be a small CLIENTAUTHENTICATION.
    const bool before_login = !state_->logged_in();
    const uint32_t limit =
        before_login ? context_->options.pre_auth_max_frame_bytes : context_->options.max_frame_bytes;
    if (Status s = CheckFrameLength(length, limit); !s.ok()) {
      const std::string why = std::string(s.message()) + (before_login ? " allowed before login" : "");
      WarnLimited(before_login ? "frame too large before login" : "frame too large",
                  "closing the connection of " + Describe() + ": " + why);
      Close(why);
      co_return;
    }
    std::string frame(length, '\0');
    if (tls_) {
      co_await asio::async_read(*tls_, asio::buffer(frame), asio::redirect_error(use_awaitable, ec));
    } else {
      co_await asio::async_read(socket_, asio::buffer(frame), asio::redirect_error(use_awaitable, ec));
    }
    if (ec) {
      reason = "connection ended inside a frame of " + std::to_string(length) + " bytes (" + ec.message() + ")";
      if (!state_->closed()) log_->warn("canal server {}: {}: {}", local_address_, Describe(), reason);
      break;
    }
    last_receive_ = Clock::now();
    if (state_->discarding_input()) continue;
    inbox_bytes_ += frame.size();
    inbox_.push_back(std::move(frame));
    request_ready_.cancel();
  }
  EndOfInput(reason);
}

void ClientChannel::EndOfInput(const std::string& reason) {
  if (state_->input_over()) return;
  SetCloseReasonIfEmpty(reason);
  if (state_->ending()) {
    Close(reason);  // the error Ack has nobody left to read it
    return;
  }
  (void)state_->To(SessionPhase::kInputClosed);  // allowed from the two phases left
  request_ready_.cancel();
  wake_.cancel();  // a waiting GET has nobody left to answer
}

awaitable<void> ClientChannel::IdleWatch(std::shared_ptr<void> /*keep_alive*/) {
  error_code ec;
  const Clock::time_point login_deadline =
      connected_at_ + std::chrono::milliseconds(context_->options.login_timeout_ms);
  while (!state_->closed()) {
    const Clock::time_point now = Clock::now();
    // Whatever it sends, a client that has not logged in in time goes.
    if (!state_->logged_in() && now >= login_deadline) {
      const std::string limit = std::to_string(context_->options.login_timeout_ms) + " ms";
      const std::string reason =
          tls_ && !tls_ready_
              ? "no TLS handshake within " + limit +
                    " (canal.connections.login.timeout; canal.tls.enabled is on: a client without TLS?)"
              : "not logged in within " + limit + " (canal.connections.login.timeout)";
      WarnLimited("login timeout", "closing the connection of " + Describe() + ": " + reason);
      Close(reason);
      break;
    }
    const Clock::time_point deadline = last_receive_ + idle_timeout_;
    if (now >= deadline) {
      const std::string reason = "idle for " + std::to_string(idle_timeout_.count()) + " ms (net_read_timeout)";
      log_->warn("canal server {}: closing the connection of {}: {}", local_address_, Describe(), reason);
      Close(reason);
      break;
    }
    idle_timer_.expires_at(state_->logged_in() ? deadline : std::min(deadline, login_deadline));
    co_await idle_timer_.async_wait(asio::redirect_error(use_awaitable, ec));
  }
}

awaitable<bool> ClientChannel::NextRequest(std::string* frame) {
  error_code ec;
  while (!state_->input_over() && inbox_.empty() && !interrupted_) {
    request_ready_.expires_at(Clock::time_point::max());
    co_await request_ready_.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  if (state_->closed() || inbox_.empty()) co_return false;
  *frame = std::move(inbox_.front());
  inbox_.pop_front();
  inbox_bytes_ -= frame->size();
  inbox_space_.cancel();
  co_return true;
}

void ClientChannel::Interrupt() {
  interrupted_ = true;
  request_ready_.cancel();
}

awaitable<bool> ClientChannel::Write(Reply* reply) {
  error_code ec;
  if (tls_ && !co_await TlsReady()) {
    reply->DropGather();
    reply->ready = false;
    co_return false;  // closed: the handshake failed or never came
  }
  writing_ = true;
  if (tls_) {
    co_await WriteTls(reply, &ec);
  } else if (!reply->gather.empty()) {
    co_await asio::async_write(socket_, reply->gather, WholeWrites, asio::redirect_error(use_awaitable, ec));
  } else {
    co_await asio::async_write(socket_, asio::buffer(reply->out), WholeWrites,
                               asio::redirect_error(use_awaitable, ec));
  }
  writing_ = false;
  // The write is over, whether it completed or failed: the batch's slots
  // may be acked, rolled back or freed from here on.
  reply->DropGather();
  reply->ready = false;
  if (ec) {
    if (!state_->closed()) {
      log_->info("canal server {}: write to {} failed: {}", local_address_, Describe(), ec.message());
      Close("write failed: " + ec.message());
    }
    co_return false;
  }
  co_return true;
}

awaitable<void> ClientChannel::WriteTls(Reply* reply, error_code* ec) {
  if (reply->gather.empty()) {
    co_await asio::async_write(*tls_, asio::buffer(reply->out), WholeWrites, asio::redirect_error(use_awaitable, *ec));
    co_return;
  }
  // TLS copies every byte anyway (into records); one more copy into a
  // stage of 64 KiB makes full records and few sends.
  tls_stage_.reserve(kTlsStageBytes);
  const std::vector<asio::const_buffer>& pieces = reply->gather;
  size_t i = 0, offset = 0;  // the next byte to stage: pieces[i], at offset
  while (i < pieces.size() && !*ec) {
    tls_stage_.clear();
    while (i < pieces.size() && tls_stage_.size() < kTlsStageBytes) {
      const size_t take = std::min(pieces[i].size() - offset, kTlsStageBytes - tls_stage_.size());
      tls_stage_.append(static_cast<const char*>(pieces[i].data()) + offset, take);
      offset += take;
      if (offset == pieces[i].size()) {
        ++i;
        offset = 0;
      }
    }
    co_await asio::async_write(*tls_, asio::buffer(tls_stage_), WholeWrites, asio::redirect_error(use_awaitable, *ec));
  }
  if (tls_stage_.capacity() > kTlsStageBytes * 2) std::string().swap(tls_stage_);
}

awaitable<void> ClientChannel::WaitUntil(Clock::time_point deadline) {
  if (state_->input_over()) co_return;
  error_code ec;
  wake_.expires_at(deadline);
  co_await wake_.async_wait(asio::redirect_error(use_awaitable, ec));
}

void ClientChannel::Wake() { wake_.cancel(); }

awaitable<void> ClientChannel::Linger() {
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  if (!state_->To(SessionPhase::kDraining)) co_return;  // closed meanwhile
  inbox_.clear();
  inbox_bytes_ = 0;
  inbox_space_.cancel();
  wake_.expires_after(kLinger);
  co_await wake_.async_wait(asio::redirect_error(use_awaitable, ec));
}

void ClientChannel::Close(std::string_view reason) {
  if (state_->closed()) return;
  (void)state_->To(SessionPhase::kClosed);  // allowed from every other phase
  SetCloseReasonIfEmpty(std::string(reason));
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  request_ready_.cancel();
  inbox_space_.cancel();
  wake_.cancel();
  idle_timer_.cancel();
  tls_done_.cancel();
}

}  // namespace canal::server
