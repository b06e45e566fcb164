// agebloom-plan: choose a sliding-window filter for a window and a target
// FP (or the lowest FP a memory holds), compare the structures, plot their
// cost, or print the model's reproduction of the APBF paper's Table 2.
//
// Every sizing option (--filter, --window, --ttl, --capacity, --fpr, --mem,
// --max-npws, --max-bits-per-item, --max-accesses, --block-bits) is the one
// dedup_fwd and agebloom-replay take (filter_options.hpp), planned by the
// same call (dedup::plan_spec): the plan printed is the filter those tools
// build from the same options, bit for bit, and it says so on its last line.
// Their other options (--policy, --seed, --packet-bytes, ...) are checked
// and ignored with a note, so that a tool's command line can be pasted.
//
// Exit codes: 0 success, 1 no plan satisfies the limits (or the plot could
// not be drawn), 2 usage error (an FPR out of reach of every structure
// included, a --plot file that cannot be written).
#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/dedup/filter_options.hpp"
#include "agebloom/model/models.hpp"
#include "agebloom/model/planner.hpp"
#include "agebloom/packet/bpf.hpp"
#include "agebloom/packet/key_extract.hpp"
#include "agebloom/registry/structure.hpp"
#include "filter_list_json.hpp"
#include "json_text.hpp"
#include "agebloom/dedup/stdout_checked.hpp"
#include "plot.hpp"

#include <getopt.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace m = agebloom::model;
namespace dd = agebloom::dedup;

constexpr int kExitNoPlan = 1;
constexpr int kExitUsage = 2;

void print_usage(std::FILE* to) {
    std::fprintf(to,
        "usage: agebloom-plan [--window W | --ttl D [--capacity N]] [--fpr P | --mem MB] [options]\n"
        "       agebloom-plan ... --compare | --plot FILE.png\n"
        "       agebloom-plan --table apbf2 [--json]\n"
        "       agebloom-plan --list-filters\n"
        "\n"
        "The sizing options, as dedup_fwd and agebloom-replay take them (the plan printed is what they build):\n"
        "%s"
        "  --structure NAME                the same as --filter\n"
        "\n"
        "  --compare                       the best plan of every structure, one row each, fewest bits first\n"
        "  --plot FILE.png                 draw bits per item against the target FPR for every structure over\n"
        "                                  this window and limits (data in FILE.csv; python3-matplotlib)\n"
        "  --table apbf2                   print Table 2 of the APBF paper as computed by the model\n"
        "  --json                          print JSON instead of text\n"
        "  --help                          this text\n"
        "\n"
        "exit status: 0 ok, 1 no plan meets the limits (or the plot could not be drawn, or standard output\n"
        "could not be written), 2 usage error, an FPR out of reach, or a --plot file that cannot be written\n",
        agebloom::dedup::FilterOptions::help(/*sizing_only=*/true).c_str());
}

[[noreturn]] void usage_error(const std::string& msg) {
    std::fprintf(stderr, "agebloom-plan: %s\ntry 'agebloom-plan --help'\n", msg.c_str());
    std::exit(kExitUsage);
}

nlohmann::json to_json(const m::Plan& p) {
    return {{"structure", agebloom::name(p.structure)},
            {"k", p.k},
            {"l_or_r", p.l_or_r},
            {"block_bits", p.block_bits},
            {"bits_per_block", p.bits_per_block},
            {"bits_per_segment", p.bits_per_segment},
            {"segments", p.segments},
            {"generation_or_epoch", p.generation_or_epoch},
            {"bits_per_item", p.bits_per_item},
            {"expected_fpr", p.expected_fpr},
            {"slack_items", p.slack_items},
            {"peak_npws", p.peak_npws},
            {"accesses_per_query", p.accesses_per_query},
            {"accesses_per_insert", p.accesses_per_insert},
            {"total_bytes", p.total_bytes}};
}

