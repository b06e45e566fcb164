// The forwarding loop of one worker lcore.
#pragma once

#include "app.hpp"

namespace dedup_fwd {

// rte_eal_remote_launch entry point; arg = Worker*. Returns when g_app.quit
// is set. On the main lcore (single-lcore runs) it also does housekeeping.
int worker_main(void* arg);

// Dispatch mode: the main lcore's loop (receive, key, hash, enqueue to the
// owning worker's ring, housekeeping). Returns when g_app.quit is set, after
// setting g_app.dispatch_done.
int dispatcher_main(Dispatcher& d);

// Stats line, exit conditions; called by the main lcore every millisecond or
// so (or between bursts when the main lcore is the only worker).
void housekeeping(uint64_t now_tsc);

}  // namespace dedup_fwd
