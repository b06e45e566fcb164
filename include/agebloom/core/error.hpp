// Errors as values: the core neither throws nor allocates, so every fallible
// call returns a Status or an Expected<T> carrying an Errc and a static message.
//
// Creation validates and says why; the data plane (insert/contains) cannot fail
// for count windows. Time windows can: time going backwards is reported by
// advance(), never turned into corruption.
#pragma once

#include <cstdint>
#include <type_traits>

namespace agebloom {

// One code per distinct invalid input, so a caller (or a test) can tell them apart.
enum class Errc : uint8_t {
  ok = 0,
  window_zero,                  // count window of 0 insertions
  time_span_zero,               // time window of 0 ticks
  fpr_out_of_range,             // target false-positive rate not in (0, 1)
  k_out_of_range,               // hash functions per key: 1..kMaxK (and <= block bits)
  l_out_of_range,               // APBF generations in the window: 1..kMaxL
  segments_out_of_range,        // r (or N for the ring) outside 1..kMaxSegments
  window_smaller_than_segments, // a count window shorter than its segment count
  block_size_invalid,           // block size not a power of two in {64, 128, 256, 512}
  bits_per_block_invalid,       // bits set per block b: 0, > B, not a power of two, or b·log2(B/b) > 64
  budget_too_small,             // memory budget below the structure's minimum
  capacity_zero,                // time window without an expected insertion count
  arena_too_small,              // the caller's arena cannot hold the structure
  arena_misaligned,             // alignment not a power of two
  time_went_backwards,          // now < the last time the filter saw
  too_large,                    // sizes beyond kMaxStructureBits (an FPR too small to build)
  capacity_too_small,           // an initial capacity below the structure's minimum (time-limited: l)
  slice_budget_too_small,       // a memory budget that cannot hold the minimum k+l slices (time-limited)
  cell_bits_invalid,            // stable BF: bits per cell d not 1, 2, 4 or 8
  decrements_invalid,           // stable BF: cells decremented per insertion p out of 1..cells
  ring_too_small,               // counting BF: the hash ring cannot hold the window's insertions
  timer_bits_invalid,           // timing filters: bits per timer outside 3..32, or too few for T_Ω
  block_invalid,                // block timing: block size 0 or beyond the window
  padding_invalid,              // timing filters: padding beyond the window
  divisor_invalid,              // clock filter: resolution divisor outside 1..7
  prior_invalid,                // inference: a prior p_x outside (0, 1) or not finite
  penalty_invalid,              // inference: a penalty <= 0 or not finite
  inference_unsupported,        // inference: the structure (or its window kind) keeps no posterior
  distinct_model_invalid,       // inference: a D(j) model without items, or samples not increasing
};

// A static English sentence for each code (what() of Status, Expected and Error).
constexpr const char* message(Errc code) noexcept {
  switch (code) {
    case Errc::ok: return "ok";
    case Errc::window_zero: return "window must hold at least one insertion";
    case Errc::time_span_zero: return "time window must span at least one tick";
    case Errc::fpr_out_of_range: return "false-positive rate must lie strictly between 0 and 1";
    case Errc::k_out_of_range: return "number of hash functions k is out of range";
    case Errc::l_out_of_range: return "number of window generations l is out of range";
    case Errc::segments_out_of_range: return "number of segments is out of range";
    case Errc::window_smaller_than_segments:
      return "count window is smaller than the number of segments";
    case Errc::block_size_invalid: return "block size must be 64, 128, 256 or 512 bits";
    case Errc::bits_per_block_invalid:
      // b alone can be fine and still refused: the b parts' offsets come
      // from one 64-bit hash (APBBF, Sec. 6), so b·log2(B/b) must fit in it.
      return "bits per block b must be a power of two no larger than the block B, and b·log2(B/b) at most 64 "
             "(b = 1..8 for B = 512)";
    case Errc::budget_too_small: return "memory budget is below the structure's minimum";
    case Errc::capacity_zero: return "expected insertions per window must be at least one";
    case Errc::arena_too_small: return "arena is too small for the structure";
    case Errc::arena_misaligned: return "alignment must be a power of two";
    case Errc::time_went_backwards: return "time went backwards";
    case Errc::capacity_too_small: return "initial capacity is below the structure's minimum (one insertion per generation)";
    case Errc::slice_budget_too_small:
      return "memory budget cannot hold the minimum k+l slices of the time-limited filter";
    case Errc::cell_bits_invalid: return "bits per cell must be 1, 2, 4 or 8";
    case Errc::decrements_invalid: return "cells decremented per insertion must be between 1 and the cell count";
    case Errc::ring_too_small: return "the hash ring cannot hold the window's insertions";
    case Errc::timer_bits_invalid:
      return "bits per timer must be 3..32 and hold every timestamp (T_max + 2 values)";
    case Errc::block_invalid: return "block size must be at least 1 and at most the window";
    case Errc::padding_invalid: return "padding must not exceed the window";
    case Errc::divisor_invalid: return "clock resolution divisor must be 1..7 (15 clock slots)";
    case Errc::prior_invalid: return "prior probability p_x must lie strictly between 0 and 1";
    case Errc::penalty_invalid: return "penalties must be finite and greater than 0";
    case Errc::inference_unsupported:
      return "posteriors need a timing filter (tbf or btbf) over a count window";
    case Errc::distinct_model_invalid:
      return "distinct-items model needs a universe of at least one item, or samples increasing in j and D(j)";
    case Errc::too_large:
      return "the structure would exceed 2^50 bits: the false-positive rate is too small (or the window too "
             "large) to build";
  }
  return "unknown error";
}

// An error code as a value of its own (what Status::error() and Expected::error() give).
struct Error {
  Errc code = Errc::ok;  // never ok in an Error that reports a failure
  constexpr const char* what() const noexcept { return message(code); }  // message(code)
  constexpr bool operator==(const Error&) const = default;  // same code
};

// [[nodiscard]] so an ignored error is a compiler warning, not a silent loss.
class [[nodiscard]] Status {
 public:
  constexpr Status() noexcept = default;  // ok
  constexpr Status(Errc code) noexcept : code_(code) {}  // NOLINT: implicit by design
  constexpr Status(Error e) noexcept : code_(e.code) {}  // NOLINT
  constexpr bool ok() const noexcept { return code_ == Errc::ok; }          // success
  constexpr explicit operator bool() const noexcept { return ok(); }      // ok()
  constexpr Errc code() const noexcept { return code_; }                  // Errc::ok or the failure
  constexpr const char* what() const noexcept { return message(code_); }  // message(code())
  constexpr Error error() const noexcept { return Error{code_}; }         // the code as an Error

