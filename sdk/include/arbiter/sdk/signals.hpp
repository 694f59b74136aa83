// Reporting signals to the host.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <arbiter/arbiter_plugin.h>
#include <arbiter/sdk/evidence.hpp>

namespace arbiter {

// One suspicion signal. See arb_signal in arbiter_plugin.h for the meaning and limits of
// each field; the host drops (and counts) a signal that breaks them.
struct Signal {
    uint32_t player = 0;
    std::string_view code;
    double score = 0.0;
    double confidence = 0.0;
    Evidence evidence;
    // An extreme no human reaches: reaches FlagForReview on its own, where the operator
    // lets this plugin raise trip-wires.
    bool tripwire = false;
};

// The host's signal sink for the call in hand (on_batch, on_match_end).
class Signals {
  public:
    explicit Signals(const arb_signal_sink* sink) : sink_(sink) {}

    // Returns false when the host dropped the signal as malformed (it logs why).
    bool emit(const Signal& signal) {
        std::string evidence = signal.evidence.str();
        arb_signal raw{};
        raw.struct_size = sizeof(arb_signal);
        raw.player = signal.player;
        raw.flags = signal.tripwire ? ARB_SIGNAL_TRIPWIRE : 0u;
        raw.score = signal.score;
        raw.confidence = signal.confidence;
        raw.code = {signal.code.data(), signal.code.size()};
        raw.evidence_json = {evidence.data(), evidence.size()};
        ++emitted_;
        return sink_->emit(sink_->context, &raw) == ARB_OK;
    }

    size_t emitted() const { return emitted_; }

  private:
    const arb_signal_sink* sink_;
    size_t emitted_ = 0;
};

}  // namespace arbiter
