#include "session.h"

#include <utility>  // before the Asio coroutine headers (Boost 1.74)

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <charconv>
#include <exception>
#include <limits>
#include <mutex>
#include <random>
#include <vector>

#include "canal/meta/meta_manager.h"
#include "canal/packet.pb.h"
#include "canal/proto/password_scramble.h"
#include "canal/server/client_text.h"
#include "canal/server/frame_codec.h"

namespace canal::server {

namespace asio = boost::asio;
using asio::awaitable;

namespace {

constexpr size_t kSeedBytes = 8;
constexpr int32_t kDefaultFetchSize = 1000;
// Entries of at least this size are written from the ring's slots; smaller
// ones are copied into the reply (an iovec per tiny entry costs more in the
// kernel and in Asio than the copy saves).
constexpr size_t kGatherMinEntryBytes = 1024;
// A reply's buffer keeps its capacity for the next reply up to this; a larger
// one (a batch of small entries, or any batch with auto-ack, is copied into
// it) goes back once written, so an idle session does not keep its biggest
// batch. (The batch itself is bounded by the ring: under the server's memory
// budget by the batch part of its share.)
constexpr size_t kReplyKeepBytes = 64 * 1024;
// Longer GET waits are cut to this (the idle timeout ends them sooner anyway).
constexpr std::chrono::nanoseconds kMaxGetWait = std::chrono::hours(24 * 365);

// Error Ack codes (proto/wire_error.h, docs/protocol.md "Errors"): the SDK
// branches on them, never on the text.
constexpr proto::WireError kErrorGeneral = proto::WireError::kBadRequest;
constexpr proto::WireError kErrorIdentityMissing = proto::WireError::kIdentityMissing;
constexpr proto::WireError kErrorBatchIdMissing = proto::WireError::kBatchIdMissing;
constexpr proto::WireError kErrorAuthFailed = proto::WireError::kAuthFailed;
constexpr proto::WireError kErrorNoSuchDestination = proto::WireError::kNoSuchDestination;
constexpr proto::WireError kErrorNotSubscribed = proto::WireError::kNotSubscribed;
constexpr proto::WireError kErrorSubscribedByAnother = proto::WireError::kSubscribedByAnother;
constexpr proto::WireError kErrorNotServing = proto::WireError::kNotServing;
// The ack was not applied and the batch will be delivered again (this server
// stopped serving the destination, e.g. fenced after a freeze); the client
// should reconnect, roll back and get again.
constexpr proto::WireError kErrorAckNotApplied = proto::WireError::kAckNotApplied;
// Acks were applied but the cursor write failed (disk, ZooKeeper).
constexpr proto::WireError kErrorAcksNotDurable = proto::WireError::kAcksNotDurable;

std::string RandomSeed() {
  std::string seed(kSeedBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(seed.data()), static_cast<int>(seed.size())) != 1) {
    std::random_device rd;  // OpenSSL's pool failing is unheard of; still never send a fixed seed
    for (char& c : seed) c = static_cast<char>(rd());
  }
  return seed;
}

// Canal keeps client ids in a Java short.
bool ParseClientId(const std::string& text, int16_t* out) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  int value = 0;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last || value < std::numeric_limits<int16_t>::min() ||
      value > std::numeric_limits<int16_t>::max()) {
    return false;
  }
  *out = static_cast<int16_t>(value);
  return true;
}

// Get.timeout in Get.unit (Canal's TimeUnit numbering; unknown units are
// milliseconds, as Canal's convertTimeUnit has it). nullopt: return now.
std::optional<std::chrono::nanoseconds> GetTimeout(const protocol::Get& get) {
  if (get.timeout_present_case() == protocol::Get::TIMEOUT_PRESENT_NOT_SET || get.timeout() < 0) return std::nullopt;
  const int32_t unit = get.unit_present_case() == protocol::Get::UNIT_PRESENT_NOT_SET ? 2 : get.unit();
  static constexpr int64_t kNanosPerUnit[] = {1,
                                             1'000,
                                             1'000'000,
                                             1'000'000'000,
                                             60LL * 1'000'000'000,
                                             3'600LL * 1'000'000'000,
                                             86'400LL * 1'000'000'000};
  const int64_t per = unit >= 0 && unit <= 6 ? kNanosPerUnit[unit] : kNanosPerUnit[2];
  const int64_t timeout = get.timeout();
  if (timeout > kMaxGetWait.count() / per) return kMaxGetWait;
  return std::chrono::nanoseconds(timeout * per);
}

const char* PacketTypeName(int type) {
  const std::string& name = protocol::PacketType_Name(static_cast<protocol::PacketType>(type));
  return name.empty() ? nullptr : name.c_str();
}

}  // namespace

