// The live host measured as relays meet it: `arbiter serve` in-process, a RelayClient
// streaming over the Unix socket and over TCP, and plugin swaps through the control
// socket while the stream runs.
#pragma once

namespace arbiter::bench {

// Prints: events per second end to end over each transport, and the swap pause and
// events lost for reloads of the reference plugin under load.
void run_serve_section(bool quick);

}  // namespace arbiter::bench
