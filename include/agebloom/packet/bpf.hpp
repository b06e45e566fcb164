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

  // Compiles `expr` for frames of `linktype` (packet::linktype). Returns ""
  // or libpcap's message, prefixed with the expression.
  std::string compile(const std::string& expr, uint32_t linktype);

  // True when no program is set, or the program accepts the frame. wirelen is
  // the length on the wire (>= caplen), as filters like "greater 1000" see it.
  bool matches(const uint8_t* data, uint32_t caplen, uint32_t wirelen) const noexcept;

  // A program is set (compile() succeeded).
  bool active() const noexcept { return insns_ != nullptr; }
  // The expression compile() was given.
  const std::string& expression() const noexcept { return expr_; }

 private:
  void* insns_ = nullptr;  // struct bpf_insn[count_], owned (kept out of this header)
  uint32_t count_ = 0;
  std::string expr_;
};

}  // namespace agebloom::packet

#pragma GCC visibility pop