struct Session::NotifyGate {
  std::mutex mu;
  bool open = true;  // guarded by mu
  asio::any_io_executor executor;

  template <typename Fn>
  void Post(Fn&& fn) {
    std::lock_guard lock(mu);
    if (open) asio::post(executor, std::forward<Fn>(fn));
  }
  void Close() {
    std::lock_guard lock(mu);
    open = false;
  }
};

Session::Session(SessionContext* context, asio::ip::tcp::socket socket, std::string peer, std::string remote_host,
                 std::string local_address)
    : context_(context),
      log_(context->logger.get()),
      peer_(std::move(peer)),
      remote_host_(std::move(remote_host)),
      local_address_(std::move(local_address)),
      gate_(std::make_shared<NotifyGate>()),
      channel_(context, &state_, std::move(socket), peer_, local_address_),
      flusher_(context, channel_.executor(), &meter_, local_address_) {
  gate_->executor = channel_.executor();
}

Session::~Session() { gate_->Close(); }

void Session::Start() {
  auto self = shared_from_this();
  const auto on_exit = [log = context_->logger, peer = peer_](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      log->error("canal server: session of client {} failed: {}", peer, ex.what());
    } catch (...) {
      log->error("canal server: session of client {} failed", peer);
    }
  };
  asio::co_spawn(channel_.executor(), Run(self), on_exit);
}

void Session::Close() {
  asio::post(channel_.executor(), [self = shared_from_this()] { self->channel_.Close("canal server is stopping"); });
}

void Session::CloseIfSubscribedTo(std::string destination, std::string reason) {
  asio::post(channel_.executor(), [self = shared_from_this(), destination = std::move(destination),
                                      reason = std::move(reason)] {
    if (!self->subscription_ || self->subscription_->identity.destination != destination) return;
    self->log_->warn("canal server {}: closing the connection of {}: {}", self->local_address_,
                     self->Describe(), reason);
    // The processor answers what the client sent already (an ack there gets
    // 409 from StillServed), then tells the client why instead of a bare close.
    self->evicted_ = reason.empty() ? std::string("this server stopped serving the destination") : reason;
    self->channel_.Interrupt();
    self->channel_.Wake();
  });
}

// ---- coroutines ----------------------------------------------------------

awaitable<void> Session::Run(std::shared_ptr<Session> self) {
  try {
    // Info once logged in (HandleAuth): a flood of connections that never
    // log in must not flood the log.
    log_->debug("canal server {}: client {} connected", local_address_, peer_);
    channel_.Start(self);

    seed_ = RandomSeed();
    protocol::Handshake handshake;
    handshake.set_seeds(seed_);
    EncodePacketFrame(protocol::HANDSHAKE, handshake, &reply_.out);
    reply_.Set();
    if (co_await WriteReply()) {
      std::string frame;
      while (co_await channel_.NextRequest(&frame)) {
        reply_.ready = false;
        reply_.DropGather();  // (a reply left unwritten when the client went away)
        meter_.Begin();
        co_await Dispatch(frame);
        if (state_.closed()) break;
        const size_t reply_bytes = reply_.ready ? reply_.Bytes() : 0;
        if (reply_.ready && !state_.input_over() && !co_await WriteReply()) break;
        meter_.End(reply_bytes);
        if (state_.ending()) {
          EndSubscription();  // the next subscriber need not wait for the linger
          co_await channel_.Linger();
          break;
        }
      }
      if (!evicted_.empty() && subscription_ && state_.phase() == SessionPhase::kServing) {
        FailEvicted();
        if (co_await WriteReply()) {
          EndSubscription();
          co_await channel_.Linger();
        }
      }
    }
  } catch (const std::exception& e) {
    log_->error("canal server {}: {} failed: {}", local_address_, Describe(), e.what());
  }
  channel_.Close("session ended");
  const std::string who = Describe();
  EndSubscription();
  gate_->Close();
  const std::string reason = ClientText(channel_.close_reason(), kLogLineMax, /*escape_quotes=*/false);
  if (state_.logged_in()) {
    log_->info("canal server {}: {} disconnected: {}", local_address_, who, reason);
  } else if (std::string note; context_->log_limiter.Allow("closed before login", &note)) {
    log_->info("canal server {}: {} closed before logging in: {}{}", local_address_, who, reason, note);
  }
  if (context_->on_session_end) context_->on_session_end(this);
}

