// The pcap writer (pcap_writer.hpp) over libpcap's dump API.
#include "agebloom/trace/pcap_writer.hpp"

#include <pcap/pcap.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace agebloom::trace {

namespace {
// The largest snap length libpcap accepts on read (MAXIMUM_SNAPLEN): the file
// header must not claim less than any record we write.
constexpr int kSnapLen = 262144;
}  // namespace

PcapWriter::PcapWriter(PcapWriter&& other) noexcept
    : dead_(std::exchange(other.dead_, nullptr)),
      dumper_(std::exchange(other.dumper_, nullptr)),
      path_(std::move(other.path_)),
      packets_(other.packets_) {}

PcapWriter& PcapWriter::operator=(PcapWriter&& other) noexcept {
  if (this != &other) {
    (void)close();
    dead_ = std::exchange(other.dead_, nullptr);
    dumper_ = std::exchange(other.dumper_, nullptr);
    path_ = std::move(other.path_);
    packets_ = other.packets_;
  }
  return *this;
}

PcapWriter::~PcapWriter() { (void)close(); }

std::string PcapWriter::open(const std::string& path, uint32_t linktype) {
  return open(path, linktype, nullptr, 0);
}

std::string PcapWriter::open(const std::string& path, uint32_t linktype, char* buffer, size_t size) {
  (void)close();
  path_ = path;
  packets_ = 0;
  dead_ = pcap_open_dead_with_tstamp_precision(static_cast<int>(linktype), kSnapLen, PCAP_TSTAMP_PRECISION_NANO);
  if (dead_ == nullptr) return "cannot write " + path + ": libpcap refused link type " + std::to_string(linktype);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    const std::string why = std::strerror(errno);
    pcap_close(dead_);
    dead_ = nullptr;
    return "cannot open " + path + ": " + why;
  }
  // Before any I/O, as setvbuf requires. (glibc ignores a size without a
  // buffer, so the caller's buffer is the only way to a bigger one.)
  if (buffer != nullptr && size > 0) std::setvbuf(f, buffer, _IOFBF, size);
  dumper_ = pcap_dump_fopen(dead_, f);
  if (dumper_ == nullptr) {
    const std::string why = pcap_geterr(dead_);
    std::fclose(f);
    pcap_close(dead_);
    dead_ = nullptr;
    return "cannot write " + path + ": " + why;
  }
  return {};
}

void PcapWriter::write(const Packet& pkt) noexcept {
  if (dumper_ == nullptr) return;
  pcap_pkthdr h{};
  // A nanosecond dead handle: tv_usec carries nanoseconds.
  h.ts.tv_sec = static_cast<time_t>(pkt.timestamp_ns / 1'000'000'000u);
  h.ts.tv_usec = static_cast<suseconds_t>(pkt.timestamp_ns % 1'000'000'000u);
  h.caplen = pkt.caplen;
  h.len = pkt.wirelen;
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, pkt.data);
  ++packets_;
}

std::string PcapWriter::close() {
  std::string error;
  if (dumper_ != nullptr) {
    // Everything buffered reaches the kernel here, so a full disk shows now;
    // pcap_dump_close's fclose has nothing left to fail on but the rare
    // delayed-write file system, and does not say how it went.
    const bool flushed = pcap_dump_flush(dumper_) == 0 && !std::ferror(pcap_dump_file(dumper_));
    const int err = errno;
    pcap_dump_close(dumper_);
    dumper_ = nullptr;
    if (!flushed) error = "cannot write " + path_ + ": " + std::strerror(err ? err : EIO);
  }
  if (dead_ != nullptr) {
    pcap_close(dead_);
    dead_ = nullptr;
  }
  return error;
}

}  // namespace agebloom::trace
