// agebloom-plan: choose a sliding-window filter for a window and target FP,
// or print the model's reproduction of the APBF paper's Table 2.
//
// --filter, --window, --ttl, --capacity, --fpr and --list-filters are the
// options dedup_fwd and agebloom-replay take (filter_options.hpp), with the
// same checks and messages.
//
// Exit codes: 0 success, 1 no plan satisfies the limits, 2 usage error (an
// FPR out of reach of every structure included).
#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/dedup/filter_options.hpp"
#include "agebloom/model/models.hpp"
#include "agebloom/model/planner.hpp"

#include <getopt.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace m = agebloom::model;

constexpr int kExitNoPlan = 1;
constexpr int kExitUsage = 2;

void print_usage(std::FILE* to) {
    std::fprintf(to,
        "usage: agebloom-plan (--window W | --ttl D --capacity N) --fpr P [options]\n"
        "       agebloom-plan --table apbf2 [--json]\n"
        "       agebloom-plan --list-filters\n"
        "\n"
        "  --window W             count window: insertions that must always be reported\n"
        "  --ttl D --capacity N   time window (500ms, 60s, 10m) holding N insertions\n"
        "  --fpr P                target false-positive rate, 0 < P < 1\n"
        "  --filter NAME          plan one structure (--list-filters; --structure is the same)\n"
        "  --list-filters         list the structures, and exit\n"
        "  --max-npws X           limit on peak normalised probability-weighted slack\n"
        "  --max-bits-per-item X  limit on memory per window item\n"
        "  --max-accesses N       limit on expected memory accesses per query\n"
        "  --block-bits B         block size of the blocked structures: 64, 128, 256, 512 (default 512)\n"
        "  --table apbf2          print Table 2 of the APBF paper as computed by the model\n"
        "  --json                 print JSON instead of a table\n"
        "  --help                 this text\n"
        "\n"
        "exit status: 0 ok, 1 no plan meets the limits, 2 usage error or an FPR out of reach\n");
}

[[noreturn]] void usage_error(const std::string& msg) {
    std::fprintf(stderr, "agebloom-plan: %s\n", msg.c_str());
    print_usage(stderr);
    std::exit(kExitUsage);
}

double parse_double(const char* opt, const char* text) {
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !std::isfinite(v))
        usage_error(std::string("invalid number for --") + opt + ": '" + text + "'");
    return v;
}