awaitable<bool> Session::WriteReply() {
  if (flusher_.owed()) {
    // The durability rule: acks before this reply are durable before the
    // client can see it.
    if (Status s = co_await flusher_.BeforeReply(shared_from_this()); !s.ok()) {
      // Refused because another server serves the destination now (HA
      // fence): that server resumes from the durable cursor, so the acked
      // batch comes again: 409. Otherwise (a disk error) nobody knows: 400.
      if (subscription_ && !ServedHere()) {
        Fail(kErrorAckNotApplied, s.ToString() + "; this server no longer serves the destination, so the batch "
                                                 "will be delivered again: reconnect to the active server");
      } else {
        Fail(kErrorAcksNotDurable, s.ToString() + "; reconnect: the batches not durably acked may come again");
      }
      if (state_.closed()) co_return false;  // (the input had closed: nobody to tell)
    }
  }
  const bool written = co_await channel_.Write(&reply_);
  // (Written or failed, no piece of the reply points into it any more.)
  if (reply_.out.capacity() > kReplyKeepBytes) std::string().swap(reply_.out);
  co_return written;
}

// ---- requests --------------------------------------------------------------

void Session::ReplyOk() {
  reply_.DropGather();
  EncodeOkAckFrame(&reply_.out);
  reply_.Set();
}

void Session::FailEvicted() {
  const std::string& destination = subscription_->identity.destination;
  std::string message = "destination " + destination + " is not active on canal server " + local_address_ +
                        " any more (" + evicted_ + ")";
  // The subscribed run's ring says whether batches are out: the meta's
  // records of them may be gone already (a new run here clears them).
  const store::RingStoreStats ring = subscription_->store->stats();
  if (ring.get_sequence == ring.ack_sequence) {
    Fail(kErrorNotServing, message + "; reconnect to the active server");
    return;
  }
  std::vector<meta::Batch> batches;
  if (Status s = subscription_->destination->meta()->ListBatches(subscription_->identity, &batches); !s.ok()) {
    batches.clear();  // the message then names no id
  }
  const std::string which = batches.empty() ? "the batches handed out were"
                            : "batch " + std::to_string(batches.front().id) +
                                  (batches.size() > 1 ? " and later ones were" : " was");
  // Whatever the client acks from now on is not applied here: say so with
  // 409, which also answers an ack already on its way.
  Fail(kErrorAckNotApplied,
       message + "; " + which + " not acked here and will be delivered again: reconnect to the active server");
}

void Session::Fail(proto::WireError wire_code, std::string message) {
  const int32_t code = proto::Code(wire_code);
  // Keyed by the message: a client repeating its mistake costs a few lines.
  channel_.WarnLimited(std::string_view(message).substr(0, 256),
                       "error " + std::to_string(code) + " for " + Describe() + ": " + message);
  meter_.SetError(code);
  const std::string reason = "error " + std::to_string(code) + ": " + message;
  if (state_.input_over()) {
    channel_.Close(reason);  // nobody is left to read the Ack
    return;
  }
  reply_.DropGather();
  EncodeErrorAckFrame(code, message, &reply_.out);
  reply_.Set();
  (void)state_.To(SessionPhase::kEnding);  // from kAwaitingLogin or kServing, the phases left
  channel_.SetCloseReasonIfEmpty(reason);
}

awaitable<void> Session::Dispatch(const std::string& frame) {
  protocol::Packet packet;
  if (!packet.ParseFromString(frame)) {
    Fail(kErrorGeneral, "unparsable packet of " + std::to_string(frame.size()) + " bytes (not a canal Packet)");
    co_return;
  }
  meter_.SetType(packet.type());
  const auto body_error = [&](const char* what) {
    Fail(kErrorGeneral, std::string("unparsable ") + what + " body in a " +
                            protocol::PacketType_Name(packet.type()) + " packet");
  };
  if (!state_.logged_in()) {
    if (packet.type() != protocol::CLIENTAUTHENTICATION) {
      const char* name = PacketTypeName(packet.type());
      Fail(kErrorGeneral, std::string("authentication required: the first packet must be CLIENTAUTHENTICATION, not ") +
                              (name ? name : std::to_string(packet.type()).c_str()));
      co_return;
    }
    protocol::ClientAuth auth;
    if (!auth.ParseFromString(packet.body())) co_return body_error("ClientAuth");
    HandleAuth(auth);
    co_return;
  }
  switch (packet.type()) {
    case protocol::SUBSCRIPTION: {
      protocol::Sub sub;
      if (!sub.ParseFromString(packet.body())) co_return body_error("Sub");
      HandleSubscription(sub);
      break;
    }
    case protocol::UNSUBSCRIPTION: {
      protocol::Unsub unsub;
      if (!unsub.ParseFromString(packet.body())) co_return body_error("Unsub");
      HandleUnsubscription(unsub);
      break;
    }
    case protocol::GET: {
      protocol::Get get;
      if (!get.ParseFromString(packet.body())) co_return body_error("Get");
      if (state_.input_over()) break;  // nobody is left to read the batch
      co_await HandleGet(get);
      break;
    }
    case protocol::CLIENTACK: {
      protocol::ClientAck ack;
      if (!ack.ParseFromString(packet.body())) co_return body_error("ClientAck");
      HandleClientAck(ack);
      break;
    }
    case protocol::CLIENTROLLBACK: {
      protocol::ClientRollback rollback;
      if (!rollback.ParseFromString(packet.body())) co_return body_error("ClientRollback");
      HandleClientRollback(rollback);
      break;
    }
    default: {
      const char* name = PacketTypeName(packet.type());
      Fail(kErrorGeneral,
           std::string("packet type: ") + (name ? name : std::to_string(packet.type()).c_str()) + " is NOT supported!");
      break;
    }
  }
}

