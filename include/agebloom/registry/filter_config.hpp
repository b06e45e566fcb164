// Hosted companions of the registry (structure.hpp): one variant of every
// registered config type and one of every registered filter type, generated
// from the StructureTraits table, so that registering a structure is all it
// takes for the planner, DedupFilter and the tools to hold it.
#pragma once

#include <cstddef>
#include <type_traits>
#include <variant>

#include "agebloom/registry/structure.hpp"

namespace agebloom {

// Type-level helpers that build AnyConfig, AnyFilter and FilterFor from the
// StructureTraits table: a type list with de-duplication, its fold over every
// registered structure, and the config-to-filter map (with the check that
// structures sharing a config type share the filter type).
namespace registry_detail {
template <class... Ts>
struct type_list {};

template <class List, class T>
struct append_unique;
template <class... Ts, class T>
struct append_unique<type_list<Ts...>, T> {
  using type = std::conditional_t<(std::is_same_v<T, Ts> || ...), type_list<Ts...>, type_list<Ts..., T>>;
};

// The distinct Get<S>::type over every registered S, in table order.
template <template <Structure> class Get, size_t I = 0, class Acc = type_list<>>
struct collect {
  using type = typename collect<Get, I + 1,
                                typename append_unique<Acc, typename Get<static_cast<Structure>(I)>::type>::type>::type;
};
template <template <Structure> class Get, class Acc>
struct collect<Get, kStructureCount, Acc> {
  using type = Acc;
};

template <class List>
struct as_variant;
template <class... Ts>
struct as_variant<type_list<Ts...>> {
  using type = std::variant<Ts...>;
};

template <Structure S>
struct config_of {
  using type = typename StructureTraits<S>::Config;
};
template <Structure S>
struct filter_of {
  using type = typename StructureTraits<S>::Filter;
};

// The filter type built from config type C: the first structure's with that
// config (every structure sharing a config shares its filter; checked below).
template <class C, size_t I = 0>
struct filter_for_config {
  using T = StructureTraits<static_cast<Structure>(I)>;
  using type = std::conditional_t<std::is_same_v<typename T::Config, C>, typename T::Filter,
                                  typename filter_for_config<C, I + 1>::type>;
};
template <class C>
struct filter_for_config<C, kStructureCount> {
  using type = void;
};

template <size_t I = 0>
constexpr bool configs_map_to_one_filter() {
  if constexpr (I == kStructureCount) {
    return true;
  } else {
    using T = StructureTraits<static_cast<Structure>(I)>;
    return std::is_same_v<typename filter_for_config<typename T::Config>::type, typename T::Filter> &&
           configs_map_to_one_filter<I + 1>();
  }
}
static_assert(configs_map_to_one_filter(), "structures that share a config type must share the filter type");
}  // namespace registry_detail

// Every registered config type, and every registered filter type.
using AnyConfig = registry_detail::as_variant<registry_detail::collect<registry_detail::config_of>::type>::type;
using AnyFilter = registry_detail::as_variant<registry_detail::collect<registry_detail::filter_of>::type>::type;  // (std::variant of each type once)

// The filter type that config type C builds.
template <class C>
using FilterFor = typename registry_detail::filter_for_config<C>::type;

// A registered structure and its ready configuration: what the planner
// returns and what DedupFilter builds, bit for bit.
struct FilterConfig {
  Structure structure = Structure::guarded_epoch;  // which row of the registry
  AnyConfig config;                                // its configuration (the alternative is StructureTraits<structure>::Config)

  // The registry row (name, paper, windows, ...) of this structure.
  const StructureInfo& info() const noexcept { return agebloom::info(structure); }
  // f(config) for the configuration's concrete type: how the caller reaches
  // the typed config (and FilterFor<its type>) without naming a structure.
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(static_cast<F&&>(f), config);
  }
  // The filter's exact arena size (from any 64-byte aligned base).
  size_t bytes_needed() const noexcept {
    return visit([](const auto& c) -> size_t {
      auto n = FilterFor<std::decay_t<decltype(c)>>::bytes_needed(c);
      return n ? *n : 0;
    });
  }
  // The model false-positive rate of the configuration.
  double model_fpr() const noexcept {
    return visit([](const auto& c) { return c.model_fpr(); });
  }
  // Bits of memory per window item (per expected insertion for time windows).
  double bits_per_item() const noexcept {
    return visit([](const auto& c) { return c.bits_per_item(); });
  }
  // The window the configuration keeps.
  Window window() const noexcept {
    return visit([](const auto& c) { return c.window; });
  }
};

}  // namespace agebloom
