// Port selection, pairing and initialisation (DPDK's examples/skeleton and
// l2fwd, plus RSS on the key's fields).
#pragma once

#include "app.hpp"

namespace dedup_fwd {

// Chooses ports and pairs from the options: fills g_app.ports and g_app.dst,
// and, for several workers, whether RSS can shard the keys or the main lcore
// must dispatch them in software (g_app.dispatch, nb_rxq, nb_txq, tx_lock).
// Reads device information only; exits with code 2 on a configuration the
// user must change (no ports, odd pairing, a mirror port that does not exist).
void plan_ports(App& app);

// Configures, sets up queues on and starts one port (rte_exit on failure).
void init_port(App& app, uint16_t port);

// Stops and closes every enabled port; returns how many failed to.
int close_ports(App& app);

}  // namespace dedup_fwd