nlohmann::json to_json(const m::Table2Row& r) {
    return {{"k", r.k},
            {"l", r.l},
            {"actual_fp", r.actual_fp},
            {"eff", r.eff},
            {"accesses_window", r.accesses_window},
            {"accesses_fp", r.accesses_fp},
            {"accesses_false", r.accesses_false},
            {"npws", r.npws}};
}

// The shortest decimal that reads back as `v` (so a printed option rebuilds
// the same plan).
std::string exact(double v) {
    char buf[40];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

// The sizing options that rebuild this plan in dedup_fwd and agebloom-replay.
std::string build_options(const dd::FilterSpec& spec) {
    std::string o = std::string("--filter ") + dd::spec_name(spec);
    if (spec.window.is_time()) {
        o += " --ttl " + dd::format_duration(spec.window.span);
        if (spec.capacity) o += " --capacity " + std::to_string(spec.capacity);
    } else {
        o += " --window " + std::to_string(spec.window.span);
    }
    if (spec.fpr != 0.0) o += " --fpr " + exact(spec.fpr);
    if (spec.mem_bytes) o += " --mem " + exact(static_cast<double>(spec.mem_bytes) / 1048576.0);
    if (spec.max_npws) o += " --max-npws " + exact(*spec.max_npws);
    if (spec.max_bits_per_item) o += " --max-bits-per-item " + exact(*spec.max_bits_per_item);
    if (spec.max_accesses) o += " --max-accesses " + exact(*spec.max_accesses);
    if (spec.block_bits) o += " --block-bits " + std::to_string(*spec.block_bits);
    if (spec.on_flood == dd::FloodPolicy::keep_fpr) o += " --on-flood keep-fpr";  // the capacity trigger
    return o;
}

void print_plan_text(const m::Plan& p, const dd::FilterSpec& spec) {
    const bool aged = std::holds_alternative<agebloom::ApbfConfig>(p.config.config) ||
                      std::holds_alternative<agebloom::InterleavedApbfConfig>(p.config.config) ||
                      std::holds_alternative<agebloom::TimeLimitedConfig>(p.config.config);
    const char* l_name = aged ? "l" : p.structure == agebloom::Structure::ring ? "N" : "r";
    const dd::DedupFilter built(p.config);
    std::printf("structure             %s\n", agebloom::name(p.structure));
    std::printf("k                     %u\n", p.k);
    if (p.segments > 1) {
        std::printf("%-21s %u\n", l_name, p.l_or_r);
        if (p.block_bits) {
            std::printf("block bits            %u\n", p.block_bits);
            std::printf("bits per block        %u\n", p.bits_per_block);
        }
    } else if (p.block_bits) {
        std::printf("bits per cell         %u\n", p.block_bits);  // one array of counters, cells or timers
    }
    std::printf("parameters            %s\n", built.parameters().c_str());
    std::printf("segments              %llu\n", static_cast<unsigned long long>(p.segments));
    std::printf("bits per segment      %llu\n", static_cast<unsigned long long>(p.bits_per_segment));
    std::printf("generation/epoch      %llu insertions\n", static_cast<unsigned long long>(p.generation_or_epoch));
    std::printf("bits per item         %.3f\n", p.bits_per_item);
    if (const auto* t = std::get_if<agebloom::TimeLimitedConfig>(&p.config.config))
        std::printf("bits in use per item  %.3f (at %llu insertions per window; the rest of the budget is headroom "
                    "for a faster rate)\n",
                    t->steady_bits_per_item(), static_cast<unsigned long long>(t->capacity));
    std::printf("total bytes           %llu (%.2f MiB)\n", static_cast<unsigned long long>(p.total_bytes),
                static_cast<double>(p.total_bytes) / 1048576.0);
    std::printf("expected fpr          %.6g\n", p.expected_fpr);
    std::printf("slack items           %.0f insertions\n", p.slack_items);
    std::printf("peak NPWS             %.4f\n", p.peak_npws);
    std::printf("accesses per query    %.2f\n", p.accesses_per_query);
    std::printf("accesses per insert   %.2f\n", p.accesses_per_insert);
    std::printf("guarantee             %s\n", built.guarantee(dd::Policy::insert_always).c_str());
    if (const std::string note = dd::DedupFilter::auto_note(spec, built); !note.empty())
        std::printf("note                  %s\n", note.c_str());
    std::printf("dedup_fwd and agebloom-replay build this plan with:\n  %s\n", build_options(spec).c_str());
}

nlohmann::json plan_json(const m::Plan& p, const dd::FilterSpec& spec) {
    const dd::DedupFilter built(p.config);
    auto j = to_json(p);
    j["parameters"] = built.parameters();
    j["guarantee"] = built.guarantee(dd::Policy::insert_always);
    j["build_options"] = build_options(spec);
    if (const auto* t = std::get_if<agebloom::TimeLimitedConfig>(&p.config.config)) {
        j["bits_in_use_per_item"] = t->steady_bits_per_item();  // at its capacity; the rest is headroom
        j["capacity"] = t->capacity;
    }
    if (const std::string note = dd::DedupFilter::auto_note(spec, built); !note.empty()) j["auto_note"] = note;
    return j;
}

// Exit status of a planner refusal: limits no plan meets are not a usage error.
int refusal(const m::PlanError& err) {
    std::fprintf(stderr, "agebloom-plan: %s\n", err.message.c_str());
    return err.code == m::PlanErrc::over_limits ? kExitNoPlan : kExitUsage;
}

// The spec every structure of --compare and --plot is planned for. Under
// --ttl without --capacity a named structure assumes kDefaultTtlCapacity
// insertions per window, while the rate-adaptive one (tlbf) plans for an
// unknown rate at a memory budget: rows side by side would then size
// different loads. So all are planned at the assumed rate, and say so.
dd::FilterSpec comparable(const dd::FilterSpec& spec) {
    dd::FilterSpec s = spec;
    if (s.window.is_time() && s.capacity == 0) s.capacity = dd::kDefaultTtlCapacity;
    return s;
}

// --compare: each structure's best plan for the same options, fewest bits first;
// the refusals after, each with its reason.
int compare(const dd::FilterSpec& given, bool json, double default_fpr) {
    const dd::FilterSpec spec = comparable(given);
    const bool assumed = spec.capacity != given.capacity;
    std::vector<std::pair<dd::FilterSpec, m::Plan>> plans;
    std::vector<std::pair<std::string, std::string>> refused;
    for (const agebloom::StructureInfo& s : agebloom::kStructures) {
        if (!(s.windows & (spec.window.is_time() ? agebloom::kTimeWindows : agebloom::kCountWindows))) {
            refused.emplace_back(s.name, spec.window.is_time() ? "keeps count windows only" : "keeps time windows only");
            continue;
        }
        dd::FilterSpec one = spec;
        one.structure = s.id;
        // Sized by memory (--mem without --fpr): the rate-adaptive filter takes
        // --mem as its budget beside the default target FPR (packet's under
        // --key packet), as when it is named (FilterOptions::finish), not as
        // a limit to fit the lowest FPR in.
        if (s.rate_adaptive && one.fpr == 0.0) one.fpr = default_fpr;
        auto r = dd::plan_spec(one);
        if (auto* p = std::get_if<m::Plan>(&r)) plans.emplace_back(one, *p);
        else refused.emplace_back(s.name, std::get<m::PlanError>(r).message);
    }
    std::stable_sort(plans.begin(), plans.end(),
                     [](const auto& a, const auto& b) { return a.second.bits_per_item < b.second.bits_per_item; });
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& [one, p] : plans) {
            arr.push_back(plan_json(p, one));
            if (assumed) arr.back()["capacity_assumed"] = true;  // not given: see the text form's note
        }
        for (const auto& [name, why] : refused) arr.push_back({{"structure", name}, {"error", why}});
        std::cout << agebloom::tools::json_text(arr, 2) << '\n';
        return plans.empty() ? kExitNoPlan : 0;
    }
    std::printf("%-22s %9s %12s %11s %12s %7s %9s  %s\n", "structure", "bits/item", "bytes", "model FPR",
                "slack", "NPWS", "acc/query", "parameters");
    for (const auto& [one, p] : plans) {
        const dd::DedupFilter built(p.config);
        const uint64_t slack = built.slack();
        // A filter with false negatives by design keeps no window to be slack past.
        const std::string slack_text = agebloom::info(p.structure).false_negatives ? "no window"
                                       : spec.window.is_time() ? dd::format_duration(slack, true)
                                                               : std::to_string(slack);
        std::printf("%-22s %9.2f %12llu %11.4g %12s %7.4f %9.2f  %s\n", agebloom::name(p.structure), p.bits_per_item,
                    static_cast<unsigned long long>(p.total_bytes), p.expected_fpr, slack_text.c_str(), p.peak_npws,
                    p.accesses_per_query, built.parameters().c_str());
    }
    for (const auto& [name, why] : refused) std::printf("%-22s -  %s\n", name.c_str(), why.c_str());
    std::printf("(slack: how far past the window a key may be remembered, in %s; rebuild a row with its --filter "
                "NAME and the same options%s)\n",
                spec.window.is_time() ? "time" : "insertions",
                assumed ? (" plus --capacity " + std::to_string(spec.capacity)).c_str() : "");
    if (assumed)
        std::printf("(no --capacity: every row is planned for %llu insertions per --ttl, the rate a named structure "
                    "assumes; without --capacity, tlbf alone plans for an unknown rate instead)\n",
                    static_cast<unsigned long long>(spec.capacity));
    return plans.empty() ? kExitNoPlan : 0;
}