void Session::HandleAuth(const protocol::ClientAuth& auth) {
  const SessionServerOptions& o = context_->options;
  if (o.users) {
    // canal.users.file: the user must be in the table (canal.user is one of
    // its users then); the generation first, so a change after it is seen.
    users_generation_ = o.users->generation();
    users_table_ = o.users->Snapshot();
    user_ = users_table_->Find(auth.username());
    if (user_ == nullptr || !user_->PasswordMatches(seed_, auth.password())) {
      // Which of the two is not told: that would let anyone probe for names.
      Fail(kErrorAuthFailed, "auth failed for user:" + ClientText(auth.username()) +
                                 " (no such user, or a wrong password)");
      return;
    }
  } else {
    bool ok = o.user.empty() || o.user == auth.username();
    if (ok && !o.password_stored.empty()) {
      ok = !auth.password().empty() && proto::VerifyScrambledPassword(seed_, auth.password(), o.password_stored);
    }
    if (!ok) {
      Fail(kErrorAuthFailed, "auth failed for user:" + ClientText(auth.username()));
      return;
    }
  }
  state_.LogIn();
  username_ = auth.username();
  log_->info("canal server {}: client {} connected, logged in as user \"{}\"", local_address_, peer_,
             ClientText(username_));
  channel_.LoggedIn(std::chrono::milliseconds(std::max(auth.net_read_timeout(), 0)));
  if (!auth.destination().empty() && !auth.client_id().empty()) {
    if (!Subscribe(auth.destination(), auth.client_id(), auth.filter())) return;
  }
  ReplyOk();
}

bool Session::ParseIdentity(const std::string& destination, const std::string& client_id, std::string_view request,
                            meta::ClientIdentity* identity) {
  if (destination.empty() || client_id.empty()) {
    Fail(kErrorIdentityMissing, "destination or clientId is null (" + std::string(request) + ")");
    return false;
  }
  identity->destination = destination;
  if (!ParseClientId(client_id, &identity->client_id)) {
    Fail(kErrorGeneral, std::string(request) + ": client id \"" + ClientText(client_id) +
                            "\" is not a number between -32768 and 32767");
    return false;
  }
  return MayAccess(*identity);
}

bool Session::MayAccess(const meta::ClientIdentity& identity) {
  const std::shared_ptr<ClientUsers>& users = context_->options.users;
  if (!users) return true;
  if (const uint64_t generation = users->generation(); generation != users_generation_) {
    // The file changed since this session last looked: its user may be gone
    // or changed (what it is reading now is checked below like any request).
    std::shared_ptr<const ClientUserTable> table = users->Snapshot();
    const ClientUser* now = table->Find(username_);
    const std::string who = "user " + ClientText(username_);
    if (now == nullptr) {
      Fail(kErrorAuthFailed, who + " was removed from the users of canal server " + local_address_ +
                                 " (canal.users.file); log in as another user");
      return false;
    }
    if (user_ != nullptr && now->password_stored != user_->password_stored) {
      Fail(kErrorAuthFailed, "the password of " + who + " changed on canal server " + local_address_ +
                                 "; log in again with the new one");
      return false;
    }
    users_table_ = std::move(table);
    user_ = now;
    users_generation_ = generation;
  }
  if (!user_->MayRead(identity.destination)) {
    Fail(kErrorAuthFailed, "user " + ClientText(username_) + " may not read destination " +
                               ClientText(identity.destination) + "; it may read: " + user_->DestinationsText());
    return false;
  }
  if (!user_->MayUseClient(identity.client_id)) {
    Fail(kErrorAuthFailed, "user " + ClientText(username_) + " may not use client id " +
                               std::to_string(identity.client_id) + " (destination " +
                               ClientText(identity.destination) + "); it may use: " + user_->ClientsText());
    return false;
  }
  return true;
}

