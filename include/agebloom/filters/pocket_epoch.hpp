// Guarded epoch filter of fingerprints: one 64-byte line per key, FPR 1% in
// about 17.7 bits per item.
//
// The Bloom line layouts pay for one line per key with the variance of the
// keys per line: a line's load is Poisson, and a Bloom lane sized for the
// average is too full on the busy lines (27.2 bits per item at 1% for
// interleaved, 21.0 for interleaved-128; lab/one_line_lanes.py shows no
// one-line Bloom layout reaches 18). Here a line is a dictionary of 12-bit
// fingerprints (pocket_line.hpp: the prefix filter's pocket dictionary, 4
// header bits and 8 body bits per entry), so a line holds 40 keys whatever
// their pattern, and each entry carries the segment it was last inserted in
// as a 3-bit tag. The window is the guarded epoch filter's (Guarded Epoch
// Bloom Filters, Algorithm 1): r + 1 = 8 segments, epochs of ⌈W/r⌉, a
// rotation clears the oldest segment, which here removes the entries tagged
// with it (Lemma 1 and Prop. 1 hold unchanged: an entry lives exactly as long
// as a segment's bits would).
//
//   - test_and_insert finds the key's fingerprint in its line: found, it is a
//     duplicate and the entry is retagged current (the key was just seen);
//     not found, the entry is added, tagged current;
//   - a full line keeps its 40 smallest fingerprints and sends the largest to
//     a spare line (the prefix filter's spare, Sec. 3), remembering which
//     tags spilled and the smallest fingerprint that did (`floor`), so that
//     only a key whose line spilled and whose fingerprint is at or above the
//     floor reads a second line: a few percent of operations (measured,
//     docs/PERFORMANCE.md);
//   - a spare line that is full too marks the tag instead: every key that
//     reaches it is then reported seen until that segment is cleared (false
//     positives, never a false negative; counted by saturations()).
//
// model_fpr() is Prop. 2's union over segments done on fingerprints: a
// non-member matches when its list in its line holds its remainder, with the
// line's load Poisson at the window's peak (r + 1 full epochs), plus the
// spare's share (pocket_epoch_fpr below). Tested against measurement.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/arena.hpp"
#include "agebloom/core/bits.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/isa.hpp"
#include "agebloom/core/math.hpp"
#include "agebloom/core/window.hpp"
#include "agebloom/filters/bulk_ops.hpp"
#include "agebloom/filters/lane_lines.hpp"
#include "agebloom/filters/pocket_line.hpp"

