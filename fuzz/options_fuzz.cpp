// Fuzz target: the command-line options dedup_fwd, agebloom-replay and
// agebloom-plan share (dedup/filter_options.hpp), then the planning they do
// with what was accepted. Input: arguments separated by newlines. Every
// input is accepted or refused with a message; planning is bounded (the
// fuzzer's -timeout catches a search that runs away) and never throws out.
#include <getopt.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <variant>
#include <vector>

#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/dedup/filter_options.hpp"

namespace dd = agebloom::dedup;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  std::vector<std::string> args = {"fuzz"};
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.push_back(cur);
      cur.clear();
    } else if (data[i] != 0) {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  if (!cur.empty()) args.push_back(cur);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::vector<option> table;
  dd::FilterOptions::append_to(table);
  table.push_back({nullptr, 0, nullptr, 0});
  dd::FilterOptions o;
  optind = 0;  // GNU getopt: 0 reinitialises it between inputs
  opterr = 0;
  int c, longindex = -1;
  std::string error;
  dd::RepeatCheck repeats(table.data());  // as the tools run it, before take()
  while ((c = getopt_long(static_cast<int>(argv.size()) - 1, argv.data(), "", table.data(), &longindex)) != -1) {
    error = repeats.check(c, longindex, optarg);
    longindex = -1;
    if (!error.empty()) return 0;             // given twice: refused with a message
    if (!o.take(c, optarg, error)) return 0;  // not a shared option: the tool's own, or unknown
    if (!error.empty()) return 0;             // refused with a message
  }
  if (o.list_filters || !o.finish().empty()) return 0;
  auto planned = dd::DedupFilter::plan(o.spec);
  if (auto* f = std::get_if<dd::DedupFilter>(&planned)) {
    if (f->bytes_needed() == 0) std::abort();  // a plan that builds nothing
    if (o.decide == dd::Decide::penalties) (void)f->enable_posteriors();
  } else if (std::get<std::string>(planned).empty()) {
    std::abort();  // a refusal always says why
  }
  return 0;
}
