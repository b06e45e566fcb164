// agebloom: sliding-window Bloom filters for packet processing.
// The umbrella header of the freestanding, allocation-free core.
//
// Three rules of use (docs/API.md, "Sizing parameters, handles and threads"):
//  - XConfig::for_fpr(window, fpr, {.name = value, ...}): each structure's
//    own named parameters (XSizing), never positional;
//  - a filter (GuardedEpochFilter, ...) is a handle, a view of the caller's
//    arena: its copies share one state; create two for two filters;
//  - no locks inside: one writer at a time, readers only while none writes
//    (one filter per lcore in a DPDK app).
#pragma once

#include "agebloom/core/arena.hpp"
#include "agebloom/core/bits.hpp"
#include "agebloom/core/bloom_math.hpp"
#include "agebloom/core/error.hpp"
#include "agebloom/core/hash.hpp"
#include "agebloom/core/math.hpp"
#include "agebloom/core/window.hpp"
#include "agebloom/filters/apbf.hpp"
#include "agebloom/filters/block_timing.hpp"
#include "agebloom/filters/clock.hpp"
#include "agebloom/filters/counting.hpp"
#include "agebloom/filters/guarded_epoch.hpp"
#include "agebloom/filters/interleaved_apbf.hpp"
#include "agebloom/filters/interleaved_epoch.hpp"
#include "agebloom/filters/rotating_ring.hpp"
#include "agebloom/filters/stable.hpp"
#include "agebloom/filters/time_limited.hpp"
#include "agebloom/filters/pocket_epoch.hpp"
#include "agebloom/filters/queue_epoch.hpp"
#include "agebloom/filters/two_line_epoch.hpp"
#include "agebloom/inference/block_timing_posterior.hpp"
#include "agebloom/inference/classical_posterior.hpp"
#include "agebloom/inference/distinct_items.hpp"
#include "agebloom/inference/penalty.hpp"