namespace agebloom {

// PocketEpochConfig::for_fpr's named parameters, read at the call site.
struct PocketEpochSizing {
  uint32_t r = 7;         // live epochs; r + 1 <= 8 segments (the tags); 7: the smallest peak load
  uint64_t capacity = 0;  // expected insertions per time window
};

// How many times a snapshot's excess the spare holds at the peak: a spilled
// entry stays its whole life while its line's load falls back (measured 24.2
// entries per spare line at the peak where the snapshot says 16).
inline constexpr double kPocketSpareStay = 1.5;

// The pocket epoch filter's model, for `lines` primary lines, `spare` spare
// lines and `load` entries at the window's peak: the chance a non-member
// is reported present.
//   bin:   Σ_x Pois_λ(x) (1 − (1 − p)^min(x, C)),  λ = load / lines,
//          p = 1 / (quotients · 2^remainder bits): the chance one entry has
//          the query's fingerprint (the query's is uniform, so this holds for
//          the C smallest of x as for any C of them);
//   spare: P(X > C) · [Σ_y Pois_μ(y)(1 − (1 − p)^min(y, C)) + P(Y > C)],
//          μ = g · lines · E[(X − C)+] / spare: a query reads the spare only if
//          its line spilled (approximated by P(X > C): a line's marks outlive
//          its overflow, the floor makes reads rarer; the result, measured at
//          or under the model, is what the tests check), and a saturated
//          spare line answers yes; g = kPocketSpareStay.
constexpr double pocket_epoch_fpr(double lines, double spare, double load) noexcept {
  if (load <= 0) return 0.0;
  if (!(lines > 0) || !(spare > 0)) return 1.0;
  constexpr uint32_t C = pocket::kCapacity;
  constexpr double p = 1.0 / pocket::kFingerprints;
  double miss[C + 1] = {};  // (1 − p)^s
  miss[0] = 1.0;
  for (uint32_t s = 1; s <= C; ++s) miss[s] = miss[s - 1] * (1.0 - p);
  // Σ_x Pois(x) f(min(x, C)) and the tail terms, for one Poisson mean.
  struct Sums {
    double fp, over, excess;
  };
  auto sums = [&](double lambda) -> Sums {
    if (!(lambda <= 512)) return {1.0, 1.0, lambda};  // beyond any useful size: lines are full
    double sigma = 1.0;
    while (sigma * sigma < lambda) sigma += 1.0;
    const uint32_t J = static_cast<uint32_t>(lambda + 14.0 * sigma + 20.0);
    Sums s{0, 0, 0};
    double term = math::exp(-lambda);
    for (uint32_t x = 0; x <= J; ++x) {
      if (x > 0) term = term * lambda / x;
      s.fp += term * (1.0 - miss[x < C ? x : C]);
      if (x > C) s.over += term, s.excess += term * (x - C);
    }
    return s;
  };
  const Sums bin = sums(load / lines);
  const double mu = kPocketSpareStay * lines * bin.excess / spare;
  const Sums sp = sums(mu);
  const double fp = bin.fp + bin.over * (sp.fp + sp.over);
  return fp < 1.0 ? fp : 1.0;
}

// The spare line of fingerprint f (< pocket::kFingerprints) spilled from
// primary line b, among `spare_lines`: from b and f alone, so a line can move
// an entry there without the key that made it. Shared with the queue epoch
// filter (queue_epoch.hpp), whose fingerprints are the same 3840 values.
constexpr uint64_t spare_line_of(uint64_t b, uint32_t f, uint64_t spare_lines) noexcept {
  return reduce(mix64(b * pocket::kFingerprints + f), spare_lines);
}
// What a spare stores for f from line b: f turned by an offset drawn from b.
// Spilled fingerprints are their lines' largest, and so are the queries that
// read the spare (at or above the floor): stored as they are, the two would
// meet more often than uniform fingerprints do (measured on a steady stream
// at the 1% sizing: FPR 1.05% unturned, 0.96% turned, for a 1.00% model).
// Turned per line, the entries of other lines look uniform to a query, while
// a line's own stay equal to themselves.
constexpr uint32_t spare_fingerprint(uint64_t b, uint32_t f) noexcept {
  const uint32_t turn = static_cast<uint32_t>(reduce(mix64(~b), pocket::kFingerprints));
  const uint32_t v = f + turn;
  return v < pocket::kFingerprints ? v : v - pocket::kFingerprints;
}

// The pocket epoch filter's shape: what for_fpr() returns and
// PocketEpochFilter::create() builds.
struct PocketEpochConfig {
  static constexpr uint32_t kSpareLoad = 16;  // mean entries per spare line: a full one is ~1e-7 rare
  // The most entries per line at the peak the sizing takes: where the bits
  // per item are fewest (17.65 at 37; past it the spare's lines cost more than
  // the primary lines save). Beyond ~45 the model also drifts: the floor
  // lets more queries meet the spare. A target above what 37 gives (FPR
  // ~1.04%) gets the 37-entry shape, at an FPR under the target.
  static constexpr double kMaxLoad = 37.0;

  Window window = Window::count(0);  // the window kept (count or time)
  uint32_t r = 7;           // live epochs; r + 1 <= 8 segments
  uint64_t lines = 0;       // primary 64-byte lines
  uint64_t spare_lines = 0; // spare 64-byte lines (at least 1)
  uint64_t capacity = 0;    // expected insertions per window (time windows)
  uint64_t epoch_capacity = 0;  // time windows: an epoch also ends after this many insertions
                                // (--on-flood keep-fpr); 0 = time alone

  constexpr bool operator==(const PocketEpochConfig&) const = default;  // field by field
  constexpr uint32_t segments() const noexcept { return r + 1; }  // r + 1
  // Insertions (count) or ticks (time) per epoch: ℓ = ⌈span / r⌉.
  constexpr uint64_t epoch_length() const noexcept { return agebloom::epoch_length(window, r); }
  // Expected insertions one segment receives while current: items / r (or epoch_capacity).
  constexpr double epoch_load() const noexcept { return agebloom::epoch_load(window, r, capacity, epoch_capacity); }
  // Entries held at the window's peak: r + 1 full epochs.
  constexpr double peak_load() const noexcept { return segments() * epoch_load(); }

