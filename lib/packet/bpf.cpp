// BpfFilter (bpf.hpp) over libpcap's compiler and interpreter.
#include "agebloom/packet/bpf.hpp"

#include <pcap/pcap.h>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace agebloom::packet {

BpfFilter::BpfFilter(BpfFilter&& other) noexcept
    : insns_(std::exchange(other.insns_, nullptr)), count_(std::exchange(other.count_, 0)),
      optimized_(std::exchange(other.optimized_, true)), expr_(std::move(other.expr_)) {}

BpfFilter& BpfFilter::operator=(BpfFilter&& other) noexcept {
  if (this != &other) {
    std::free(insns_);
    insns_ = std::exchange(other.insns_, nullptr);
    count_ = std::exchange(other.count_, 0);
    optimized_ = std::exchange(other.optimized_, true);
    expr_ = std::move(other.expr_);
  }
  return *this;
}

BpfFilter::~BpfFilter() { std::free(insns_); }

std::string BpfFilter::shown(const std::string& expr) {
  // Appended, not "'" + ...: g++ 12 warns (-Wrestrict) on that form falsely.
  std::string out(1, '\'');
  if (expr.size() <= 120) return out.append(expr).append(1, '\'');
  return out.append(expr, 0, 100).append(" ...' (").append(std::to_string(expr.size())).append(" bytes)");
}

std::string BpfFilter::note() const {
  if (optimized_ || insns_ == nullptr) return {};
  return "--bpf " + shown(expr_) + " is compiled without libpcap's optimizer, which takes minutes past " +
         std::to_string(kOptimizedUpTo) + " bytes: it matches the same packets, in at most " + std::to_string(count_) +
         " instructions each";
}

std::string BpfFilter::compile(const std::string& expr, uint32_t linktype) {
  // The snap length only bounds what the compiled code may assume is there;
  // matches() checks every load against the real caplen.
  pcap_t* dead = pcap_open_dead(static_cast<int>(linktype), 262144);
  if (dead == nullptr) return "--bpf " + shown(expr) + ": libpcap cannot open a handle for link type " + std::to_string(linktype);
  bpf_program prog{};
  const bool optimize = expr.size() <= kOptimizedUpTo;
  if (pcap_compile(dead, &prog, expr.c_str(), optimize ? 1 : 0, PCAP_NETMASK_UNKNOWN) != 0) {
    const std::string why = pcap_geterr(dead);
    pcap_close(dead);
    return "--bpf " + shown(expr) + ": " + why;
  }
  pcap_close(dead);
  // Our own copy, so the program outlives libpcap's handle and frees with us.
  const std::size_t bytes = sizeof(bpf_insn) * prog.bf_len;
  void* copy = std::malloc(bytes ? bytes : 1);
  if (copy == nullptr) {
    pcap_freecode(&prog);
    return "--bpf " + shown(expr) + ": out of memory";
  }
  std::memcpy(copy, prog.bf_insns, bytes);
  pcap_freecode(&prog);
  std::free(insns_);
  insns_ = copy;
  count_ = prog.bf_len;
  optimized_ = optimize;
  expr_ = expr;
  return {};
}

bool BpfFilter::matches(const uint8_t* data, uint32_t caplen, uint32_t wirelen) const noexcept {
  if (insns_ == nullptr) return true;
  if (data == nullptr) caplen = 0;
  static const uint8_t kEmpty = 0;
  return bpf_filter(static_cast<const bpf_insn*>(insns_), data ? data : &kEmpty, wirelen, caplen) != 0;
}

}  // namespace agebloom::packet
