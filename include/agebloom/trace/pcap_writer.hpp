// Writing a pcap file: the deduplicated capture agebloom-replay --write makes
// (and --write-suppressed's complement), as editcap -D does.
//
// Classic pcap with nanosecond timestamps (the "nanosecond" magic libpcap,
// tcpdump and Wireshark read), so every stamp PcapReader handed out is written
// back exactly, with the capture's link type and each record's captured and
// wire lengths. A pcapng input therefore comes out as pcap: one link type,
// no per-interface blocks or comments.
//
// Errors are values: open() names the file, and every write is checked at
// close(), so a full disk is an error, never a short capture.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "agebloom/trace/pcap_trace.hpp"

struct pcap;         // libpcap's pcap_t
struct pcap_dumper;  // libpcap's pcap_dumper_t

#pragma GCC visibility push(default)

namespace agebloom::trace {

// A pcap file written record by record (agebloom-replay --write): nanosecond
// stamps, the capture's link type, every write checked at close().
class PcapWriter {
 public:
  PcapWriter() noexcept = default;  // not open: open() it
  // Takes other's file; other is then closed.
  PcapWriter(PcapWriter&& other) noexcept;
  // Closes this file, then takes other's.
  PcapWriter& operator=(PcapWriter&& other) noexcept;
  // Not copyable: it owns its file.
  PcapWriter(const PcapWriter&) = delete;
  // Not copyable: it owns its file.
  PcapWriter& operator=(const PcapWriter&) = delete;
  ~PcapWriter();  // closes without reporting; call close() to learn of errors

  // Creates (truncates) `path` for frames of `linktype`. Returns "" or why not.
  std::string open(const std::string& path, uint32_t linktype);
  // The same, writing through `buffer` (`size` bytes, which the caller keeps
  // until close() or the writer's end) rather than stdio's own few KiB: a
  // write call per `size` bytes, not per few frames, for a program that
  // writes much (agebloom-replay --split).
  std::string open(const std::string& path, uint32_t linktype, char* buffer, size_t size);
  // Appends one record: the packet's stamp, lengths and bytes.
  void write(const Packet& pkt) noexcept;
  // Flushes and closes; "" or the write error, naming the file.
  std::string close();

  // open() succeeded and close() was not called yet.
  bool is_open() const noexcept { return dumper_ != nullptr; }
  // Records written so far.
  uint64_t packets_written() const noexcept { return packets_; }

 private:
  pcap* dead_ = nullptr;  // the handle libpcap writes headers for
  pcap_dumper* dumper_ = nullptr;
  std::string path_;
  uint64_t packets_ = 0;
};

}  // namespace agebloom::trace

#pragma GCC visibility pop
