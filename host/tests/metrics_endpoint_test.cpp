// GET /metrics without a socket: the request line's every refusal, and the exposition
// text line by line (its families, labels escaped, counters apart from gauges).
#include <string>

#include <gtest/gtest.h>

#include "serve/serve_protocol.hpp"
#include "serve/prometheus.hpp"

namespace arbiter::host {
namespace {

using serve_protocol::parse_http_request;

TEST(MetricsRequest, GetAndHeadOfMetricsAreServed) {
    auto get = parse_http_request("GET /metrics HTTP/1.1\r\nHost: a\r\n");
    EXPECT_TRUE(get.ok);
    EXPECT_FALSE(get.head);
    auto head = parse_http_request("HEAD /metrics?x=1 HTTP/1.0\r\n");
    EXPECT_TRUE(head.ok);
    EXPECT_TRUE(head.head);
}

TEST(MetricsRequest, EverythingElseIsRefusedWithItsStatus) {
    EXPECT_EQ(parse_http_request("GET / HTTP/1.1\r\n").status, 404);
    EXPECT_EQ(parse_http_request("GET /metricsx HTTP/1.1\r\n").status, 404);
    EXPECT_EQ(parse_http_request("POST /metrics HTTP/1.1\r\n").status, 405);
    EXPECT_EQ(parse_http_request("GET /metrics HTTP/2\r\n").status, 505);
    EXPECT_EQ(parse_http_request("GET /metrics\r\n").status, 400);
    EXPECT_EQ(parse_http_request("GET  /metrics HTTP/1.1\r\n").status, 400);
    EXPECT_EQ(parse_http_request("GET /metrics HTTP/1.1").status, 400) << "no line end";
    EXPECT_EQ(parse_http_request("").status, 400);
    // What is quoted back is escaped: a path of control bytes cannot reach a terminal.
    auto odd = parse_http_request("GET /\x1b[2J\xff HTTP/1.1\r\n");
    EXPECT_EQ(odd.status, 404);
    EXPECT_EQ(odd.problem.find('\x1b'), std::string::npos) << odd.problem;
}

TEST(MetricsRequest, TheResponseClosesAndCountsItsBody) {
    const std::string response = serve_protocol::http_response(405, "text/plain", "no\n");
    EXPECT_EQ(response,
              "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
              "Allow: GET, HEAD\r\nConnection: close\r\n\r\nno\n");
    EXPECT_EQ(serve_protocol::http_response(200, "text/plain", "body", true),
              "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\nConnection: "
              "close\r\n\r\n");
}

TEST(Exposition, FamiliesLabelsAndPluginMetrics) {
    serve::MetricsView view;
    view.server_id = "eu \"1\"\\\n";
    view.counters.batches = 1201;
    view.counters.events = 8744;
    view.relay_connections = 2;
    view.reloads_ok = 3;
    view.plugins = {{"reference", true, 1201, 0, 2'500'000'000}, {"broken", false, 0, 0, 0}};
    view.plugin_metrics = {{"kaladin", "signals.rate", "", 4, true},
                           {"kaladin", "tracked_matches", "", 1, false},
                           {"reference", "tracked_matches", "0", 3, false},
                           {"reference", "tracked_matches", "1", 2, false}};
    const std::string text = serve::render_prometheus(view);

    auto has = [&](const std::string& line) {
        return text.find("\n" + line + "\n") != std::string::npos;
    };
    EXPECT_TRUE(has("arbiter_info{server_id=\"eu \\\"1\\\"\\\\\\n\"} 1")) << text;
    EXPECT_TRUE(has("# TYPE arbiter_batches_total counter"));
    EXPECT_TRUE(has("arbiter_batches_total 1201"));
    EXPECT_TRUE(has("arbiter_events_total 8744"));
    EXPECT_TRUE(has("arbiter_relay_connections 2"));
    EXPECT_TRUE(has("arbiter_reloads_total{result=\"ok\"} 3"));
    EXPECT_TRUE(has("arbiter_plugin_active{plugin=\"broken\"} 0"));
    EXPECT_TRUE(has("arbiter_plugin_busy_seconds_total{plugin=\"reference\"} 2.5"));
    EXPECT_TRUE(has("# TYPE arbiter_plugin_metric_total counter"));
    EXPECT_TRUE(has("arbiter_plugin_metric_total{plugin=\"kaladin\",name=\"signals.rate\"} 4"));
    EXPECT_TRUE(has("# TYPE arbiter_plugin_metric gauge"));
    EXPECT_TRUE(has("arbiter_plugin_metric{plugin=\"kaladin\",name=\"tracked_matches\"} 1"));
    // A sharded plugin's gauge, one per shard ([host] threads).
    EXPECT_TRUE(has("arbiter_plugin_metric{plugin=\"reference\",name=\"tracked_matches\",shard=\"0\"} 3"));
    EXPECT_TRUE(has("arbiter_plugin_metric{plugin=\"reference\",name=\"tracked_matches\",shard=\"1\"} 2"));
    // Every family is declared once, before its samples, and the text ends a line.
    EXPECT_EQ(text.find("# TYPE arbiter_batches_total"),
              text.rfind("# TYPE arbiter_batches_total"));
    EXPECT_TRUE(text.ends_with("\n"));
}

// What plugins record is read apart from the host's figures (off the event thread, in
// `arbiter serve`): only the names of the view's plugins, a shard's gauge by its shard.
TEST(Exposition, PluginMetricsAreReadForThePluginsOfTheView) {
    Metrics metrics;
    metrics.add("kaladin.signals.rate", 4);
    metrics.set("kaladin.tracked_matches#1", 2);
    metrics.add("gone.calls", 9);    // a plugin the view does not have
    metrics.add("host_counter", 1);  // no plugin's at all
    serve::MetricsView view;
    view.plugins = {{"kaladin", true, 0, 0, 0}};
    serve::add_plugin_metrics(view, metrics);
    ASSERT_EQ(view.plugin_metrics.size(), 2u);
    EXPECT_EQ(view.plugin_metrics[0].plugin, "kaladin");
    EXPECT_EQ(view.plugin_metrics[0].name, "signals.rate");
    EXPECT_TRUE(view.plugin_metrics[0].counter);
    EXPECT_EQ(view.plugin_metrics[1].name, "tracked_matches");
    EXPECT_EQ(view.plugin_metrics[1].shard, "1");
    EXPECT_FALSE(view.plugin_metrics[1].counter);
    EXPECT_EQ(view.plugin_metrics[1].value, 2);
}

TEST(Exposition, WithoutPluginMetricsTheirFamiliesAreLeftOut) {
    const std::string text = serve::render_prometheus({});
    EXPECT_EQ(text.find("arbiter_plugin_metric"), std::string::npos);
    EXPECT_NE(text.find("arbiter_uptime_seconds 0\n"), std::string::npos);
}

}  // namespace
}  // namespace arbiter::host
