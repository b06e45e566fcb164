// A C++ program outside the tree: built by install_test.sh against the
// installed headers and agebloom.pc alone. It uses the header-only core,
// the compiled C++ API (the planner, DedupFilter, key extraction: exported
// from libagebloom.so) and the C header from C++.
#include <agebloom/agebloom.h>
#include <agebloom/agebloom.hpp>
#include <agebloom/dedup/dedup_filter.hpp>
#include <agebloom/packet/key_extract.hpp>

#include <cstdio>
#include <cstdlib>
#include <variant>

int main() {
  using namespace agebloom;
  dedup::FilterSpec spec;
  spec.window = Window::count(10'000);
  spec.fpr = 0.001;
  auto planned = dedup::DedupFilter::plan(spec);
  if (auto* err = std::get_if<std::string>(&planned)) {
    std::fprintf(stderr, "consumer: %s\n", err->c_str());
    return 1;
  }
  auto& filter = std::get<dedup::DedupFilter>(planned);
  void* memory = std::aligned_alloc(kCacheLine, align_up(filter.bytes_needed(), kCacheLine));
  Arena arena(memory, filter.bytes_needed());
  if (!filter.create(arena).empty()) return 1;

  unsigned char frame[34] = {};
  frame[12] = 0x08, frame[14] = 0x45, frame[17] = 20, frame[26] = 192, frame[29] = 7;
  packet::Key key;
  if (!packet::extract_key(packet::linktype::en10mb, frame, sizeof frame, packet::KeyMode::src_ip, {}, key)) return 1;
  const Hasher hash(1);
  const bool first = filter.is_duplicate(hash(key.bytes, key.length), dedup::Policy::insert_always);
  const bool again = filter.is_duplicate(hash(key.bytes, key.length), dedup::Policy::insert_always);
  std::free(memory);

  // The C API from C++ agrees on the key bytes.
  unsigned char ckey[AGEBLOOM_KEY_MAX];
  size_t clen = 0;
  if (agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_SRC_IP, nullptr, ckey,
                           sizeof ckey, &clen, nullptr) != AGEBLOOM_OK || clen != key.length)
    return 1;
  std::printf("consumer: %s (%s), first %d, again %d, libagebloom %s\n", filter.name().c_str(),
              filter.parameters().c_str(), first, again, agebloom_version());
  return first || !again;
}
