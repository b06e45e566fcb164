// A libpcap filter expression ("tcp port 80", "vlan and host 10.0.0.1"),
// compiled once and run per packet: --bpf in agebloom-replay and dedup_fwd.
// Only the packets it matches are deduplicated; the rest pass untouched and
// are counted apart.
//
// compile() is the edge where the string is parsed (pcap_compile over a dead
// handle of the capture's link type, so "vlan" or "ether host" mean what they
// mean to tcpdump on that link). matches() runs the compiled program with
// libpcap's bpf_filter: no allocation, no state, reads bounded by caplen, so
// any number of lcores may run one BpfFilter at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#pragma GCC visibility push(default)

namespace agebloom::packet {

// A compiled --bpf expression (libpcap's filter language), run per frame.
class BpfFilter {
 public:
  BpfFilter() noexcept = default;  // matches everything
  // Takes other's program; other then matches everything.
  BpfFilter(BpfFilter&& other) noexcept;
  // Frees this program, then takes other's.
  BpfFilter& operator=(BpfFilter&& other) noexcept;
  // Not copyable: it owns its program.
  BpfFilter(const BpfFilter&) = delete;
  // Not copyable: it owns its program.
  BpfFilter& operator=(const BpfFilter&) = delete;
  // Frees the program.
  ~BpfFilter();

  // Expressions up to this many bytes go through libpcap's optimizer; longer
  // ones are compiled without it. Its time grows with about the cube of the
  // expression (on one Zen 4 core: 100 "host" terms 0.05 s, 300 terms 1.2 s,
  // 1,000 terms 53 s, where unoptimized code took 2.2 s), so a long allow
  // list looked like a hang before the first packet. The code it leaves is
  // longer but matches the same packets.
  static constexpr size_t kOptimizedUpTo = 4096;

  // Compiles `expr` for frames of `linktype` (packet::linktype). Returns ""
  // or libpcap's message, prefixed with the expression (shown()).
  std::string compile(const std::string& expr, uint32_t linktype);

  // True when no program is set, or the program accepts the frame. wirelen is
  // the length on the wire (>= caplen), as filters like "greater 1000" see it.
  bool matches(const uint8_t* data, uint32_t caplen, uint32_t wirelen) const noexcept;

  // A program is set (compile() succeeded).
  bool active() const noexcept { return insns_ != nullptr; }
  // The expression compile() was given.
  const std::string& expression() const noexcept { return expr_; }
  // `expr` as messages quote it: whole up to 120 bytes, else its start and
  // its length ('host 1.2.3.4 or ...' (18556 bytes)).
  static std::string shown(const std::string& expr);
  // "" when optimized, else one line saying the optimizer was skipped, why,
  // and the program's length (the most instructions a packet runs).
  std::string note() const;

 private:
  void* insns_ = nullptr;  // struct bpf_insn[count_], owned (kept out of this header)
  uint32_t count_ = 0;
  bool optimized_ = true;  // libpcap's optimizer ran (expressions up to kOptimizedUpTo)
  std::string expr_;
};

}  // namespace agebloom::packet

#pragma GCC visibility pop
