// agebloom: sliding-window Bloom filters for packet processing.
// The umbrella header of the freestanding, allocation-free core.
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
