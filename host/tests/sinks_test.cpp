// The sinks: the security-event log's records, the JSON and the table of assessments.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "arbiter/host/aggregator.hpp"
#include "arbiter/host/host_services.hpp"
#include "arbiter/host/sinks.hpp"

namespace {

using arbiter::host::ModelClass;
using arbiter::host::SignalRecord;

SignalRecord make_signal(double score, bool tripwire = false) {
    SignalRecord s;
    s.plugin = "reference";
    s.model_class = ModelClass::validation;
    s.player = {"relay-eu", 3, 9};
    s.code = "movement.speed";
    s.score = score;
    s.confidence = 1.0;
    s.tripwire = tripwire;
    s.tripwires_allowed = true;
    s.evidence_json = R"({"speed_mps":31.5,"limit_mps":22})";
    s.reported_at_us = 1234;
    return s;
}

TEST(SecurityEventLog, WritesOneRecordPerSignalAboveTheThreshold) {
    auto path = std::filesystem::temp_directory_path() / "arbiter-sinks-test.jsonl";
    std::filesystem::remove(path);
    {
        arbiter::host::SecurityEventLog log(path.string(), "host-1", 0.3, 0.7);
        log.on_signal(make_signal(0.1));  // below the threshold
        log.on_signal(make_signal(0.8));
        log.on_signal(make_signal(0.1, true));  // a trip-wire is always logged
        log.flush();
        EXPECT_EQ(log.written(), 2u);
    }
    std::ifstream in(path);
    std::string line;
    std::vector<nlohmann::json> records;
    while (std::getline(in, line))
        records.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(records.size(), 2u);
    const auto& r = records[0];
    EXPECT_EQ(r["event_id"], 1);
    EXPECT_EQ(r["player_id"], "relay-eu/3/9");
    EXPECT_EQ(r["server_id"], "host-1");
    EXPECT_EQ(r["event_type"], "movement.speed");
    EXPECT_EQ(r["severity"], 3);
    EXPECT_DOUBLE_EQ(r["evidence"]["speed_mps"].get<double>(), 31.5);
    EXPECT_EQ(r["timestamp_relay_us"], 1234);
    EXPECT_EQ(r["reviewed"], false);
    EXPECT_EQ(r["reviewed_by"], "");
    EXPECT_EQ(r["verdict"], "");
    EXPECT_EQ(records[1]["severity"], 4);
    std::filesystem::remove(path);
}

TEST(SecurityEventLog, UnwritablePathIsAClearError) {
    EXPECT_THROW(arbiter::host::SecurityEventLog("/nonexistent-dir/log.jsonl", "h", 0.3, 0.7),
                 std::runtime_error);
}

TEST(AssessmentOutput, JsonCarriesEverySignalAndItsEvidence) {
    arbiter::host::Aggregator aggregator({});
    aggregator.observe_player({"relay-eu", 3, 9}, "acct");
    aggregator.add(make_signal(0.9));
    auto assessment = *aggregator.assessment({"relay-eu", 3, 9});
    auto json = nlohmann::json::parse(arbiter::host::assessment_json(assessment));
    EXPECT_EQ(json["action"], "FlagForReview");
    EXPECT_EQ(json["account_id"], "acct");
    EXPECT_EQ(json["signals"].size(), 1u);
    EXPECT_EQ(json["signals"][0]["evidence"]["limit_mps"], 22);
    EXPECT_DOUBLE_EQ(json["class_scores"]["validation"].get<double>(), 0.9);

    std::ostringstream table;
    arbiter::host::print_assessment_table(table, {assessment});
    EXPECT_NE(table.str().find("FlagForReview"), std::string::npos);
    EXPECT_NE(table.str().find("reference:movement.speed 0.90"), std::string::npos);
}

TEST(HostServices, MetricNamesAreChecked) {
    EXPECT_TRUE(arbiter::host::valid_metric_name("positions_checked"));
    EXPECT_TRUE(arbiter::host::valid_metric_name("signals.movement.speed"));
    EXPECT_FALSE(arbiter::host::valid_metric_name(""));
    EXPECT_FALSE(arbiter::host::valid_metric_name("Has Spaces"));
    EXPECT_FALSE(arbiter::host::valid_metric_name(std::string(65, 'a')));

    arbiter::host::Metrics metrics;
    arbiter::host::ServiceContext context;
    context.plugin_name = "p";
    context.metrics = &metrics;
    const auto* services = arbiter::host::host_services_table();
    services->metric_add(context.handle(), {"hits", 4}, 2.0);
    services->metric_add(context.handle(), {"hits", 4}, 3.0);
    services->metric_set(context.handle(), {"bad name", 8}, 1.0);    // ignored, logged
    services->metric_add(context.handle(), {"x", 1}, std::nan(""));  // ignored, logged
    EXPECT_DOUBLE_EQ(metrics.get("p.hits"), 5.0);
    EXPECT_EQ(metrics.snapshot().size(), 1u);
    context.relay_time_us = 77;
    EXPECT_EQ(services->relay_time_us(context.handle()), 77);
    EXPECT_EQ(services->relay_time_us(nullptr), 0);
}

}  // namespace
