#include "agebloom/trace/pcap_trace.hpp"

#include <pcap/pcap.h>

#include <cstdint>
#include <utility>

#include "agebloom/packet/key_extract.hpp"

namespace agebloom::trace {

namespace {

// Whether the capture is classic pcap: libpcap reports a classic file's
// version (2.4) and a pcapng section's (1.0). Classic pcap stores a record's
// seconds as a 32-bit unsigned number, which libpcap hands over as a signed
// one: from 2038 on they come out negative. A pcapng file's seconds come from
// 64 bits, negative only with a negative if_tsoffset (skipped as out of range).
bool is_classic_pcap(pcap* handle) { return pcap_major_version(handle) == 2; }

}  // namespace

PcapReader::PcapReader(pcap* handle, uint32_t linktype, std::string path) noexcept
    : handle_(handle), linktype_(linktype), path_(std::move(path)) {}

PcapReader::PcapReader(PcapReader&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      linktype_(other.linktype_),
      path_(std::move(other.path_)),
      error_(std::move(other.error_)),
      packets_(other.packets_),
      bad_timestamps_(other.bad_timestamps_),
      done_(other.done_) {}

PcapReader& PcapReader::operator=(PcapReader&& other) noexcept {
  if (this != &other) {
    close();
    handle_ = std::exchange(other.handle_, nullptr);
    linktype_ = other.linktype_;
    path_ = std::move(other.path_);
    error_ = std::move(other.error_);
    packets_ = other.packets_;
    bad_timestamps_ = other.bad_timestamps_;
    done_ = other.done_;
  }
  return *this;
}

PcapReader::~PcapReader() { close(); }

void PcapReader::close() noexcept {
  if (handle_ != nullptr) pcap_close(handle_);
  handle_ = nullptr;
}

OpenResult PcapReader::open(const std::string& path) {
  OpenResult result;
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  // Nanosecond precision: libpcap scales microsecond files up, so the
  // timestamp unit is the same whatever the file stores.
  pcap* handle = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (handle == nullptr) {
    // libpcap says "No such file or directory", "unknown file format", ...
    result.error = "cannot open capture '" + path + "': " + errbuf;
    return result;
  }
  const int dlt = pcap_datalink(handle);
  if (dlt < 0 || !packet::linktype_supported(static_cast<uint32_t>(dlt))) {
    const char* name = dlt >= 0 ? pcap_datalink_val_to_name(dlt) : nullptr;
    result.error = "capture '" + path + "' has unsupported link type " + std::to_string(dlt) + " (" +
                   (name != nullptr ? name : "unknown") +
                   "); supported: EN10MB, LINUX_SLL, LINUX_SLL2, RAW, IPV4, IPV6, NULL, LOOP, PPP, "
                   "C_HDLC, PPI";
    pcap_close(handle);
    return result;
  }
  result.reader = PcapReader(handle, static_cast<uint32_t>(dlt), path);
  return result;
}

PcapReader::Status PcapReader::next(Packet& out) {
  if (done_ != Status::ok) return done_;
  if (handle_ == nullptr) {
    error_ = "reader is not open";
    return done_ = Status::error;
  }
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  for (;;) {
    switch (pcap_next_ex(handle_, &hdr, &data)) {
      case 1: break;
      case PCAP_ERROR_BREAK: return done_ = Status::end;  // clean end of file
      default:
        // PCAP_ERROR: e.g. "truncated dump file; tried to read 1514 captured
        // bytes, only got 300", a bad record header, or an I/O error.
        error_ = "capture '" + path_ + "' after packet " + std::to_string(packets_) + ": " +
                 pcap_geterr(handle_);
        return done_ = Status::error;
    }
    // With nanosecond precision tv_usec holds nanoseconds: libpcap multiplies
    // a microsecond file's field by 1000 in a 64-bit suseconds_t, so one range
    // check covers both units: a field >= 1e6 us becomes >= 1e9 ns, and a
    // negative one stays out of [0, 1e9) whether libpcap read it signed or not.
    int64_t sec = hdr->ts.tv_sec;
    const int64_t nsec = hdr->ts.tv_usec;
    if (sec < 0 && sec >= INT32_MIN && is_classic_pcap(handle_)) sec += int64_t{1} << 32;  // 2038 to 2106
    constexpr int64_t kMaxSec = static_cast<int64_t>((UINT64_MAX - 999'999'999u) / 1'000'000'000u);
    if (sec >= 0 && sec <= kMaxSec && nsec >= 0 && nsec < 1'000'000'000) {
      out.timestamp_ns = static_cast<uint64_t>(sec) * 1'000'000'000u + static_cast<uint64_t>(nsec);
      break;
    }
    ++bad_timestamps_;  // skipped: see the header
  }
  out.caplen = hdr->caplen;
  out.wirelen = hdr->len;
  out.data = data;
  out.linktype = linktype_;
  ++packets_;
  return Status::ok;
}

}  // namespace agebloom::trace
