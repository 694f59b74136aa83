// "The assessments for a given event stream are the same whatever the batch size"
// (ARCHITECTURE.md, "Aggregation"): the sample match cut into batches of 1, 7 and 4096
// events gives the same assessment, field for field, as the match batched per tick.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arbiter/host/event_file.hpp"
#include "arbiter/host/host.hpp"
#include "support/host_helpers.hpp"
#include "sample_match.hpp"
#include "support/temp_dir.hpp"

namespace arbiter::test {

using samples::encode;
using samples::EventGroups;
using samples::regroup;
using samples::sample_match_events;
namespace {

std::string exact(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.17g", value);
    return buffer;
}

// Everything an assessment says, as text, so that a difference shows in the failure.
// reported_at_us is left out: it is the relay time of the batch in hand when a signal
// was reported, which depends on where the batch ends, by design.
std::string describe(const host::Assessment& a) {
    std::string text = a.player.relay_id + "/" + std::to_string(a.player.match_id) + "/" +
                       std::to_string(a.player.player) + " " + a.account_id + " " +
                       host::to_string(a.action) + " combined " + exact(a.combined_score) +
                       (a.tripwire ? " tripwire" : "") + "\n";
    for (const auto& [model_class, score] : a.class_scores)
        text += std::string("  class ") + host::to_string(model_class) + " " + exact(score) + "\n";
    for (const auto& reason : a.reasons)
        text += "  reason " + reason + "\n";
    for (const auto& check : a.checks)
        text += "  check " + check.plugin + ":" + check.code + " score " + exact(check.score) +
                " confidence " + exact(check.confidence) + " weight " + exact(check.weight) +
                " class " + host::to_string(check.model_class) +
                (check.tripwire ? " tripwire" : "") + " evidence " + check.evidence_json + "\n";
    return text;
}

std::vector<std::string> run(const std::vector<std::vector<uint8_t>>& batches) {
    TempDir dir;
    std::string text = host_table(dir / "work") + plugin_table("reference", reference_plugin()) +
                       "\n[plugins.reference.config.movement]\nmax_speed = 20.0\ntolerance = "
                       "1.1\nwindow_s = 1.0\n";
    host::Host host(parse(text, dir.path()));
    EXPECT_TRUE(host.plugin_errors().empty());
    for (const auto& batch : batches) {
        auto refused = host.push(batch);
        EXPECT_FALSE(refused) << *refused;
    }
    host.close();
    std::vector<std::string> out;
    for (const auto& assessment : host.assessments())
        out.push_back(describe(assessment));
    return out;
}

TEST(BatchSize, AssessmentsDoNotDependOnHowTheStreamIsCut) {
    const EventGroups per_tick = sample_match_events();
    const auto expected = run(encode(per_tick));

    // The comparison means something only if the match produced verdicts.
    ASSERT_EQ(expected.size(), 6u);
    EXPECT_NE(expected[4].find(" FlagForReview "), std::string::npos) << expected[4];
    EXPECT_NE(expected[5].find(" FlagForReview "), std::string::npos) << expected[5];
    EXPECT_NE(expected[5].find("movement.teleport"), std::string::npos) << expected[5];

    for (size_t size : {size_t{1}, size_t{7}, size_t{4096}}) {
        auto groups = regroup(per_tick, size);
        ASSERT_GT(groups.size(), 1u);
        auto actual = run(encode(groups));
        ASSERT_EQ(actual.size(), expected.size()) << "batches of " << size;
        for (size_t i = 0; i < expected.size(); ++i)
            EXPECT_EQ(actual[i], expected[i]) << "batches of " << size << " events";
    }
}

}  // namespace
}  // namespace arbiter::test