bool Session::Holds(const meta::ClientIdentity& identity) const {
  return subscription_ && subscription_->identity.SameClient(identity);
}

bool Session::ServedHere() const {
  const std::shared_ptr<Destination> found = context_->registry->Find(subscription_->identity.destination);
  return evicted_.empty() && found != nullptr && found == subscription_->destination && found->running() &&
         found->store() == subscription_->store;  // the run subscribed to, whose ring holds the batches
}

bool Session::StillServed(std::string_view request, proto::WireError code) {
  if (ServedHere()) return true;
  const std::string& destination = subscription_->identity.destination;
  const std::shared_ptr<Destination> found = context_->registry->Find(destination);
  // Say what happened: HA moved it, or (no ZooKeeper) it was restarted or stopped here.
  const std::string why = evicted_.empty() ? context_->registry->WhyNotServed(destination) : evicted_;
  std::string message = std::string(request) + ": destination " + destination;
  if (!evicted_.empty()) {
    message += " is not active on canal server " + local_address_ + " any more (" + why +
               "); reconnect to the active server";
  } else if (found != nullptr && (found != subscription_->destination || found->store() != subscription_->store)) {
    message += " was restarted on canal server " + local_address_ + (why.empty() ? "" : " (" + why + ")") +
               "; subscribe again";
  } else if (found != nullptr) {  // stopping in place (the registry's reasons are about other instances)
    message += " is not running on canal server " + local_address_;
  } else if (context_->registry->Arbitrated()) {
    message += " is not active on canal server " + local_address_ + " any more (" +
               (why.empty() ? std::string("another server is active for it, or this one lost ZooKeeper") : why) +
               "); reconnect to the active server";
  } else {
    message += " was stopped on canal server " + local_address_ + (why.empty() ? "" : " (" + why + ")");
  }
  Fail(code, std::move(message));
  return false;
}

bool Session::Subscribe(const std::string& destination, const std::string& client_id, const std::string& filter) {
  meta::ClientIdentity identity;
  if (!ParseIdentity(destination, client_id, "subscription", &identity)) return false;
  identity.filter = filter;
  if (subscription_ && !Holds(identity)) {
    Fail(kErrorGeneral, "this connection already subscribed " + subscription_->identity.ToString() +
                            "; unsubscribe it before subscribing " + identity.ToString());
    return false;
  }
  if (Holds(identity)) {  // again: a new filter for the same client
    Subscription& sub = *subscription_;
    if (Status s = sub.destination->SetClientFilter(filter); !s.ok()) {
      Fail(kErrorGeneral, "invalid filter \"" + ClientText(filter, kLogLineMax) + "\" for destination " +
                              destination + ": " + std::string(s.message()));
      return false;
    }
    if (Status s = sub.destination->meta()->Subscribe(identity); !s.ok()) {
      Fail(kErrorGeneral, "subscription failed on canal server " + local_address_ + ": " + s.ToString());
      return false;
    }
    sub.identity = identity;
    flusher_.Attach(sub.destination, destination, identity.ToString());
    return true;
  }

  std::shared_ptr<Destination> dest = context_->registry->Find(destination);
  if (!dest) {
    Fail(kErrorNoSuchDestination, "destination " + destination + " does not exist on canal server " +
                                      local_address_ + " (it serves the names in canal.destinations)");
    return false;
  }
  if (!dest->running()) {
    Fail(kErrorNotServing, "destination " + destination + " is not running on canal server " + local_address_);
    return false;
  }
  if (std::string refusal = dest->SubscriptionRefusal(); !refusal.empty()) {
    Fail(kErrorNotServing, refusal);
    return false;
  }
  DestinationHolders::Holder current;
  if (!context_->holders.Acquire(destination, {this, client_id, peer_}, &current)) {
    Fail(kErrorSubscribedByAnother, "destination " + destination + " is already subscribed by client " +
                                        current.client_id + " from " + current.peer + " on canal server " +
                                        local_address_ + "; a destination serves one client at a time");
    return false;
  }
  if (Status s = dest->SetClientFilter(filter); !s.ok()) {
    context_->holders.Release(destination, this);
    Fail(kErrorGeneral, "invalid filter \"" + ClientText(filter, kLogLineMax) + "\" for destination " + destination +
                            ": " + std::string(s.message()));
    return false;
  }
  meta::MetaManager* meta = dest->meta();
  if (Status s = meta->Subscribe(identity); !s.ok()) {
    context_->holders.Release(destination, this);
    Fail(kErrorGeneral, "subscription failed on canal server " + local_address_ + ": " + s.ToString());
    return false;
  }
  // A new consumer starts at the acked position, whatever the last one left.
  if (Status s = meta->ClearAllBatches(identity); !s.ok()) {
    log_->warn("canal server {}: {}: clearing stale batches: {}", local_address_, Describe(), s.ToString());
  }
  std::shared_ptr<store::RingStore> ring = dest->store();
  if (ring == nullptr) {  // stopped between the check above and here
    context_->holders.Release(destination, this);
    Fail(kErrorNotServing, "destination " + destination + " is not running on canal server " + local_address_);
    return false;
  }
  ring->Rollback();
  subscription_ = Subscription{std::move(dest), std::move(ring), identity, client_id};
  flusher_.Attach(subscription_->destination, destination, identity.ToString());
  channel_.SetLabel(" (client id " + client_id + ", destination " + destination + ")");
  meter_.Attach(context_->options.client_stats.get(), destination, peer_, client_id);
  log_->info("canal server {}: {} subscribed (filter \"{}\")", local_address_, Describe(), ClientText(filter));
  return true;
}

