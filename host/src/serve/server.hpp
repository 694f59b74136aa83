// `arbiter serve` as a library: relays stream batches in over a Unix socket or TCP and
// hear back the assessments of their players; `arbiter ctl` talks to it over a control
// socket; plugins and the config reload when their files change.
//
// Two threads do the work. The network thread reads and verifies frames, and stops
// reading when the event thread falls behind (so the relay is pushed back, nothing is
// dropped). The event thread owns the Host and runs the pipeline. A third loads new
// plugin versions and releases old ones, so that only the swap holds the stream.
// docs/serve-protocol.md describes the wire; docs/operating.md how to run it.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "arbiter/host/config.hpp"

namespace arbiter::host {

struct ServeOptions {
    ConfigLoadOptions config_options;  // used again when the config file changes
    std::filesystem::path ready_file;  // written (JSON) once every socket listens; "" = none
    // SIGTERM and SIGINT drain and stop the server. The constructor blocks them (and
    // SIGPIPE) in the calling thread, before it starts any thread of its own.
    bool handle_signals = true;
};

class Server {
  public:
    // Loads the plugins and binds every socket [serve] names. Throws std::runtime_error
    // saying what could not be opened; nothing is left listening then.
    Server(ServerConfig config, ServeOptions options);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Serves until SIGTERM, SIGINT or stop(); then processes everything received,
    // ends the open matches, flushes the sinks, sends the last replies and returns: true
    // when every step of that drain succeeded (each failure is logged, and the drain goes
    // on past it). A second SIGTERM or SIGINT during the drain ends the process at once
    // (exit status 128 + the signal), with what the sinks had written.
    bool run();
    // From any thread: the same drain as SIGTERM.
    void stop();
    // What is listening, one line each, e.g. "tcp 127.0.0.1:7878".
    std::vector<std::string> endpoints() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace arbiter::host
