// The big non-negative integers of Java's float-to-text digit generation
// (java_float_text.cc), for values past 124 bits: B, S, M and 10 S of doubles
// with large or tiny exponents. Internal to parser/.
//
// Little-endian 64-bit words, fixed capacity, no allocation. The largest value
// generated (10 S for the smallest subnormal, normalised) is under 800 bits.
#pragma once

#include <bit>
#include <cstdint>

namespace canal::render::internal {

class FloatTextBigNat {
 public:
  static constexpr int kWords = 20;

  // value = 5^p5
  void SetPow5(int p5) {
    n_ = 1;
    w_[0] = 1;
    constexpr int kStep = 27;  // 5^27 is the largest power of five in 64 bits
    constexpr uint64_t kPow5Step = 7450580596923828125ULL;
    for (; p5 >= kStep; p5 -= kStep) MulSmall(kPow5Step);
    uint64_t rest = 1;
    for (; p5 > 0; --p5) rest *= 5;
    if (rest != 1) MulSmall(rest);
  }

  void MulSmall(uint64_t f) {
    uint64_t carry = 0;
    for (int i = 0; i < n_; ++i) {
      const u128 p = u128{w_[i]} * f + carry;
      w_[i] = static_cast<uint64_t>(p);
      carry = static_cast<uint64_t>(p >> 64);
    }
    if (carry != 0 && n_ < kWords) w_[n_++] = carry;
  }

  void ShiftLeft(int bits) {
    if (n_ == 0 || bits <= 0) return;
    const int words = bits / 64;
    const int rem = bits % 64;
    int n = n_ + words + 1;
    if (n > kWords) n = kWords;  // not reached for finite doubles; keeps writes in bounds
    for (int i = n - 1; i >= 0; --i) {
      const int src = i - words;
      const uint64_t hi = src >= 0 && src < n_ ? w_[src] : 0;
      const uint64_t lo = src >= 1 && src - 1 < n_ ? w_[src - 1] : 0;
      w_[i] = rem == 0 ? hi : (hi << rem) | (lo >> (64 - rem));
    }
    n_ = n;
    Trim();
  }

  // The left shift that leaves exactly four zero bits above the top word's
  // highest one: then B < 10 S has as many words as S, and 10 S fits them.
  int NormalizingShift() const {
    const int zeros = n_ == 0 ? 64 : std::countl_zero(w_[n_ - 1]);
    return zeros < 4 ? 60 + zeros : zeros - 4;
  }

  int Compare(const FloatTextBigNat& o) const {
    if (n_ != o.n_) return n_ < o.n_ ? -1 : 1;
    for (int i = n_ - 1; i >= 0; --i) {
      if (w_[i] != o.w_[i]) return w_[i] < o.w_[i] ? -1 : 1;
    }
    return 0;
  }

  // True when a + b >= *this. Decided from the top words when they leave no
  // doubt (nearly always), else by adding.
  bool ReachedBySum(const FloatTextBigNat& a, const FloatTextBigNat& b) const {
    if (a.n_ > n_ || b.n_ > n_) return true;
    if (n_ == 0) return true;
    const int top = n_ - 1;
    const u128 sum = u128{a.Word(top)} + b.Word(top);
    const u128 mine = w_[top];
    if (sum > mine) return true;        // a + b >= sum * 2^64k > this
    if (sum + 2 <= mine) return false;  // a + b < (sum + 2) * 2^64k <= this
    FloatTextBigNat total = a;
    total.Add(b);
    return Compare(total) <= 0;
  }

  void Add(const FloatTextBigNat& o) {
    const int n = n_ > o.n_ ? n_ : o.n_;
    uint64_t carry = 0;
    for (int i = 0; i < n; ++i) {
      const u128 s = u128{Word(i)} + o.Word(i) + carry;
      w_[i] = static_cast<uint64_t>(s);
      carry = static_cast<uint64_t>(s >> 64);
    }
    n_ = n;
    if (carry != 0 && n_ < kWords) w_[n_++] = carry;
  }

  // One digit step: returns q = floor(*this / s) and leaves 10 * (*this mod s).
  // `s` is normalised (NormalizingShift), so with *this < 10 s both have the
  // same number of words, and the quotient of the top words is never too
  // small and at most a little too large.
  int DivStep(const FloatTextBigNat& s) {
    uint64_t q = 0;
    if (n_ >= s.n_ && s.n_ > 0) {
      const int top = s.n_ - 1;
      // B < 10 S always (Java's estimate of the decimal exponent is never too
      // low); a longer *this would be a broken invariant: capped, never a hang.
      q = n_ > s.n_ ? 9 : w_[top] / s.w_[top];
      if (q > 0) {
        // *this -= q * s; `owed` is what the words above n_ would have to give.
        uint64_t carry = 0, borrow = 0;
        for (int i = 0; i < n_; ++i) {
          const u128 p = (i < s.n_ ? u128{s.w_[i]} * q : u128{0}) + carry;
          carry = static_cast<uint64_t>(p >> 64);
          const auto lo = static_cast<uint64_t>(p);
          const uint64_t x = w_[i];
          const uint64_t d = x - lo;
          const uint64_t d2 = d - borrow;
          borrow = (x < lo ? 1 : 0) + (d < borrow ? 1 : 0);
          w_[i] = d2;
        }
        u128 owed = u128{carry} + borrow;
        while (owed != 0) {  // too large an estimate: add s back
          uint64_t c = 0;
          for (int i = 0; i < n_; ++i) {
            const u128 t = u128{w_[i]} + (i < s.n_ ? s.w_[i] : 0) + c;
            w_[i] = static_cast<uint64_t>(t);
            c = static_cast<uint64_t>(t >> 64);
          }
          owed -= c;
          --q;
        }
      }
      Trim();
    }
    MulSmall(10);
    return static_cast<int>(q);
  }

 private:
  using u128 = unsigned __int128;

  uint64_t Word(int i) const { return i < n_ ? w_[i] : 0; }

  void Trim() {
    while (n_ > 0 && w_[n_ - 1] == 0) --n_;
  }

  uint64_t w_[kWords];
  int n_ = 0;
};

}  // namespace canal::render::internal