  // The Errc of the first field out of range, or ok.
  constexpr Status validate() const noexcept {
    if (Status s = window.validate(); !s) return s;
    if (r == 0 || r >= pocket::kTags) return Errc::segments_out_of_range;
    if (!window.is_time() && window.span < r) return Errc::window_smaller_than_segments;
    if (lines == 0 || spare_lines == 0) return Errc::budget_too_small;
    if (lines > kMaxStructureBits / 512 || spare_lines > kMaxStructureBits / 512 - lines) return Errc::too_large;
    return Errc::ok;
  }

  // Prop. 2 on fingerprints (pocket_epoch_fpr).
  constexpr double model_fpr() const noexcept {
    return pocket_epoch_fpr(static_cast<double>(lines), static_cast<double>(spare_lines), peak_load());
  }
  // Bits of memory per window item (per expected insertion for time windows).
  constexpr double bits_per_item() const noexcept {
    const uint64_t n = capacity ? capacity : window.span;
    return static_cast<double>(lines + spare_lines) * 512 / static_cast<double>(n ? n : 1);
  }
  // The share of operations expected to read a spare line as well, estimated
  // by the spare's share of the live entries at the peak (a key among them
  // reads it). New keys at or above their line's floor read it too, which
  // this leaves out: 3.9% at the 1% sizing, measured 4.4% on a steady
  // stream of new keys (docs/PERFORMANCE.md).
  constexpr double spare_read_share() const noexcept { return excess_share(peak_load() / static_cast<double>(lines)); }

  // The spare lines for `lines` primary ones: the spilled entries the spare
  // holds at the peak (kPocketSpareStay times a snapshot's) over kSpareLoad,
  // at least one.
  constexpr uint64_t spare_for(uint64_t primary) const noexcept {
    const double lambda = peak_load() / static_cast<double>(primary);
    const double spare = static_cast<double>(primary) * lambda * excess_share(lambda) / kSpareLoad;
    return spare < 1.0 ? 1 : math::ceil_to_u64(spare);
  }

  // The spare's share of the entries, for a Poisson(λ) line load:
  // kPocketSpareStay · E[(X − C)+] / λ.
  static constexpr double excess_share(double lambda) noexcept {
    if (!(lambda > 0)) return 0.0;
    if (!(lambda <= 512)) return 1.0;
    double excess = 0.0, term = math::exp(-lambda);
    const uint32_t J = static_cast<uint32_t>(lambda + 200);
    for (uint32_t x = 1; x <= J; ++x) {
      term = term * lambda / x;
      if (x > pocket::kCapacity) excess += term * (x - pocket::kCapacity);
    }
    const double share = kPocketSpareStay * excess / lambda;
    return share < 1.0 ? share : 1.0;
  }

  // Fewest primary lines (with their spare) whose model FP is at most `fpr`.
  static constexpr Expected<PocketEpochConfig> for_fpr(Window window, double fpr,
                                                       PocketEpochSizing sizing = {}) noexcept {
    if (!(fpr > 0.0 && fpr < 1.0)) return Errc::fpr_out_of_range;
    PocketEpochConfig c;
    c.window = window;
    c.r = sizing.r;
    c.capacity = sizing.capacity ? sizing.capacity : (window.is_time() ? 0 : window.span);
    c.lines = c.spare_lines = 1;
    if (Status s = c.validate(); !s) return s;
    if (c.capacity == 0) return Errc::capacity_zero;
    auto meets = [&](uint64_t lines) {
      c.lines = lines;
      if (c.peak_load() > kMaxLoad * static_cast<double>(lines)) return false;
      c.spare_lines = c.spare_for(lines);
      return c.spare_lines <= kMaxStructureBits / 512 - lines && c.model_fpr() <= fpr;
    };
    // Where the search starts: the lines whose mean load times p is the
    // target (an estimate, 1 - (1 - p)^x <= x·p; fewest_lines searches down
    // from it as well as up).
    const double per_line = fpr * pocket::kFingerprints;
    const double start = c.peak_load() / (per_line < kMaxLoad ? per_line : kMaxLoad);
    auto lines = fewest_lines(start < 1 ? 1 : start, meets);
    if (!lines) return lines.error();
    c.lines = *lines;
    c.spare_lines = c.spare_for(c.lines);
    return c;
  }
};

// What the two fingerprint filters with a spare (this one and the queue
// epoch filter, queue_epoch.hpp) share: their arena (the epoch ring and two
// counters, then the primary lines and the spare lines), how it is carved,
// and what it tells the caller. Config is the filter's config (a
// PocketEpochConfig); Line a 64-byte line of kCapacity entries.
template <class Config, class Line>
class SparedLines {
 public:
  // The arena create() carves for c, from any 64-byte aligned base (c's error if invalid).
  static constexpr Expected<size_t> bytes_needed(const Config& c) noexcept {
    if (Status s = c.validate(); !s) return s;
    return ArenaLayout{}.add(sizeof(State)).add((c.lines + c.spare_lines) * sizeof(Line)).bytes();
  }

