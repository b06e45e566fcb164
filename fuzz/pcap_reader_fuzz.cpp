// Fuzz target: the pcap/pcapng reader (libpcap underneath) over arbitrary
// file bytes. Whatever the file, open() and next() answer ok, end or error
// with a message (a refused file names why); a packet's caplen is what its data holds; the reader never
// loops forever (a bounded number of packets per input).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "agebloom/packet/key_extract.hpp"
#include "agebloom/trace/pcap_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // libpcap reads files: hand it the bytes as an in-memory one.
  const int fd = memfd_create("pcap-fuzz", 0);
  if (fd < 0) return 0;
  size_t off = 0;
  while (off < size) {
    const ssize_t w = write(fd, data + off, size - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  auto opened = agebloom::trace::PcapReader::open(path);
  if (opened.ok()) {
    agebloom::trace::Packet pkt;
    static agebloom::packet::Key key;
    const agebloom::packet::ClickOptions click;
    for (int i = 0; i < 10000 && opened.reader.next(pkt) == agebloom::trace::PcapReader::Status::ok; ++i) {
      if (pkt.caplen && pkt.data == nullptr) std::abort();
      // Every packet the reader yields goes through key extraction, as in a replay.
      (void)agebloom::packet::extract_key(pkt.linktype, pkt.data, pkt.caplen, agebloom::packet::KeyMode::click,
                                          click, key);
    }
    if (opened.reader.next(pkt) == agebloom::trace::PcapReader::Status::error && opened.reader.error().empty())
      std::abort();  // an error always says what
  }
  close(fd);
  return 0;
}