void Session::HandleSubscription(const protocol::Sub& sub) {
  if (Subscribe(sub.destination(), sub.client_id(), sub.filter())) ReplyOk();
}

void Session::HandleUnsubscription(const protocol::Unsub& unsub) {
  meta::ClientIdentity identity;
  if (!ParseIdentity(unsub.destination(), unsub.client_id(), "unsubscription", &identity)) return;
  if (Holds(identity)) {
    meta::MetaManager* meta = subscription_->destination->meta();
    RollbackAll();
    if (Status s = FlushAcks(); !s.ok()) {
      Fail(kErrorGeneral, s.ToString());
      return;
    }
    if (Status s = meta->Unsubscribe(identity); !s.ok()) {
      Fail(kErrorGeneral, "unsubscription failed on canal server " + local_address_ + ": " + s.ToString());
      return;
    }
    log_->info("canal server {}: {} unsubscribed", local_address_, Describe());
    // Rolled back and flushed above, and the client is gone from the meta
    // manager: only the destination is left to release.
    context_->holders.Release(identity.destination, this);
    subscription_.reset();
    flusher_.Detach();
    ReplyOk();
    return;
  }
  // Not ours: drop a stale subscription from the meta data, as Canal does,
  // unless another connection is consuming it.
  std::shared_ptr<Destination> dest = context_->registry->Find(identity.destination);
  if (!dest) {
    Fail(kErrorNoSuchDestination, "destination " + identity.destination + " does not exist on canal server " +
                                      local_address_);
    return;
  }
  // (Held across the meta change so that no subscriber comes in between.)
  const bool held_here = subscription_ && subscription_->identity.destination == identity.destination;
  DestinationHolders::Holder current;
  if (!held_here && !context_->holders.Acquire(identity.destination, {this, unsub.client_id(), peer_}, &current)) {
    Fail(kErrorSubscribedByAnother, "destination " + identity.destination + " is subscribed by client " +
                                        current.client_id + " from " + current.peer +
                                        "; only that connection may unsubscribe it");
    return;
  }
  Status s = dest->meta()->Unsubscribe(identity);
  if (!held_here) context_->holders.Release(identity.destination, this);
  if (!s.ok()) {
    Fail(kErrorGeneral, "unsubscription failed on canal server " + local_address_ + ": " + s.ToString());
    return;
  }
  ReplyOk();
}

