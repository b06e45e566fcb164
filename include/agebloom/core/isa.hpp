// Runtime instruction-set dispatch, in one place.
//
// Debian's libdpdk.pc appends -march=corei7 to every target that links DPDK,
// so a wider ISA cannot be chosen at build time. Instead a hot path that pays
// for it has a second body: either a wrapper marked AGEBLOOM_TARGET_AVX2 into
// which the compiler inlines the same baseline code with AVX2 enabled (the
// blocked guarded epoch probe: 2.7x faster, docs/PERFORMANCE.md), or a body
// written with intrinsics for AVX2 or AVX-512 (two-line's and the one-line
// layout's bulk probes), or for AES-NI and VAES (the short-key hash). A
// filter asks the CPU once, at create(), and keeps the answer; the data
// plane then branches on a value that never changes.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && \
    !defined(AGEBLOOM_NO_ISA_DISPATCH)
#define AGEBLOOM_ISA_DISPATCH 1
#define AGEBLOOM_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define AGEBLOOM_ISA_DISPATCH 0
#define AGEBLOOM_TARGET_AVX2
#endif

// Bodies written with intrinsics (AVX2 or AVX-512: a probe whose shape the
// compiler would not find from the baseline code) are built where
// AGEBLOOM_INTRINSICS_DISPATCH is 1. g++ 12's <immintrin.h> pulls in
// <stdlib.h> for _mm_malloc, so a freestanding g++ build keeps the baseline
// bodies; clang's header guards that include itself.
#if AGEBLOOM_ISA_DISPATCH && (__STDC_HOSTED__ || defined(__clang__))
#define AGEBLOOM_INTRINSICS_DISPATCH 1
#define AGEBLOOM_TARGET_AVX512 __attribute__((target("avx512f")))
// AVX-512F with DQ's 64-bit multiply (vpmullq): every CPU with AVX-512 since
// Skylake-SP and Zen 4.
#define AGEBLOOM_TARGET_AVX512DQ __attribute__((target("avx512f,avx512dq")))
// AES-NI (the short key hash's rounds, one key an instruction) and VAES with
// AVX2 (two keys an instruction).
#define AGEBLOOM_TARGET_AES __attribute__((target("aes")))
#define AGEBLOOM_TARGET_VAES __attribute__((target("vaes,avx2,aes")))
#else
#define AGEBLOOM_INTRINSICS_DISPATCH 0
#endif

// The intrinsics those bodies use. g++ 12 warns inside its own header that
// _mm512_undefined_epi32's deliberately unset register "may be used
// uninitialized", or "is used uninitialized" where the 64-bit shifts and
// vpmuludq are inlined into a caller's loop (GCC bug 105593, fixed in 13);
// the warning is about the header, not our code. It can surface again where
// a body's intrinsics are inlined, so the AVX-512 bodies' files put their
// functions between AGEBLOOM_INTRINSICS_WARNINGS_OFF and _ON too.
#if defined(__GNUC__) && !defined(__clang__)
#define AGEBLOOM_INTRINSICS_WARNINGS_OFF                              \
  _Pragma("GCC diagnostic push")                                      \
  _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")         \
  _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define AGEBLOOM_INTRINSICS_WARNINGS_ON _Pragma("GCC diagnostic pop")
#else
#define AGEBLOOM_INTRINSICS_WARNINGS_OFF
#define AGEBLOOM_INTRINSICS_WARNINGS_ON
#endif
#if AGEBLOOM_INTRINSICS_DISPATCH
AGEBLOOM_INTRINSICS_WARNINGS_OFF  // for the header below
#include <immintrin.h>
AGEBLOOM_INTRINSICS_WARNINGS_ON  // the warnings back as they were
#endif

