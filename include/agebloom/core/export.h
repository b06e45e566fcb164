/* AGEBLOOM_API: marks what libagebloom.so exports. The library is built with
 * -fvisibility=hidden, so a symbol without this mark stays inside it: the C
 * API (agebloom.h) and the compiled parts of the C++ API that the installed
 * headers declare are the whole of the shared library's interface.
 * A C header (it is included by agebloom.h), and free of any dependency. */
#ifndef AGEBLOOM_CORE_EXPORT_H
#define AGEBLOOM_CORE_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define AGEBLOOM_API __attribute__((visibility("default")))
#else
#define AGEBLOOM_API
#endif

#endif /* AGEBLOOM_CORE_EXPORT_H */
