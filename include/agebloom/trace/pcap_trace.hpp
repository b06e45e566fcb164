// Streaming reader for pcap and pcapng captures (libpcap underneath).
//
// One packet at a time, nanosecond timestamps, bounded memory: libpcap keeps a
// single record buffer, and the Packet handed out points into it. Errors are
// values, never exceptions:
//   * open() refuses a missing file, a file that is not a capture, and a link
//     type agebloom::packet::extract_key cannot parse, each with a message;
//   * next() tells a clean end of file (Status::end) from a truncated or corrupt
//     file (Status::error + libpcap's message), so a replay never mistakes a
//     damaged capture for a short one. A pcapng file whose interfaces have
//     different link types also ends in Status::error (libpcap refuses it);
//   * a record whose timestamp is out of range is skipped and counted
//     (bad_timestamps()), never handed out: microseconds >= 1e6 in a
//     microsecond capture, nanoseconds >= 1e9 in a nanosecond one, a negative
//     field (a negative microsecond count read as ~2^64 ns would freeze a
//     replay's clock, so that nothing ever expired again), or seconds past
//     what 64-bit nanoseconds hold. The records around it are read as usual.
//     A classic pcap's seconds are unsigned 32-bit: records of 2038 to 2106
//     are read as such, not as negative (libpcap's signed reading).
#pragma once

#include <cstdint>
#include <string>

struct pcap;  // libpcap's pcap_t, kept out of this header

// Compiled in libagebloom: exported from the shared library, which hides
// everything else (core/export.h).
#pragma GCC visibility push(default)

namespace agebloom::trace {

// One captured frame. `data` points into the reader's buffer and stays valid
// only until the next call to next() or the reader's destruction.
struct Packet {
  uint64_t timestamp_ns = 0;  // since the Unix epoch (always a valid time: see bad_timestamps())
  uint32_t caplen = 0;        // bytes at data (what extract_key may read)
  uint32_t wirelen = 0;       // original length on the wire (>= caplen normally)
  const uint8_t* data = nullptr;  // the packet's first caplen bytes (valid until the next next())
  uint32_t linktype = 0;      // DLT_* as reported by pcap_datalink()
};

// What open() returns: a reader on success, otherwise an empty reader and a
// human-readable reason that names the file.
struct OpenResult;

// A pcap/pcapng file read packet by packet, timestamps in nanoseconds.
// Move-only; closes the file when destroyed.
class PcapReader {
 public:
  // What next() found.
  enum class Status : uint8_t {
    ok,     // `out` holds the next packet
    end,    // clean end of file; no packet
    error,  // truncated/corrupt file or read failure; see error()
  };

  PcapReader() noexcept = default;  // not open; next() reports an error
  PcapReader(PcapReader&& other) noexcept;  // takes other's handle; other is left closed
  PcapReader& operator=(PcapReader&& other) noexcept;  // closes this one, then takes other's handle
  PcapReader(const PcapReader&) = delete;  // one owner of the pcap handle
  PcapReader& operator=(const PcapReader&) = delete;  // one owner of the pcap handle
  ~PcapReader();  // closes the file

  // Open a pcap or pcapng file for reading with nanosecond timestamps.
  static OpenResult open(const std::string& path);

  // Read the next packet. After Status::end or Status::error every later call
  // returns the same status.
  Status next(Packet& out);

  bool is_open() const noexcept { return handle_ != nullptr; }  // open() succeeded, not moved from
  uint32_t linktype() const noexcept { return linktype_; }       // the capture's DLT (packet::linktype)
  // libpcap's message for the last Status::error (empty otherwise).
  const std::string& error() const noexcept { return error_; }
  // Packets returned with Status::ok so far.
  uint64_t packets_read() const noexcept { return packets_; }
  // Records skipped so far because their timestamp was out of range (see the
  // top of this file); not in packets_read(). A caller that reports what it
  // read should report this too: non-zero means a corrupt capture.
  uint64_t bad_timestamps() const noexcept { return bad_timestamps_; }

 private:
  explicit PcapReader(pcap* handle, uint32_t linktype, std::string path) noexcept;
  void close() noexcept;

  pcap* handle_ = nullptr;
  uint32_t linktype_ = 0;
  std::string path_;
  std::string error_;
  uint64_t packets_ = 0;
  uint64_t bad_timestamps_ = 0;
  Status done_ = Status::ok;  // sticky end/error
};

// open()'s answer: a reader, or why there is none.
struct OpenResult {
  PcapReader reader;  // open on success
  std::string error;  // empty on success
  bool ok() const noexcept { return error.empty(); }  // the file is open
};

}  // namespace agebloom::trace

#pragma GCC visibility pop
