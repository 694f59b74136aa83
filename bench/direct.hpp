// The direct limit: the bundled plugins' movement logic called in one process on C++
// structs, with no ABI, no FlatBuffers and no host. The same pure functions
// (plugins/reference/src/movement.hpp, plugins/lagpool/src/{budget,cost,server_lag}.hpp)
// and the same per-player containers as the plugins; no signals are built (honest players
// raise none).
#pragma once

#include <cstdint>
#include <memory>

namespace arbiter::bench {

struct DirectUpdate {
    int64_t t_us;
    uint32_t player;
    double x, y, z;
};

// plugins/reference: speed over a window of relay time, teleports.
class DirectReference {
  public:
    DirectReference();
    ~DirectReference();
    void on_position(const DirectUpdate& update);
    uint64_t findings() const;

  private:
    struct State;
    std::unique_ptr<State> state_;
};

// plugins/lagpool: the movement budget of each player.
class DirectLagpool {
  public:
    DirectLagpool();
    ~DirectLagpool();
    void on_position(const DirectUpdate& update);
    uint64_t findings() const;

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace arbiter::bench