  const Config& config() const noexcept { return cfg_; }  // the configuration it was created with
  uint64_t insertions() const noexcept { return state_->ring.insertions; }  // insertions so far
  // The epoch clock: when the current epoch began and how full it is (flood watch).
  const EpochSchedule& epoch_schedule() const noexcept { return state_->ring.schedule; }
  uint32_t current_segment() const noexcept { return state_->ring.current; }  // the segment taking insertions
  // Insertions and test_and_inserts that read a spare line (the second access).
  uint64_t spare_reads() const noexcept { return state_->spare_reads; }
  // Entries a full spare line could not hold (its segment then reads as seen).
  uint64_t saturations() const noexcept { return state_->saturations; }
  // Whether `image`, a saved copy of this filter's arena, holds a state this
  // filter can be in: dedup/snapshot.hpp asks before a load, since a crafted
  // image passes its checksum. The header must keep this filter's epoch
  // schedule and name one of its segments, and every line, primary or
  // spare, be well formed (Line::well_formed: its header, counts and tags).
  bool accepts_image(const ArenaImage& image) const noexcept {
    if (!state_->ring.accepts_image(image, cfg_.segments())) return false;
    for (uint64_t i = 0; i < cfg_.lines + cfg_.spare_lines; ++i) {
      Line line;
      if (!image.read(lines_, line, i) || !line.well_formed(cfg_.segments())) return false;
    }
    return true;
  }
  // Entries held over entries the lines can hold (control plane: reads every line).
  double fill_ratio() const noexcept {
    uint64_t n = 0;
    for (uint64_t i = 0; i < cfg_.lines + cfg_.spare_lines; ++i) n += lines_[i].count();
    return static_cast<double>(n) / (static_cast<double>(cfg_.lines + cfg_.spare_lines) * pocket::kCapacity);
  }

 protected:
  struct State {
    EpochRingHeader ring;  // core/window.hpp; `current`: the segment insertions join
    uint64_t spare_reads;
    uint64_t saturations;
  };

  // Validates c, carves its state from arena and clears it: empty lines,
  // segment 0 current. On error the arena is left as it was.
  Status carve(const Config& c, Arena& arena) noexcept {
    if (Status s = c.validate(); !s) return s;
    const size_t mark = arena.used();
    auto state = arena.carve_array<State>(1);
    auto lines = arena.carve_array<Line>(c.lines + c.spare_lines);
    if (!state || !lines) {
      arena.rewind(mark);
      return Errc::arena_too_small;
    }
    cfg_ = c;
    state_ = *state;
    lines_ = *lines;
    spare_ = *lines + c.lines;
    for (uint64_t i = 0; i < c.lines + c.spare_lines; ++i) lines_[i] = Line{};
    state_->ring.start(c.window.kind, c.epoch_length(), c.epoch_capacity);
    state_->spare_reads = 0;
    state_->saturations = 0;
    return Errc::ok;
  }