namespace agebloom {

// True when this CPU executes AVX2 (and the build can dispatch to it).
inline bool cpu_has_avx2() noexcept {
#if AGEBLOOM_ISA_DISPATCH
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

// True when this CPU executes AVX-512F (and the build can dispatch to it).
// Valgrind's CPU has AVX2 but no AVX-512, so instruction counts taken under it
// (scripts/bench_instructions.sh) are the AVX2 bodies' where a hot path has
// one, else the baseline's.
inline bool cpu_has_avx512() noexcept {
#if AGEBLOOM_INTRINSICS_DISPATCH
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

// True when this CPU executes AVX-512F and AVX-512DQ (and the build can
// dispatch to them).
inline bool cpu_has_avx512dq() noexcept {
#if AGEBLOOM_INTRINSICS_DISPATCH
  return cpu_has_avx512() && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

#if AGEBLOOM_ISA_DISPATCH
namespace isa_detail {
struct CpuidWords {
  unsigned eax, ecx;
};
// CPUID's EAX and ECX for a leaf (subleaf 0): clang 14's
// __builtin_cpu_supports knows no "aes" or "vaes", and neither compiler
// reads the family, so those are read here.
inline CpuidWords cpuid(unsigned leaf) noexcept {
  unsigned eax, ebx, ecx, edx;
  __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(leaf), "c"(0));
  return {eax, ecx};
}

// What CPUID says, read once per process. In a virtual machine CPUID traps
// to the hypervisor: 11,600-18,800 cycles a call on a KVM guest, and a
// Hasher, which asks at construction, asked twice, 98% of the time of tests
// that made one per key (docs/PERFORMANCE.md, "Asking the CPU once"); now
// a construction takes ~30 cycles. Threads that race to fill the cache
// store the same value; relaxed atomics make that defined without a guard
// variable, which freestanding builds lack.
inline constexpr unsigned kRead = 1, kAes = 2, kVaes = 4, kFastPdep = 8;
inline unsigned cpu_bits_cache = 0;  // 0: not read yet
inline unsigned cpu_bits() noexcept {
  unsigned v = __atomic_load_n(&cpu_bits_cache, __ATOMIC_RELAXED);
  if (v != 0) return v;
  __builtin_cpu_init();
  const CpuidWords leaf1 = cpuid(1);
  // AES-NI: leaf 1, ECX bit 25. VAES on 256-bit registers: AES-NI, AVX2
  // (whose check includes the OS's saving of the registers) and leaf 7's ECX
  // bit 9.
  const bool aes = (leaf1.ecx >> 25) & 1;
  const bool vaes = aes && cpu_has_avx2() && ((cpuid(7).ecx >> 9) & 1);
  // Fast pdep/pext: BMI2 on Intel since Haswell, on AMD since Zen 3 (family
  // 19h). Zen 1 and 2 (family 17h), Hygon's Zen-based family 18h and
  // Excavator run them in microcode, tens to hundreds of cycles, slower than
  // the broadword code they would replace: any vendor but Intel needs family
  // 19h or later.
  const unsigned base_family = (leaf1.eax >> 8) & 0xf;
  const unsigned family = base_family + (base_family == 0xf ? (leaf1.eax >> 20) & 0xff : 0);
  const bool fast_pdep = __builtin_cpu_supports("bmi2") && (__builtin_cpu_is("intel") || family >= 0x19);
  v = kRead | (aes ? kAes : 0) | (vaes ? kVaes : 0) | (fast_pdep ? kFastPdep : 0);
  __atomic_store_n(&cpu_bits_cache, v, __ATOMIC_RELAXED);
  return v;
}
}  // namespace isa_detail
#endif

// True when this CPU executes AES-NI (and the build can dispatch to it).
inline bool cpu_has_aes() noexcept {
#if AGEBLOOM_INTRINSICS_DISPATCH
  return isa_detail::cpu_bits() & isa_detail::kAes;
#else
  return false;
#endif
}

// True when this CPU executes VAES on 256-bit registers (and the build can
// dispatch to it).
inline bool cpu_has_vaes() noexcept {
#if AGEBLOOM_INTRINSICS_DISPATCH
  return isa_detail::cpu_bits() & isa_detail::kVaes;
#else
  return false;
#endif
}

// True when this CPU executes BMI2's pdep/pext quickly (see cpu_bits()).
// The pocket epoch filter's select uses it.
inline bool cpu_has_fast_pdep() noexcept {
#if AGEBLOOM_ISA_DISPATCH
  return isa_detail::cpu_bits() & isa_detail::kFastPdep;
#else
  return false;
#endif
}

// The instruction sets a hot path may have bodies for, narrowest first: a
// filter with several asks for the widest it may use (use_isa) and runs the
// widest of those the CPU has, for which a body exists.
enum class Isa : unsigned char { baseline, avx2, avx512 };

// Its name, as benchmarks label their runs.
constexpr const char* isa_name(Isa isa) noexcept {
  return isa == Isa::avx512 ? "avx512" : isa == Isa::avx2 ? "avx2" : "baseline";
}

}  // namespace agebloom