awaitable<void> Session::HandleGet(const protocol::Get& get) {
  meta::ClientIdentity identity;
  if (!ParseIdentity(get.destination(), get.client_id(), "get", &identity)) co_return;
  if (!Holds(identity)) {
    Fail(kErrorNotSubscribed, identity.ToString() + " should subscribe first (get on canal server " +
                                  local_address_ + ")");
    co_return;
  }
  if (!StillServed("get")) co_return;
  const std::shared_ptr<Destination> dest = subscription_->destination;  // kept across the wait
  const std::shared_ptr<store::RingStore> store = subscription_->store;  // and its ring, across the wait
  const size_t fetch = static_cast<size_t>(get.fetch_size() > 0 ? get.fetch_size() : kDefaultFetchSize);
  // Low latency: the wait ends at a full batch or as soon as the producer has
  // caught up with entries waiting (Canal's rule waits for a full batch).
  const bool low_latency = get.low_latency() || context_->options.low_latency_get;
  const store::RingStore::WaitRule rule =
      low_latency ? store::RingStore::WaitRule::kLowLatency : store::RingStore::WaitRule::kBatch;
  if (const std::optional<std::chrono::nanoseconds> timeout = GetTimeout(get); timeout && !store->Ready(rule, fetch)) {
    const Clock::time_point deadline =
        timeout->count() == 0 ? Clock::time_point::max()
                              : Clock::now() + std::chrono::duration_cast<Clock::duration>(*timeout);
    co_await WaitForBatch(store.get(), fetch, rule, deadline);
    if (state_.input_over()) co_return;  // nobody to answer
    if (!StillServed("get")) co_return;        // (the process may have been frozen meanwhile)
    if (!MayAccess(identity)) co_return;       // (the users file may have changed meanwhile)
  }
  if (Status s = store->TryGet(fetch, &batch_); !s.ok()) {
    Fail(kErrorGeneral, "get from destination " + identity.destination + " on canal server " +
                            local_address_ + " failed: " + s.ToString());
    co_return;
  }
  if (batch_.empty()) {
    meter_.SetEmptyGet();
    if (std::string warning = dest->Warning(); !warning.empty()) {
      // An idle primary and a failing one both give empty batches: say which.
      protocol::Messages messages;
      messages.set_batch_id(-1);
      messages.set_server_warning(std::move(warning));
      EncodePacketFrame(protocol::MESSAGES, messages, &reply_.out);
    } else {
      (void)EncodeMessagesFrame(-1, batch_, &reply_.out);  // cannot be too large
    }
    reply_.Set();
    co_return;
  }
  // The meta's record is the batch's only one: everything the ack needs.
  meta::PositionRange range;
  range.start = batch_.first_position;
  range.end = batch_.last_position;
  if (batch_.safe_position) range.ack = *batch_.safe_position;
  range.store_ack = batch_.end_sequence;
  // (The entries' meta shares the cache line the ring's get just read.)
  for (const store::EntryView& e : batch_.entries) range.rows += e.meta->rows;
  int64_t batch_id = 0;
  if (Status s = dest->meta()->AddBatch(subscription_->identity, range, &batch_id); !s.ok()) {
    // The entries go back to the ring when the session ends.
    Fail(kErrorGeneral, "get on canal server " + local_address_ + " failed: " + s.ToString());
    co_return;
  }
  meter_.Got(range.rows, range.end.timestamp_ms);
  if (get.auto_ack()) {
    // Acked before the reply is written, as Canal does: the ack may free the
    // slots or hand them to the producer, so the entries are copied into the
    // reply first.
    if (Status s = EncodeMessagesFrame(batch_id, batch_, &reply_.out); !s.ok()) {
      Fail(kErrorGeneral, s.ToString());
      co_return;
    }
    reply_.Set();
    if (Status s = AckBatch(batch_id); !s.ok()) Fail(kErrorGeneral, std::string(s.message()));
    co_return;
  }
  // Big entries go to the socket from the ring's slots (no copy into the
  // reply): the batch stays un-acked until WriteReply has written it, since
  // this processor handles the next request (an ack, a rollback, the end of
  // the subscription) only after that, and the reply keeps the ring.
  reply_.DropGather();
  if (Status s = EncodeMessagesFrameGathered(batch_id, batch_, kGatherMinEntryBytes, &reply_.out, &reply_.pieces);
      !s.ok()) {
    Fail(kErrorGeneral, s.ToString());
    co_return;
  }
  reply_.SetGathered(store);
}

awaitable<void> Session::WaitForBatch(store::RingStore* store, size_t batch_size, store::RingStore::WaitRule rule,
                                      Clock::time_point deadline) {
  const uint64_t generation = ++wait_generation_;
  std::weak_ptr<Session> weak = weak_from_this();
  auto on_ready = [gate = gate_, weak, generation] {
    // On the producer's thread: just hand over to the strand.
    gate->Post([weak, generation] {
      if (auto self = weak.lock()) self->OnBatchReady(generation);
    });
  };
  const bool armed = store->NotifyWhen(rule, batch_size, std::move(on_ready));
  if (!armed) co_return;  // ready already, or the store stopped: TryGet tells
  co_await channel_.WaitUntil(deadline);
  store->CancelNotify();
  ++wait_generation_;  // a callback still on its way is now stale
}

void Session::OnBatchReady(uint64_t generation) {
  // (Each wait ends with a new generation, so a callback that comes after
  // its wait has nothing to wake.)
  if (generation == wait_generation_) channel_.Wake();
}