 private:
  Errc code_ = Errc::ok;
};

// A value or an Error. Restricted to trivially copyable T (filter handles,
// configs, pointers): no destructors to run, so it stays freestanding-friendly.
template <class T>
class [[nodiscard]] Expected {
  static_assert(std::is_trivially_copyable_v<T>, "Expected<T> holds trivially copyable values");

 public:
  constexpr Expected(const T& value) noexcept : value_(value), code_(Errc::ok) {}  // NOLINT
  constexpr Expected(Errc code) noexcept : code_(code) {}                         // NOLINT
  constexpr Expected(Error e) noexcept : code_(e.code) {}                         // NOLINT
  constexpr Expected(Status s) noexcept : code_(s.code()) {}                      // NOLINT

  constexpr bool has_value() const noexcept { return code_ == Errc::ok; }   // a value, no error
  constexpr explicit operator bool() const noexcept { return has_value(); }  // has_value()
  // Precondition: has_value(). Checked only in debug builds (data-plane rule).
  constexpr T& value() noexcept { return value_; }
  constexpr const T& value() const noexcept { return value_; }  // as above, read-only
  constexpr T* operator->() noexcept { return &value_; }  // the value (precondition: has_value())
  constexpr const T* operator->() const noexcept { return &value_; }  // as above, read-only
  constexpr T& operator*() noexcept { return value_; }  // the value (precondition: has_value())
  constexpr const T& operator*() const noexcept { return value_; }  // as above, read-only
  constexpr Error error() const noexcept { return Error{code_}; }         // the failure (precondition: !has_value())
  constexpr Errc code() const noexcept { return code_; }                  // Errc::ok when has_value()
  constexpr const char* what() const noexcept { return message(code_); }  // message(code())

 private:
  T value_{};
  Errc code_;
};

}  // namespace agebloom
