// CallbackGate: how a callback that may outlive its object (a ZooKeeper watch
// or state listener holds a copy of it) reaches the object only while it lives.
// The object opens the gate on itself once constructed and closes it first
// thing in its destructor; the callback holds the gate by shared_ptr and calls
// through it. Close() takes the gate's lock, so a callback either runs to its
// end before the close returns or finds the gate closed and does nothing.
//
//   const std::shared_ptr<CallbackGate<Impl>> gate_ = std::make_shared<CallbackGate<Impl>>();
//   Impl() { gate_->Open(this); zk->Watch(..., [gate = gate_] { gate->Call([](Impl* i) { i->OnWatch(); }); }); }
//   ~Impl() { gate_->Close(); ... }
#pragma once

#include <mutex>
#include <utility>

namespace canal::coord {

template <typename T>
class CallbackGate {
 public:
  void Open(T* target) {
    std::lock_guard<std::mutex> lock(mu_);
    target_ = target;
  }
  // Runs fn(target) under the gate's lock while it is open; nothing once closed.
  template <typename Fn>
  void Call(Fn&& fn) {
    std::lock_guard<std::mutex> lock(mu_);
    if (target_ != nullptr) std::forward<Fn>(fn)(target_);
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    target_ = nullptr;
  }

 private:
  std::mutex mu_;
  T* target_ = nullptr;  // guarded by mu_; null until opened and once closed
};

}  // namespace canal::coord