std::uint64_t parse_u64(const char* opt, const char* text) {
    // Accept 1000000 and 1e6 alike, but only whole non-negative values.
    const double v = parse_double(opt, text);
    if (v < 0 || v != std::floor(v) || v > 1.8e19)
        usage_error(std::string("--") + opt + " needs a non-negative integer, got '" + text + "'");
    return static_cast<std::uint64_t>(v);
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

void print_plan_text(const m::Plan& p) {
    const bool aged = std::holds_alternative<agebloom::ApbfConfig>(p.config.config) ||
                      std::holds_alternative<agebloom::InterleavedApbfConfig>(p.config.config) ||
                      std::holds_alternative<agebloom::TimeLimitedConfig>(p.config.config);
    const char* l_name = aged ? "l" : p.structure == agebloom::Structure::ring ? "N" : "r";
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
    std::printf("parameters            %s\n",
                agebloom::dedup::DedupFilter(p.config).parameters().c_str());
    std::printf("segments              %llu\n", static_cast<unsigned long long>(p.segments));
    std::printf("bits per segment      %llu\n", static_cast<unsigned long long>(p.bits_per_segment));
    std::printf("generation/epoch      %llu\n", static_cast<unsigned long long>(p.generation_or_epoch));
    std::printf("bits per item         %.3f\n", p.bits_per_item);
    std::printf("total bytes           %llu\n", static_cast<unsigned long long>(p.total_bytes));
    std::printf("expected fpr          %.6g\n", p.expected_fpr);
    std::printf("slack items           %.0f\n", p.slack_items);
    std::printf("peak NPWS             %.4f\n", p.peak_npws);
    std::printf("accesses per query    %.2f\n", p.accesses_per_query);
    std::printf("accesses per insert   %.2f\n", p.accesses_per_insert);
}

void print_table2(bool json) {
    const auto rows = m::apbf_table2();
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& r : rows) arr.push_back(to_json(r));
        std::cout << arr.dump(2) << '\n';
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
    namespace dd = agebloom::dedup;
    enum Opt { kMaxNpws = 256, kMaxBits, kMaxAcc, kBlock, kTable, kJson, kHelp };
    std::vector<option> long_opts = {
        {"max-npws", required_argument, nullptr, kMaxNpws},
        {"max-bits-per-item", required_argument, nullptr, kMaxBits},
        {"max-accesses", required_argument, nullptr, kMaxAcc},
        {"block-bits", required_argument, nullptr, kBlock},
        {"structure", required_argument, nullptr, dd::FilterOptions::kFilter},
        {"table", required_argument, nullptr, kTable},
        {"json", no_argument, nullptr, kJson},
        {"help", no_argument, nullptr, kHelp}};
    dd::FilterOptions::append_to(long_opts, /*sizing_only=*/true);
    long_opts.push_back({nullptr, 0, nullptr, 0});

    dd::FilterOptions shared;
    m::PlanRequest req;
    bool have_window = false, have_fpr = false, json = false;
    std::optional<std::string> table;
    opterr = 0; // we print our own messages
    int c;
    while ((c = getopt_long(argc, argv, "", long_opts.data(), nullptr)) != -1) {
        have_window |= c == dd::FilterOptions::kWindow || c == dd::FilterOptions::kTtl;
        have_fpr |= c == dd::FilterOptions::kFpr;
        std::string error;
        if (shared.take(c, optarg, error)) {
            if (!error.empty()) usage_error(error);
            continue;
        }
        switch (c) {
        case kMaxNpws: req.max_npws = parse_double("max-npws", optarg); break;
        case kMaxBits: req.max_bits_per_item = parse_double("max-bits-per-item", optarg); break;
        case kMaxAcc: req.max_accesses_per_query = parse_double("max-accesses", optarg); break;
        case kBlock: {
            const auto b = parse_u64("block-bits", optarg);
            if (b > 1u << 20) usage_error("--block-bits is too large");
            req.block_bits = static_cast<unsigned>(b);
            break;
        }
        case kTable: table = optarg; break;
        case kJson: json = true; break;
        case kHelp: print_usage(stdout); return 0;
        default:
            if (optopt > ' ' && optopt < 127) usage_error(std::string("unknown option: -") + char(optopt));
            usage_error(std::string("unknown option or missing value: ") + argv[optind - 1]);
        }
    }
    if (optind < argc) usage_error(std::string("unexpected argument: ") + argv[optind]);
    if (shared.list_filters) {
        dd::print_filter_list(stdout);
        return 0;
    }

    if (table) {
        if (*table != "apbf2") usage_error("unknown table '" + *table + "' (known: apbf2)");
        print_table2(json);
        return 0;
    }
    if (!have_window || !have_fpr) usage_error("--window (or --ttl) and --fpr are required");
    if (std::string e = shared.finish(); !e.empty()) usage_error(e);
    req.window = shared.spec.window;
    req.capacity = shared.spec.capacity;
    req.fpr = shared.spec.fpr;
    req.structure = shared.spec.structure;

    const auto result = m::plan(req);
    if (const auto* err = std::get_if<m::PlanError>(&result)) {
        // Values out of range and an FPR no structure can reach are usage
        // errors; limits that no plan meets are not.
        std::fprintf(stderr, "agebloom-plan: %s\n", err->message.c_str());
        return err->code == m::PlanErrc::over_limits ? kExitNoPlan : kExitUsage;
    }
    const auto& p = std::get<m::Plan>(result);
    if (json) std::cout << to_json(p).dump(2) << '\n';
    else print_plan_text(p);
    return 0;
}