Status Session::AckBatch(int64_t batch_id) {
  Subscription& sub = *subscription_;
  if (channel_.writing()) {
    // The ownership rule (client_channel.h, Reply): never reached, since the
    // processor writes each reply before it reads the next request.
    return Status::Aborted("ack of batch " + std::to_string(batch_id) + " while a reply is being written");
  }
  meta::MetaManager* meta = sub.destination->meta();
  const std::string where = " (" + sub.identity.ToString() + " on canal server " + local_address_ + ")";
  meta::PositionRange removed;
  if (Status s = meta->RemoveBatch(sub.identity, batch_id, &removed); !s.ok()) {
    if (s.IsNotFound()) {
      return Status::NotFound("ack error , clientId:" + sub.client_id_text + " batchId:" + std::to_string(batch_id) +
                              " is not exist , please check" + where);
    }
    return s;  // "... batchId:N is not the firstly:M", Canal's words
  }
  // (Only this session adds batches for its client, to its run's ring: the
  // subscription cleared any older ones, so store_ack points into sub.store.)
  if (Status s = sub.store->Ack(removed.store_ack); !s.ok()) {
    return Status::Aborted("ack of batch " + std::to_string(batch_id) + ": " + std::string(s.message()) + where);
  }
  if (!removed.ack.empty()) {
    if (Status s = meta->UpdateCursor(sub.identity, removed.ack); !s.ok()) {
      return Status::Aborted("ack of batch " + std::to_string(batch_id) + ": " + s.ToString() + where);
    }
  }
  flusher_.Acked();
  meter_.Acked(removed.rows, removed.end.timestamp_ms);
  return Status::OK();
}

void Session::HandleClientAck(const protocol::ClientAck& ack) {
  meta::ClientIdentity identity;
  if (!ParseIdentity(ack.destination(), ack.client_id(), "ack", &identity)) return;
  if (ack.batch_id() == 0) {
    Fail(kErrorBatchIdMissing, "batchId should assign value (ack of " + identity.ToString() + ")");
    return;
  }
  if (ack.batch_id() == -1) return;  // the client acks an empty get: nothing was handed out
  if (!Holds(identity)) {
    Fail(kErrorNotSubscribed, identity.ToString() + " should subscribe first (ack of batch " +
                            std::to_string(ack.batch_id()) + " on canal server " + local_address_ + ")");
    return;
  }
  if (!StillServed("ack", kErrorAckNotApplied)) return;
  if (Status s = AckBatch(ack.batch_id()); !s.ok()) {
    Fail(kErrorGeneral, std::string(s.message()));
    return;
  }
  flusher_.Start(shared_from_this());
}

void Session::HandleClientRollback(const protocol::ClientRollback& rollback) {
  meta::ClientIdentity identity;
  if (!ParseIdentity(rollback.destination(), rollback.client_id(), "rollback", &identity)) return;
  // Canal's clients roll back right after connecting, before they subscribe.
  if (!Holds(identity)) return;
  const int64_t batch_id = rollback.batch_id();
  if (batch_id == -1) return;  // the id of an empty get
  if (batch_id != 0) {
    const std::string where = " (" + identity.ToString() + " on canal server " + local_address_ + ")";
    meta::MetaManager* meta = subscription_->destination->meta();
    meta::PositionRange range;
    std::optional<meta::Batch> first;
    Status s = meta->GetBatch(subscription_->identity, batch_id, &range);
    if (s.IsNotFound()) {
      Fail(kErrorGeneral, "rollback error, clientId:" + subscription_->client_id_text + " batchId:" +
                              std::to_string(batch_id) + " is not exist , please check" + where);
      return;
    }
    if (s.ok()) s = meta->GetFirstBatch(subscription_->identity, &first);
    if (!s.ok()) {
      Fail(kErrorGeneral, "rollback of batch " + std::to_string(batch_id) + " failed: " + s.ToString() + where);
      return;
    }
    // The ring rewinds to the acked position only, so only the oldest batch
    // (with everything after it) can be rolled back.
    if (first && first->id != batch_id) {
      Fail(kErrorGeneral,
           "batchId:" + std::to_string(batch_id) + " is not the firstly:" + std::to_string(first->id) + where);
      return;
    }
  }
  RollbackAll();
}

void Session::RollbackAll() {
  Subscription& sub = *subscription_;
  if (Status s = sub.destination->meta()->ClearAllBatches(sub.identity); !s.ok()) {
    log_->warn("canal server {}: {}: clearing batches: {}", local_address_, Describe(), s.ToString());
  }
  sub.store->Rollback();
}

Status Session::FlushAcks() { return flusher_.FlushNow(); }

void Session::EndSubscription() {
  if (!subscription_) return;
  Subscription& sub = *subscription_;
  sub.store->CancelNotify();
  // Whatever was handed out and not acked goes to the next subscriber.
  RollbackAll();
  if (Status s = FlushAcks(); !s.ok()) log_->error("{}", s.message());
  context_->holders.Release(sub.identity.destination, this);
  subscription_.reset();
  flusher_.Detach();
  meter_.Detach();
}

}  // namespace canal::server