// --plot: bits per item against the target FPR for every structure over this
// window and limits, as a CSV beside the PNG, drawn by
// lab/plots/structures_bits.py (the lab's structures-bits picture).
int plot(const dd::FilterSpec& given, const std::string& png) {
    const dd::FilterSpec spec = comparable(given);
    const std::string csv = (png.size() > 4 && png.compare(png.size() - 4, 4, ".png") == 0
                                 ? png.substr(0, png.size() - 4) : png) + ".csv";
    std::FILE* out = std::fopen(csv.c_str(), "w");
    if (out == nullptr) {
        std::fprintf(stderr, "agebloom-plan: --plot %s: cannot write its data, %s: %s\n", png.c_str(), csv.c_str(),
                     std::strerror(errno));
        return kExitUsage;
    }
    std::fprintf(out, "structure,target_fpr,bits_per_item,model_fpr,accesses_per_query\n");
    size_t rows = 0, structures = 0;
    for (const agebloom::StructureInfo& s : agebloom::kStructures) {
        const size_t before = rows;
        for (int i = 0; i <= 20; ++i) {
            const double target = std::pow(10.0, -1.0 - 0.25 * i);  // 1e-1 .. 1e-6
            dd::FilterSpec one = spec;
            one.structure = s.id;
            one.fpr = target;
            auto r = dd::plan_spec(one);
            if (const auto* p = std::get_if<m::Plan>(&r)) {
                std::fprintf(out, "%s,%.6g,%.4f,%.6g,%.3f\n", s.name, target, p->bits_per_item, p->expected_fpr,
                             p->accesses_per_query);
                ++rows;
            }
        }
        structures += rows > before;
    }
    // A full disk: no data file cut short is left for a later run to draw.
    const bool write_failed = std::ferror(out) != 0;
    if (std::fclose(out) != 0 || write_failed) {
        const int err = errno;
        std::remove(csv.c_str());
        std::fprintf(stderr, "agebloom-plan: --plot %s: cannot write its data, %s%s%s\n", png.c_str(), csv.c_str(),
                     err ? ": " : "", err ? std::strerror(err) : "");
        return kExitUsage;
    }
    // An empty chart is not a result (a --mem no structure fits in at any
    // FPR drawn, a limit none meets): said, exit 1, no picture.
    if (rows == 0) {
        std::remove(csv.c_str());
        std::fprintf(stderr, "agebloom-plan: --plot %s: no structure has a plan for FPR 1e-1 .. 1e-6 within these "
                     "limits: nothing to draw\n", png.c_str());
        return kExitNoPlan;
    }
    const std::string window = spec.window.is_time()
                                   ? "--ttl " + dd::format_duration(spec.window.span, true) +
                                         (spec.capacity ? ", " + std::to_string(spec.capacity) + " insertions" : "")
                                   : std::to_string(spec.window.span) + " insertions";
    if (const std::string err = agebloom::tools::draw_plot(
            "structures_bits.py", csv, png, {"Bits per item against the target FPR (window " + window + ")"});
        !err.empty()) {
        std::fprintf(stderr, "agebloom-plan: --plot %s not drawn: %s (the data is in %s)\n", png.c_str(), err.c_str(),
                     csv.c_str());
        return kExitNoPlan;
    }
    std::printf("plotted %zu plans of %zu structures: %s (data: %s)\n", rows, structures, png.c_str(), csv.c_str());
    return 0;
}

