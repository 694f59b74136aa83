// The live host measured as relays meet it: `arbiter serve` in-process, a RelayClient
// streaming over the Unix socket and over TCP, and plugin swaps through the control
// socket while the stream runs.
#pragma once

#include <cstdint>

namespace arbiter::bench {

// Prints: events per second end to end over each transport, and the swap pause and
// events lost for reloads of the reference plugin under load.
void run_serve_section(bool quick);

// Memory over a long life: `matches` matches starting and ending through arbiter serve
// (hours of play compressed), with the process's RSS and the players the server holds
// printed as they go; flat after warm-up when ended matches leave the server.
void run_serve_soak(uint64_t matches);

}  // namespace arbiter::bench