  Config cfg_{};
  State* state_ = nullptr;
  Line* lines_ = nullptr;  // the primary lines, then the spare lines
  Line* spare_ = nullptr;
};

// The pocket epoch filter over an arena: a handle; its state (the epoch
// ring, two counters, the primary lines then the spare lines) lives in the
// arena. Every operation has two bodies, the same code with its select done
// by broadword arithmetic or by BMI2's pdep (pocket_line.hpp), chosen at
// create() by cpu_has_fast_pdep(); they give the same verdicts and state
// (tested). The bulk forms are BulkOps' (prefetch 16 keys ahead).
class PocketEpochFilter : public BulkOps<PocketEpochFilter, 16>,
                          public SparedLines<PocketEpochConfig, pocket::PocketLine> {
 public:
  constexpr PocketEpochFilter() noexcept = default;  // empty: create() one

  // Validates c, carves the filter's state from arena and clears it; on error
  // the arena is left as it was.
  static Expected<PocketEpochFilter> create(const PocketEpochConfig& c, Arena& arena) noexcept {
    PocketEpochFilter f;
    if (Status s = f.carve(c, arena); !s) return s;
    f.use_pdep(true);
    return f;
  }

  // Time windows: expires what ended by `now` (time_went_backwards, and no change,
  // if now is before the last now). Count windows: no-op. Call it before a burst.
  Status advance(uint64_t now) noexcept {
    return state_->ring.schedule.advance(now, cfg_.segments(), [this] { pdep_ ? rotate<true>() : rotate<false>(); });
  }

  // Its fingerprint in its line, else (if the line spilled past the floor)
  // in its spare line, or that spare line saturated.
  bool contains(KeyHash h) const noexcept { return pdep_ ? contains<true>(h) : contains<false>(h); }

  // Records h as inserted now (retags it if present).
  void insert(KeyHash h) noexcept { pdep_ ? insert<true>(h) : insert<false>(h); }

  // contains(h) then insert(h): the dedup primitive. One lookup when no
  // epoch ends here (the find that answers also places the key).
  bool test_and_insert(KeyHash h) noexcept { return pdep_ ? test_and_insert<true>(h) : test_and_insert<false>(h); }

  // Prefetches h's line (the bulk forms call it ahead); the spare line is
  // read by a few percent of keys, and not prefetched.
  void prefetch(KeyHash h) const noexcept { bits::prefetch_write(&lines_[line_of(h)]); }

  // Whether the select runs on pdep: where the CPU has it fast and `allow`
  // (create() allows it; tests and benchmarks switch it off to compare).
  void use_pdep(bool allow) noexcept { pdep_ = allow && cpu_has_fast_pdep(); }
  bool pdep() const noexcept { return pdep_; }  // the body in use

 private:
  uint64_t line_of(KeyHash h) const noexcept { return reduce(h.h1, cfg_.lines); }
  // 12 bits from h2's high half (h1 placed the line): uniform over the
  // kFingerprints quotient-remainder pairs.
  static pocket::Fingerprint fingerprint(KeyHash h) noexcept {
    return pocket::Fingerprint::of(static_cast<uint32_t>(((h.h2 >> 32) * pocket::kFingerprints) >> 32));
  }
  pocket::PocketLine& spare_of(uint64_t b, pocket::Fingerprint f) const noexcept {
    return spare_[spare_line_of(b, f.value(), cfg_.spare_lines)];
  }
  static pocket::Fingerprint spare_key(uint64_t b, pocket::Fingerprint f) noexcept {
    return pocket::Fingerprint::of(spare_fingerprint(b, f.value()));
  }
  // Whether a key missing from its line may be in the spare: the line sent
  // entries of a live tag there, and every one it sent is at or above floor.
  static bool reads_spare(const pocket::PocketLine& line, pocket::Fingerprint f) noexcept {
    return line.marks() != 0 && f.value() >= line.floor();
  }

  template <bool kPdep>
  bool contains(KeyHash h) const noexcept {
    const uint64_t b = line_of(h);
    const pocket::Fingerprint f = fingerprint(h);
    const pocket::PocketLine& line = lines_[b];
    if (line.find<kPdep>(f) >= 0) return true;
    if (!reads_spare(line, f)) return false;
    const pocket::PocketLine& s = spare_of(b, f);
    return s.find<kPdep>(spare_key(b, f)) >= 0 || s.marks() != 0;
  }

  template <bool kPdep>
  void insert(KeyHash h) noexcept {
    if (state_->ring.schedule.rotate_before_insert()) rotate<kPdep>();
    ++state_->ring.insertions;
    put<kPdep>(h, state_->ring.current);
  }

  template <bool kPdep>
  bool test_and_insert(KeyHash h) noexcept {
    if (!state_->ring.schedule.rotate_before_insert()) {
      ++state_->ring.insertions;
      return put<kPdep>(h, state_->ring.current);
    }
    const bool hit = contains<kPdep>(h);  // before the rotation clears a segment, as the scalar calls order it
    rotate<kPdep>();
    ++state_->ring.insertions;
    put<kPdep>(h, state_->ring.current);
    return hit;
  }

  // Finds h and retags it `tag`, or adds it tagged `tag`; true if found.
  // Inline: the common cases (found, or added to a line that is not full and
  // sent nothing to the spare that this key could meet); the rest is put_rare.
  template <bool kPdep>
  [[gnu::always_inline]] inline bool put(KeyHash h, uint32_t tag) noexcept {
    const uint64_t b = line_of(h);
    const pocket::Fingerprint f = fingerprint(h);
    pocket::PocketLine& line = lines_[b];
    const pocket::PocketLine::List l = line.list<kPdep>(f.quotient);
    if (const int i = line.find_in(l, f.remainder); i >= 0) {
      line.retag(static_cast<uint32_t>(i), tag);
      return true;
    }
    if (!line.full() && !reads_spare(line, f)) {
      line.insert_at(l, f.remainder, tag);
      return false;
    }
    return put_rare<kPdep>(b, line, l, f, tag);
  }

  // put() for a key missing from its line, when the line spilled past the
  // key's floor (the spare may hold it) or is full.
  template <bool kPdep>
  [[gnu::noinline]] bool put_rare(uint64_t b, pocket::PocketLine& line, const pocket::PocketLine::List& l,
                                  pocket::Fingerprint f, uint32_t tag) noexcept {
    if (reads_spare(line, f)) {
      ++state_->spare_reads;
      pocket::PocketLine& s = spare_of(b, f);
      const int j = s.find<kPdep>(spare_key(b, f));
      if (j >= 0 || s.marks() != 0) {
        // In the spare (or lost to its saturation, which then covers it):
        // live again under the current tag, and the line says that tag spilled.
        if (j >= 0) s.retag(static_cast<uint32_t>(j), tag);
        else s.set_marks(s.marks() | 1u << tag);
        line.set_marks(line.marks() | 1u << tag);
        return true;
      }
    }
    if (!line.full()) line.insert_at(l, f.remainder, tag);
    else add_to_full<kPdep>(b, line, f, tag);
    return false;
  }

  // Adds f (not present) to the full line b: the line keeps its smallest
  // fingerprints and spills the largest.
  template <bool kPdep>
  void add_to_full(uint64_t b, pocket::PocketLine& line, pocket::Fingerprint f, uint32_t tag) noexcept {
    const uint32_t big = line.largest<kPdep>();
    const pocket::Fingerprint g = line.fingerprint<kPdep>(big);
    if (f.value() > g.value()) return spill<kPdep>(b, line, f, tag);
    const uint32_t g_tag = line.tag(big);
    line.remove<kPdep>(big);
    line.insert<kPdep>(f, tag);
    spill<kPdep>(b, line, g, g_tag);
  }

  // Sends f (tag `tag`) from line b to its spare line.
  template <bool kPdep>
  void spill(uint64_t b, pocket::PocketLine& line, pocket::Fingerprint f, uint32_t tag) noexcept {
    const uint32_t floor = line.marks() && line.floor() < f.value() ? line.floor() : f.value();
    line.set_floor(floor);
    line.set_marks(line.marks() | 1u << tag);
    pocket::PocketLine& s = spare_of(b, f);
    if (!s.full()) return s.insert<kPdep>(spare_key(b, f), tag);
    s.set_marks(s.marks() | 1u << tag);
    ++state_->saturations;
  }

  // The next segment becomes current: its entries, its spill marks and its
  // saturations go, in every line.
  template <bool kPdep>
  [[gnu::noinline]] void rotate() noexcept {
    const uint32_t t = state_->ring.current = (state_->ring.current + 1) % cfg_.segments();
    for (uint64_t i = 0; i < cfg_.lines + cfg_.spare_lines; ++i) {
      pocket::PocketLine& line = lines_[i];
      if (line.count()) line.remove_tag<kPdep>(t);
      line.set_marks(line.marks() & ~(1u << t));
    }
  }

  bool pdep_ = false;  // the select's body (use_pdep)
};

}  // namespace agebloom