void print_table2(bool json) {
    const auto rows = m::apbf_table2();
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& r : rows) arr.push_back(to_json(r));
        std::cout << agebloom::tools::json_text(arr, 2) << '\n';
        return;
    }
    std::printf("%4s %4s %10s %5s %8s %8s %8s %6s\n", "k", "l", "actual_fp", "eff", "window", "fp",
                "false", "NPWS");
    for (const auto& r : rows)
        std::printf("%4u %4u %10.6f %5.2f %8.2f %8.2f %8.2f %6.2f\n", r.k, r.l, r.actual_fp, r.eff,
                    r.accesses_window, r.accesses_fp, r.accesses_false, r.npws);
}

} // namespace

int main(int argc, char** argv) {
    agebloom::dedup::check_stdout_at_exit("agebloom-plan");
    enum Opt { kTable = 256, kJson, kHelp, kCompare, kPlot };
    std::vector<option> long_opts = {
        {"structure", required_argument, nullptr, dd::FilterOptions::kFilter},
        {"table", required_argument, nullptr, kTable},
        {"json", no_argument, nullptr, kJson},
        {"compare", no_argument, nullptr, kCompare},
        {"plot", required_argument, nullptr, kPlot},
        {"help", no_argument, nullptr, kHelp}};
    dd::FilterOptions::append_to(long_opts);
    long_opts.push_back({nullptr, 0, nullptr, 0});

    dd::FilterOptions shared;
    bool json = false, want_compare = false;
    std::optional<std::string> table, png;
    opterr = 0; // we print our own messages
    int c, longindex = -1;
    std::vector<std::string> ignored;  // the tools' options that do not change a plan, as given
    dd::RepeatCheck repeats(long_opts.data());
    bool filter_given = false;
    std::string beside_table;  // the first option given that --table does not take
    while ((c = getopt_long(argc, argv, "h", long_opts.data(), &longindex)) != -1) {
        std::string error = repeats.check(c, longindex, optarg);
        if (longindex >= 0 && c != kTable && c != kJson && beside_table.empty())
            beside_table = std::string("--") + long_opts[longindex].name;
        longindex = -1;
        filter_given |= c == dd::FilterOptions::kFilter;
        if (!error.empty()) usage_error(error);
        if (shared.take(c, optarg, error)) {
            if (!error.empty()) usage_error(error);
            if (shared.version) {  // at once, as --help: the options after it are not read
                dd::print_version(stdout, "agebloom-plan");
                return 0;
            }
            if (!dd::FilterOptions::changes_plan(c)) {
                // Its name from the table (each shared option has its own value).
                const auto opt = std::find_if(long_opts.begin(), long_opts.end(), [c](const option& o) { return o.val == c; });
                if (const std::string name = std::string("--") + opt->name;
                    std::find(ignored.begin(), ignored.end(), name) == ignored.end())
                    ignored.push_back(name);
            }
            continue;
        }
        switch (c) {
        case kTable: table = optarg; break;
        case kJson: json = true; break;
        case kCompare: want_compare = true; break;
        case kPlot:
            png = optarg;
            // matplotlib picks the format from the name: a name without
            // .png would be written as NAME.png, and ".png" alone or a
            // folder's "dir/.png" is a hidden file.
            if (png->size() < 5 || png->compare(png->size() - 4, 4, ".png") != 0 || png->ends_with("/.png"))
                usage_error("--plot needs a file name ending in .png, not '" + *png + "'");
            if (std::filesystem::is_directory(*png)) usage_error("--plot " + *png + ": is a folder");
            break;
        case kHelp:
        case 'h': print_usage(stdout); return 0;
        default:
            if (optopt > ' ' && optopt < 127) usage_error(std::string("unknown option: -") + char(optopt));
            usage_error(std::string("unknown option or missing value: ") + argv[optind - 1]);
        }
    }
    if (optind < argc) usage_error(std::string("unexpected argument: ") + argv[optind]);
    if (shared.list_filters) {
        if (!json) {
            dd::print_filter_list(stdout);
            return 0;
        }
        std::cout << agebloom::tools::json_text(agebloom::tools::filter_list_json(), 2) << '\n';
        return 0;
    }

    // Options the run would not use are refused, not dropped without a word.
    if (table && !beside_table.empty())
        usage_error("--table apbf2 prints the paper's table alone (its own windows and rows): not with " +
                    beside_table);
    if (png && json && !want_compare)
        usage_error("--plot writes its data as CSV beside the picture: --json does not apply");
    if (png && filter_given) usage_error("--plot draws every structure: --filter does not apply");
    if (table) {
        if (*table != "apbf2") usage_error("unknown table '" + *table + "' (known: apbf2)");
        print_table2(json);
        return 0;
    }
    if (std::string e = shared.finish(); !e.empty()) usage_error(e);
    // Checked as dedup_fwd compiles it (Ethernet: no trace here to take a
    // link type from), so that a pasted command line with a bad expression
    // is refused here as there.
    if (!shared.bpf.empty()) {
        agebloom::packet::BpfFilter bpf;
        if (std::string e = bpf.compile(shared.bpf, agebloom::packet::linktype::en10mb); !e.empty())
            usage_error(e + " (compiled for Ethernet, as dedup_fwd does)");
    }
    const dd::FilterSpec& spec = shared.spec;
    if (!ignored.empty()) {
        std::string names;
        for (const std::string& n : ignored) names += (names.empty() ? "" : ", ") + n;
        std::fprintf(stderr, "agebloom-plan: note: %s %s not change the plan (they shape the key or the run): ignored\n",
                     names.c_str(), ignored.size() == 1 ? "does" : "do");
    }

    int status = 0;
    if (want_compare) status = compare(spec, json, shared.default_fpr());
    if (png) {
        const int drawn = plot(spec, *png);
        return status ? status : drawn;
    }
    if (want_compare) return status;
    const auto result = dd::plan_spec(spec);
    if (const auto* err = std::get_if<m::PlanError>(&result)) return refusal(*err);
    const auto& p = std::get<m::Plan>(result);
    // A plan past this machine's memory is still a plan (for another
    // machine), but the tools would fail to allocate it here: said.
    if (const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE); pages > 0 && page > 0 &&
                                                                                   p.total_bytes / uint64_t(page) >= uint64_t(pages))
        std::fprintf(stderr, "agebloom-plan: note: %.1f GiB is more than this machine's memory (%.1f GiB): "
                     "agebloom-replay and dedup_fwd would not get it here\n",
                     static_cast<double>(p.total_bytes) / (1u << 30), static_cast<double>(pages) * page / (1u << 30));
    if (json) std::cout << agebloom::tools::json_text(plan_json(p, spec), 2) << '\n';
    else print_plan_text(p, spec);
    return 0;
}
