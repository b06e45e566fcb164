// The capture files net_pcap reads (rx_pcap) and writes (tx_pcap), guarded
// before the EAL opens them.
//
// net_pcap opens and truncates a tx_pcap file when rte_eal_init probes its
// device, before dedup_fwd can check the ports against its options (a
// --portmask or mirror port that does not exist, an odd number of ports). So
// each tx_pcap that is a regular file, or no file yet, is written beside
// itself (.NAME.dedup_fwd-PID) and moved over NAME at exit, once the run has
// started forwarding; an exit before that (exit 2: the ports, the EAL, a
// device refused) removes it and leaves NAME as it was. A process killed
// outright leaves NAME as it was and the partial capture beside it.
#pragma once

#include <string>

#include <cstdint>
#include <vector>

#include "options.hpp"

namespace dedup_fwd {

// Before rte_eal_init, over the EAL's arguments argv[1, eal_argc): exits 2
// when a net_pcap tx_pcap names the same file as an rx_pcap, another
// tx_pcap, --stats-json or --snapshot, or an rx_pcap names --stats-json's or
// --snapshot's file (each would destroy the other); then points each tx_pcap
// at its file beside it (argv is rewritten in place).
void guard_capture_files(int eal_argc, char** argv, const Options& o);

// `args` (device's arguments, as the EAL holds them) with each tx_pcap
// written aside named by the user's own path again, for messages.
std::string with_user_paths(const std::string& device, std::string args);

// The run has started: at exit the captures replace their files.
void keep_tx_captures();

// Before the ports close: what each tx_pcap's Tx queue sent (port stats),
// for the ports dedup_fwd forwards on and the Tx queues it set up (net_pcap
// finishes only those captures when the ports close).
void note_tx_counts(const std::vector<uint16_t>& ports_in_use);

// After the ports close (net_pcap has flushed and closed the captures):
// each capture written aside is read back, and one that holds fewer packets
// than its queue sent, or ends in a damaged record (a full disk: net_pcap's
// writes are not checked), is said and keeps its file as it was (the partial
// capture stays beside it); frames net_pcap cut to 16128 bytes are said too.
// Returns how many captures failed (exit 1).
int check_tx_captures();

// After the ports are planned: exits 2 when a net_pcap device has more
// rx_pcap files (one per Rx queue) than the `rx_queues` dedup_fwd polls on
// each port, instead of leaving the others unread. (Called before any port
// starts; the exit removes the captures written aside.)
void check_rx_captures(unsigned rx_queues);

// Records of the rx_pcap files whose timestamp fields are out of range
// (microseconds >= 1e6, ...), counted before the EAL when the window's time
// is the Rx timestamps: agebloom-replay skips such a record, net_pcap hands it
// on with a clock far ahead that holds every later packet at it. dedup_fwd
// warns at start and at exit, and a finite run exits 3 (damaged input).
uint64_t rx_bad_timestamps();

}  // namespace dedup_fwd
