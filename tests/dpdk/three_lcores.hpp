// Three lcores (main + two) whatever the CPU count: lcores 0-2 floating over
// the CPUs this process may use (a 2-core machine cannot give -l 0,1,2), as
// the EAL's --lcores spells it.
#pragma once

#include <sched.h>

#include <string>

inline std::string three_lcores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::string cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) {
        if (!cpus.empty()) cpus += ',';
        cpus += std::to_string(c);
      }
  return "(0,1,2)@(" + (cpus.empty() ? std::string("0") : cpus) + ")";
}
