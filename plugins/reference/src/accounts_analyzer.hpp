// plugins/reference, built as the `accounts` plugin: one account connected in two places
// at once (docs/detection.md, "Sessions"), in two matches, on two relays, or twice in one
// match.
//
// The check compares every match, so one instance must see them all: this plugin does not
// declare shard_by_match, and the host runs it unsharded (ARCHITECTURE.md, "Threads").
// That is why it is a plugin of its own rather than an area of the reference analyzer,
// which keeps nothing across matches and is sharded. It keeps the account of each player of
// each match, where each account is connected (live_sessions.hpp), and each player's reports
// under the same step rule as the reference's (reports.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <arbiter/sdk.hpp>

#include "lazy.hpp"
#include "live_sessions.hpp"
#include "reports.hpp"

namespace arbiter::reference {

class AccountsAnalyzer final : public Analyzer {
  public:
    static constexpr PluginInfo info{
        .name = "accounts",
        .version = "0.1.0",
        .contact = "the Arbiter project (see its README)",
        .description = "one account connected in two places at once, across matches and relays",
        .model_class = ModelClass::validation,
        // Not sharded: a shard would see only its own matches, and miss the pairs that
        // straddle two shards.
        .shard_by_match = false,
    };

    explicit AccountsAnalyzer(const Context& context);

    void on_batch(const Batch& batch, Signals& signals) override;
    void on_match_end(const MatchKey& match, Signals& signals);
    void configure(const Context& context);
    std::vector<uint8_t> save_state();
    void restore_state(std::span<const uint8_t> blob);

  private:
    struct Match {
        // The account of every player id that joined (empty when the relay gave none); kept
        // after a leave, so that the match's end finds every session it had.
        std::map<uint32_t, std::string> accounts;
        // The players' reports; a player's go when it leaves, as in the reference analyzer.
        std::map<uint32_t, Lazy<Reports>> reports;
    };

    void on_join(const MatchKey& key, const fb::Event& event, Match& match, Signals& signals);
    void on_leave(const MatchKey& key, Match& match, uint32_t player, Signals& signals);
    // Every session of the match is over: it ended, or input was lost (a leave in the lost
    // batches would leave its session live, and the account's next join, here or in
    // another match, would look like one account in two places).
    void end_sessions(const MatchKey& key, const Match& match);

    std::map<MatchKey, Match> matches_;
    LiveSessions live_;
};

}  // namespace arbiter::reference
