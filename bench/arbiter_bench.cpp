// arbiter-bench: the whole pipeline, measured in one run (docs/performance.md).
//
//   arbiter-bench [--reps N] [--seconds S] [--quick] [--skip SECTION]... [--filter TEXT]
//
// Prints, for every item, events per second per core and nanoseconds per event (median of
// N repetitions, with the spread), then the ratios the goals are stated in. Time is the
// process's CPU time, so a core shared with other work still gives the cost per event;
// everything runs on one thread. The reload pause is wall time, as the stream sees it.
// Sections: core (floor, whole path, direct limit, interleaved round by round), batch,
// players, plugins, isolated (wall clock: the plugins run in child processes), memory,
// reload. --filter keeps the items of core, batch, players and plugins whose name holds
// TEXT (for a profile of one item).
#include <malloc.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <arbiter/host/ingest.hpp>
#include "store/store.hpp"

#include "direct.hpp"
#include "serve_bench.hpp"
#include "stats.hpp"
#include "workload.hpp"

namespace arbiter::bench {
namespace {

struct Settings {
    int reps = 3;
    double seconds = 0.3;  // CPU time per measurement
    bool quick = false;
    std::set<std::string> skip;
    std::set<std::string> only;  // when given, these sections alone
    std::string filter;          // items whose name contains it ("" = all)
    uint64_t soak_matches = 4000;
    std::string store_postgres;  // the store section on this PostgreSQL instead of SQLite
    uint32_t reload_players = 0;  // the reload section's rows of this many players alone (0: all)
    int reloads = 0;              // reloads per row of the reload section (0: 20, 5 at 100,000)
    // How the staged reload takes each shard over: "" the host's rule (Host::forks_shard),
    // "fork" every shard, "carry" none, so that the two compare on the same layout.
    std::string shard_reload;
};

// Reloads per row of the reload section: enough for a p99 that means something where the
// operator asks for it (--reloads), otherwise 20 (5 at 100,000, where each takes seconds).
int reloads_for(const Settings& s, uint32_t players) {
    if (s.reloads > 0) return s.reloads;
    return players >= 100'000 ? 5 : 20;
}

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// One measured item: `step` does a chunk of work and returns the events it handled.
struct Item {
    Item(std::string section_name, std::string item_name, std::function<uint64_t()> work)
        : section(std::move(section_name)), name(std::move(item_name)), step(std::move(work)) {}

    std::string section;
    std::string name;
    std::function<uint64_t()> step;
    std::vector<double> ns_per_event;  // one per repetition
    // Timed on the wall clock: an isolated plugin works in a child process, whose CPU time
    // is not this process's; the stream waits for it, so wall time is what it costs.
    bool wall = false;
};

double wall_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Runs step until `seconds` of CPU time (wall time for an item with `wall`) have passed;
// returns ns per event.
double measure(Item& item, double seconds) {
    uint64_t events = 0;
    const auto clock = item.wall ? wall_seconds : cpu_seconds;
    const double start = clock();
    double now = start;
    while (now - start < seconds) {
        events += item.step();
        now = clock();
    }
    const double ns = (now - start) * 1e9 / static_cast<double>(std::max<uint64_t>(events, 1));
    item.ns_per_event.push_back(ns);
    return ns;
}

double median_ns(const Item& item) {
    return median(item.ns_per_event);
}

void print_header() {
    std::printf("%-8s %-44s %14s %10s %21s\n", "section", "item", "events/s/core", "ns/event",
                "spread ns (min-max)");
}

void print_item(const Item& item) {
    const double ns = median_ns(item);
    const auto [lo, hi] = std::minmax_element(item.ns_per_event.begin(), item.ns_per_event.end());
    std::printf("%-8s %-44s %14.0f %10.1f %10.1f-%-10.1f\n", item.section.c_str(),
                item.name.c_str(), 1e9 / ns, ns, *lo, *hi);
    std::fflush(stdout);
}

// Feeds a host from a stream: the relay builds a batch, the host takes it.
std::function<uint64_t()> whole_path(std::shared_ptr<host::Host> h,
                                     std::shared_ptr<MovementStream> stream) {
    return [h, stream] {
        const std::vector<uint8_t> batch = stream->next();
        if (auto refused = h->push(batch)) {
            std::fprintf(stderr, "batch refused: %s\n", refused->c_str());
            std::exit(1);
        }
        return static_cast<uint64_t>(stream->options().batch_events);
    };
}

// Brings every player of the stream through `ticks` updates before measuring, so that
// the plugins' state is in its steady size.
void warm(host::Host& h, MovementStream& stream, uint64_t ticks) {
    const uint64_t events = ticks * stream.options().players;
    while (stream.events() < events)
        h.push(stream.next());
}

struct HostUnderTest {
    std::shared_ptr<host::Host> host;
    std::shared_ptr<MovementStream> stream;
};

HostUnderTest host_under_test(const std::vector<PluginSpec>& plugins, uint32_t players,
                              size_t batch_events, uint64_t warm_ticks) {
    HostUnderTest t{make_host(plugins), std::make_shared<MovementStream>(StreamOptions{
                                            .players = players, .batch_events = batch_events})};
    warm(*t.host, *t.stream, warm_ticks);
    return t;
}

// The direct limit's input: the same motion as MovementStream, as C++ structs.
class DirectStream {
  public:
    explicit DirectStream(uint32_t players) {
        for (uint32_t i = 0; i < players; ++i) {
            const double angle = static_cast<double>(i) * 2.399963;
            motion_.push_back({static_cast<double>(i % 1000) * 50.0,
                               static_cast<double>(i / 1000) * 50.0, 6.0 * std::cos(angle),
                               6.0 * std::sin(angle)});
        }
    }
    DirectUpdate next() {
        const int64_t tick_us = 50'000;
        const auto players = static_cast<int64_t>(motion_.size());
        Motion& m = motion_[player_];
        m.x += m.vx * 0.05;
        m.y += m.vy * 0.05;
        DirectUpdate update{tick_ * tick_us + static_cast<int64_t>(player_) * tick_us / players,
                            static_cast<uint32_t>(player_ + 1), m.x, m.y, 0.0};
        if (++player_ == motion_.size()) {
            player_ = 0;
            ++tick_;
        }
        return update;
    }

  private:
    struct Motion {
        double x, y, vx, vy;
    };
    std::vector<Motion> motion_;
    size_t player_ = 0;
    int64_t tick_ = 0;
};

// ---------------------------------------------------------------------------------------

constexpr uint32_t kPlayers = 1000;
constexpr size_t kBatch = 256;
constexpr uint64_t kWarmTicks = 120;  // 6 s of relay time: past every plugin's horizon

std::vector<Item> core_items() {
    std::vector<Item> items;
    // The relay's share: building the batches alone.
    {
        auto stream = std::make_shared<MovementStream>(
            StreamOptions{.players = kPlayers, .batch_events = kBatch});
        items.push_back({"core", "relay: build batches (BatchBuilder)", [stream] {
                             auto batch = stream->next();
                             return static_cast<uint64_t>(batch.empty() ? 0 : kBatch);
                         }});
    }
    // The floor: verify and walk the same batches, no dispatch.
    {
        auto batches = std::make_shared<std::vector<std::vector<uint8_t>>>(
            MovementStream({.players = kPlayers, .batch_events = kBatch})
                .prebuild(uint64_t{kPlayers} * 20));
        auto sink = std::make_shared<double>(0);
        items.push_back({"core", "floor: verify + walk (no dispatch)", [batches, sink] {
                             uint64_t events = 0;
                             for (const auto& batch : *batches)
                                 events += verify_and_walk(batch, *sink);
                             return events;
                         }});
        items.push_back({"core", "host ingest_batch (verify, rules, copy)", [batches] {
                             uint64_t events = 0;
                             for (const auto& batch : *batches)
                                 events += host::ingest_batch(batch, 16u << 20).batch.event_count;
                             return events;
                         }});
    }
    // The whole path: relay builds, host ingests, dispatches, aggregates.
    const std::vector<std::pair<std::string, std::vector<PluginSpec>>> configs = {
        {"noop", {noop_plugin()}},
        {"reference", {reference_plugin()}},
        {"lagpool", {lagpool_plugin()}},
        {"all bundled (reference + lagpool)", {reference_plugin(), lagpool_plugin()}},
    };
    for (const auto& [label, plugins] : configs) {
        auto t = host_under_test(plugins, kPlayers, kBatch, kWarmTicks);
        items.push_back({"core", "whole path: " + label, whole_path(t.host, t.stream)});
    }
    // The direct limit: the same logic on C++ structs.
    {
        auto stream = std::make_shared<DirectStream>(kPlayers);
        auto ref = std::make_shared<DirectReference>();
        for (uint64_t i = 0; i < kWarmTicks * kPlayers; ++i)
            ref->on_position(stream->next());
        items.push_back({"core", "direct: reference", [stream, ref] {
                             for (size_t i = 0; i < kBatch; ++i)
                                 ref->on_position(stream->next());
                             return uint64_t{kBatch};
                         }});
    }
    {
        auto stream = std::make_shared<DirectStream>(kPlayers);
        auto lag = std::make_shared<DirectLagpool>();
        for (uint64_t i = 0; i < kWarmTicks * kPlayers; ++i)
            lag->on_position(stream->next());
        items.push_back({"core", "direct: lagpool", [stream, lag] {
                             for (size_t i = 0; i < kBatch; ++i)
                                 lag->on_position(stream->next());
                             return uint64_t{kBatch};
                         }});
    }
    {
        auto stream = std::make_shared<DirectStream>(kPlayers);
        auto ref = std::make_shared<DirectReference>();
        auto lag = std::make_shared<DirectLagpool>();
        for (uint64_t i = 0; i < kWarmTicks * kPlayers; ++i) {
            const DirectUpdate u = stream->next();
            ref->on_position(u);
            lag->on_position(u);
        }
        items.push_back({"core", "direct: reference + lagpool", [stream, ref, lag] {
                             for (size_t i = 0; i < kBatch; ++i) {
                                 const DirectUpdate u = stream->next();
                                 ref->on_position(u);
                                 lag->on_position(u);
                             }
                             return uint64_t{kBatch};
                         }});
    }
    return items;
}

const Item* find(const std::vector<Item>& items, const std::string& name) {
    for (const Item& item : items)
        if (item.name == name) return &item;
    return nullptr;
}

void print_ratio(const std::vector<Item>& items, const char* what, const std::string& a,
                 const std::string& b, const char* goal) {
    const Item* x = find(items, a);
    const Item* y = find(items, b);
    if (!x || !y) return;
    std::printf("  %-58s %6.2f   (goal: %s)\n", what, median_ns(*x) / median_ns(*y), goal);
}

void run_core(const Settings& s) {
    std::vector<Item> items = core_items();
    std::erase_if(items,
                  [&](const Item& item) { return item.name.find(s.filter) == std::string::npos; });
    // Round by round, so that a noisy moment hits every item alike.
    for (int r = 0; r < s.reps; ++r)
        for (Item& item : items)
            measure(item, s.seconds);
    for (const Item& item : items)
        print_item(item);
    std::printf("\nratios (of ns/event; %d players, batches of %zu):\n", kPlayers, kBatch);
    print_ratio(items, "floor rate / no-op whole-path rate", "whole path: noop",
                "floor: verify + walk (no dispatch)", "<= 2.5, i.e. no-op >= 40 % of floor");
    print_ratio(items, "whole path / direct: reference", "whole path: reference",
                "direct: reference", "<= 2");
    print_ratio(items, "whole path / direct: lagpool", "whole path: lagpool", "direct: lagpool",
                "<= 2");
    print_ratio(items, "whole path / direct: all bundled",
                "whole path: all bundled (reference + lagpool)", "direct: reference + lagpool",
                "<= 2");
    const Item* all = find(items, "whole path: all bundled (reference + lagpool)");
    if (all)
        std::printf("  %-58s %6.2f M  (goal: >= 2 M)\n", "all bundled, events/s per core",
                    1e9 / median_ns(*all) / 1e6);
    std::printf("\n");
}

// Items measured one after another (each holds a host of its own, freed after).
void run_serial(const Settings& s, const std::string& section, const std::string& name,
                const std::function<HostUnderTest()>& make) {
    if (name.find(s.filter) == std::string::npos) return;
    HostUnderTest t = make();
    Item item{section, name, whole_path(t.host, t.stream)};
    for (int r = 0; r < s.reps; ++r)
        measure(item, s.seconds);
    print_item(item);
}

void run_batch(const Settings& s) {
    for (size_t batch :
         {size_t{1}, size_t{4}, size_t{16}, size_t{64}, size_t{256}, size_t{1024}, size_t{4096}}) {
        for (const auto& [label, plugins] :
             std::vector<std::pair<std::string, std::vector<PluginSpec>>>{
                 {"noop", {noop_plugin()}},
                 {"reference", {reference_plugin()}},
                 {"lagpool", {lagpool_plugin()}},
                 {"all", {reference_plugin(), lagpool_plugin()}}}) {
            run_serial(s, "batch", label + ", batch " + std::to_string(batch),
                       [&] { return host_under_test(plugins, kPlayers, batch, kWarmTicks); });
        }
    }
    std::printf("\n");
}

// Every bundled plugin, as the threads section runs them.
std::vector<PluginSpec> every_bundled_plugin() {
    std::vector<PluginSpec> plugins = {reference_plugin(), lagpool_plugin(), kaladin_plugin()};
    if (has_accounts_plugin()) plugins.push_back(accounts_plugin());
    return plugins;
}

void run_players(const Settings& s) {
    std::vector<uint32_t> counts = {100, 1000, 10'000, 100'000};
    if (s.quick) counts.pop_back();
    for (uint32_t players : counts) {
        for (const auto& [label, plugins] :
             std::vector<std::pair<std::string, std::vector<PluginSpec>>>{
                 {"noop", {noop_plugin()}},
                 {"reference", {reference_plugin()}},
                 {"lagpool", {lagpool_plugin()}},
                 {"kaladin", {kaladin_plugin()}},
                 {"all", {reference_plugin(), lagpool_plugin()}},
                 {"every", every_bundled_plugin()}}) {
            run_serial(s, "players", label + ", " + std::to_string(players) + " players",
                       [&] { return host_under_test(plugins, players, kBatch, kWarmTicks); });
        }
    }
    std::printf("\n");
}

void run_plugins(const Settings& s) {
    for (int n : {1, 2, 4, 8, 16}) {
        std::vector<PluginSpec> noops;
        std::vector<PluginSpec> refs;
        for (int i = 0; i < n; ++i) {
            noops.push_back(noop_plugin("noop" + std::to_string(i)));
            refs.push_back({"reference" + std::to_string(i), "reference"});
        }
        run_serial(s, "plugins", std::to_string(n) + " x noop",
                   [&] { return host_under_test(noops, kPlayers, kBatch, kWarmTicks); });
        run_serial(s, "plugins", std::to_string(n) + " x reference",
                   [&] { return host_under_test(refs, kPlayers, kBatch, kWarmTicks); });
    }
    std::printf("\n");
}

// The whole path with each bundled plugin in the host's process and isolated (a child
// process, shared memory), on the wall clock for both; the goal is isolated <= 1.5x in
// process at batches of 256. Isolated twice: stopped between calls (the default) and
// with run_between_calls, whose difference is what stopping the child costs.
void run_isolated(const Settings& s) {
    std::printf(
        "isolation = \"process\" against in process (%u players, wall clock, one core "
        "busy at a time):\n",
        kPlayers);
    const std::vector<std::pair<std::string, std::vector<PluginSpec>>> configs = {
        {"reference", {reference_plugin()}},
        {"lagpool", {lagpool_plugin()}},
        {"kaladin", {kaladin_plugin()}},
        {"all three", {reference_plugin(), lagpool_plugin(), kaladin_plugin()}}};
    std::vector<size_t> batches = {64, 256, 1024};
    if (s.quick) batches = {256};
    std::vector<std::string> ratios;
    for (size_t batch : batches) {
        for (const auto& [label, plugins] : configs) {
            // In process, isolated (stopped between calls), isolated and left running.
            double ns[3] = {0, 0, 0};
            const char* const kinds[3] = {", in process", ", isolated",
                                          ", isolated, running between calls"};
            for (int kind = 0; kind < 3; ++kind) {
                std::vector<PluginSpec> specs = plugins;
                for (PluginSpec& spec : specs) {
                    spec.isolated = kind > 0;
                    spec.runs_between_calls = kind == 2;
                }
                HostUnderTest t = host_under_test(specs, kPlayers, batch, kWarmTicks);
                Item item{"isolated", label + kinds[kind] + ", batch " + std::to_string(batch),
                          whole_path(t.host, t.stream)};
                item.wall = true;
                for (int r = 0; r < s.reps; ++r)
                    measure(item, s.seconds);
                print_item(item);
                ns[kind] = median_ns(item);
            }
            char line[200];
            std::snprintf(line, sizeof line, "  %-40s %6.2f%s  (running between calls: %.2f)",
                          (label + ", batch " + std::to_string(batch)).c_str(), ns[1] / ns[0],
                          batch == 256 ? "   (goal: <= 1.5)" : "", ns[2] / ns[0]);
            ratios.push_back(line);
        }
    }
    std::printf("\nratios (isolated / in process, of ns/event):\n");
    for (const std::string& line : ratios)
        std::printf("%s\n", line.c_str());
    std::printf("\n");
}

// The review store's writer: security events pushed as fast as the event thread can, then
// a flush; events/s into SQLite on the wall clock, with the commit interval as configured.
void run_store(const Settings& s) {
    const uint64_t events = s.quick ? 20'000 : 200'000;
    const bool postgres = !s.store_postgres.empty();
    std::printf("review store (%s), %llu security events:\n",
                postgres ? "PostgreSQL, --store-postgres" : "SQLite, WAL, synchronous=NORMAL",
                static_cast<unsigned long long>(events));
    for (const uint64_t interval_ms : {uint64_t{20}, uint64_t{200}}) {
        std::vector<double> rates;
        for (int r = 0; r < s.reps; ++r) {
            char folder[] = "/tmp/arbiter-bench-store-XXXXXX";
            if (!mkdtemp(folder)) throw std::runtime_error("mkdtemp failed");
            host::StoreSettings settings;
            if (postgres)
                settings.postgres = s.store_postgres;
            else
                settings.path = std::string(folder) + "/store.db";
            settings.commit_interval_ms = interval_ms;
            // Room for every event: a full queue loses records rather than wait (store.hpp),
            // and the figure is the writer's, to the last commit.
            settings.max_queued = events;
            const double start = wall_seconds();
            {
                host::StoreSink sink(settings, "bench", 0.3, 0.7);
                host::SignalRecord signal;
                signal.plugin = "reference";
                signal.code = "movement.speed";
                signal.score = 0.8;
                signal.confidence = 1.0;
                signal.evidence_json =
                    "{\"speed_mps\":31.5,\"limit_mps\":22,\"window_s\":1.0,\"updates\":21}";
                for (uint64_t i = 0; i < events; ++i) {
                    signal.player = {"bench-relay", 1 + i / 10'000,
                                     static_cast<uint32_t>(1 + i % 500)};
                    signal.account = "account-" + std::to_string(i % 5000);
                    signal.reported_at_us = static_cast<int64_t>(i) * 1000;
                    sink.on_signal(signal);
                }
                sink.flush();
            }
            rates.push_back(static_cast<double>(events) / (wall_seconds() - start));
            std::filesystem::remove_all(folder);
        }
        const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
        std::printf("  commit every %3llu ms: %9.0f events/s (spread %.0f-%.0f)\n",
                    static_cast<unsigned long long>(interval_ms), median(rates), *lo, *hi);
        std::fflush(stdout);
    }
    std::printf("\n");
}

size_t heap_in_use() {
    const struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

// Heap per player after every player has sent `ticks` updates: the host alone (no-op
// plugin) and each bundled plugin beyond it.
void run_memory(const Settings& s) {
    const uint32_t players = s.quick ? 2'000 : 10'000;
    const uint64_t ticks = 120;  // 6 s of relay time: past every plugin's horizon
    std::printf("memory per tracked player (%u players, %llu updates each, heap in use):\n",
                players, static_cast<unsigned long long>(ticks));
    double noop_bytes = 0;
    for (const auto& [label, plugins] :
         std::vector<std::pair<std::string, std::vector<PluginSpec>>>{
             {"noop (the host's own)", {noop_plugin()}},
             {"reference", {reference_plugin()}},
             {"lagpool", {lagpool_plugin()}},
             {"kaladin", {kaladin_plugin()}}}) {
        std::vector<double> per_player;
        for (int r = 0; r < s.reps; ++r) {
            malloc_trim(0);
            auto h = make_host(plugins);
            MovementStream stream({.players = players, .batch_events = kBatch});
            h->push(stream.next());  // the match is open, one batch in
            const size_t before = heap_in_use();
            warm(*h, stream, ticks);
            const size_t after = heap_in_use();
            per_player.push_back(static_cast<double>(after) - static_cast<double>(before));
        }
        const double bytes = median(per_player) / players;
        const auto [lo, hi] = std::minmax_element(per_player.begin(), per_player.end());
        if (label.starts_with("noop")) noop_bytes = bytes;
        std::printf(
            "  %-26s %8.0f B/player (spread %.0f-%.0f)%s\n", label.c_str(), bytes, *lo / players,
            *hi / players,
            label.starts_with("noop")
                ? ""
                : ("   plugin alone: " + std::to_string(static_cast<long>(bytes - noop_bytes)) +
                   " B (goal <= 2048)")
                      .c_str());
    }
    std::printf("\n");
}

// The reload sections' load: a host with reference and lagpool (`threads` workers), and
// `players` in one match (the worst case: with threads, all of them in one shard) or in
// matches of 500 as a community plays them, pushed round robin and warmed up past every
// plugin's horizon.
struct ReloadLoad {
    static constexpr uint32_t kMatchPlayers = 500;

    ReloadLoad(uint32_t players, bool one_match, uint32_t threads)
        : host(make_host({reference_plugin(), lagpool_plugin()}, threads)),
          matches(one_match ? 1 : std::max(1u, players / kMatchPlayers)) {
        for (uint32_t m = 0; m < matches; ++m)
            streams.emplace_back(StreamOptions{
                .players = players / matches, .batch_events = kBatch, .match_id = m + 1});
        for (uint64_t b = 0; b < kWarmTicks * players / kBatch; ++b)
            push();
    }
    void push() { host->push(streams[turn++ % streams.size()].next()); }
    // One push, timed (us, wall).
    double timed_push() {
        const auto start = std::chrono::steady_clock::now();
        push();
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count();
    }
    host::PluginSettings settings_of(const std::string& name) const {
        for (const auto& slot : host->plugins())
            if (slot.settings.name == name) return slot.settings;
        throw std::runtime_error("no plugin " + name + " in the bench's host");
    }
    // A reload as serve makes it (Host::begin_install), batches pushed until its report
    // comes; the longest push meanwhile, and the longest of as many pushes just before
    // (at least 20), so that the two compare like for like.
    struct Install {
        host::ReloadReport report;
        double longest_push_us = 0;
        double longest_before_us = 0;
        int pushes = 0;
    };
    Install install_while_pushing(host::PluginSlot fresh) {
        Install install;
        for (int b = 0; b < 20; ++b)
            install.longest_before_us = std::max(install.longest_before_us, timed_push());
        auto report = host->begin_install(std::move(fresh));
        while (!report) {
            install.longest_push_us = std::max(install.longest_push_us, timed_push());
            ++install.pushes;
            report = host->finished_install();
        }
        for (int b = 20; b < install.pushes; ++b)
            install.longest_before_us = std::max(install.longest_before_us, timed_push());
        install.report = std::move(*report);
        return install;
    }
    // Events the relay built that the host did not take in, once everything is flushed.
    long long lost() {
        host->flush();
        uint64_t sent = 0;
        for (const auto& stream : streams)
            sent += stream.events();
        return static_cast<long long>(sent) - static_cast<long long>(host->counters().events);
    }

    std::unique_ptr<host::Host> host;
    const uint32_t matches;
    std::vector<MovementStream> streams;
    size_t turn = 0;
};

// The reload a server makes (Host::begin_install): the new generation is prepared first (off
// the event path, as serve's loader thread does; not timed), then its shards go over one at
// a time on their lanes while batches keep being pushed. What a match waits is its shard's
// step; what the pushing thread sees is the longest push while the shards went over,
// beside the longest of as many pushes before the reload began (backpressure alone).
void run_staged_reload(const Settings& s, const std::vector<uint32_t>& counts) {
    const uint32_t threads = std::max(1u, std::thread::hardware_concurrency());
    if (threads == 1) {
        std::printf("  staged reload: needs 2 cores or more (one thread runs no shards)\n");
        return;
    }
    std::printf(
        "staged reload of reference (Host::begin_install, as arbiter serve reloads): shards go "
        "over one at a time while batches are pushed; per shard = each shard's save, restore "
        "and exchange (what its matches wait); push = the longest push while they went over, "
        "against the longest of as many pushes just before:\n");
    if (!s.shard_reload.empty())
        std::printf("  (--shard-reload %s: every shard %s, whatever Host::forks_shard says)\n",
                    s.shard_reload.c_str(), s.shard_reload == "fork" ? "forked" : "carried");
    for (bool one_match : {true, false}) {
        for (uint32_t players : counts) {
            const int reloads = reloads_for(s, players);
            ReloadLoad load(players, one_match, threads);
            auto& h = load.host;
            if (s.shard_reload == "fork") h->set_fork_shard_players(1);
            if (s.shard_reload == "carry")
                h->set_fork_shard_players(std::numeric_limits<size_t>::max());
            const host::PluginSettings settings = load.settings_of("reference");
            // What each match waits: the step of the shard that holds it (most of the 64
            // steps are of shards with no match, and would thin a p99 over all of them).
            std::vector<uint32_t> match_shards;
            for (const auto& stream : load.streams)
                match_shards.push_back(host::shard_of(stream.options().relay_id,
                                                      stream.options().match_id, h->shards()));
            std::vector<double> match_holds, match_cpu, match_off_cpu, forks;
            std::vector<double> steps, largest_step, longest_push, longest_before, elapsed, forked,
                catch_ups, slowed;
            uint64_t pushes_during = 0;
            int failed = 0;
            for (int i = 0; i < reloads; ++i) {
                const auto install = load.install_while_pushing(h->prepare_plugin(settings));
                const host::ReloadReport* report = &install.report;
                pushes_during += static_cast<uint64_t>(install.pushes);
                if (!report->ok || !report->staged) {
                    ++failed;
                    std::fprintf(stderr, "staged reload failed: %s\n", report->describe().c_str());
                    continue;
                }
                steps.insert(steps.end(), report->shard_pause_us.begin(),
                             report->shard_pause_us.end());
                largest_step.push_back(report->pause_us);
                forks.insert(forks.end(), report->shard_fork_us.begin(),
                             report->shard_fork_us.end());
                for (uint32_t shard : match_shards) {
                    if (shard >= report->shard_pause_us.size()) continue;
                    match_holds.push_back(report->shard_pause_us[shard]);
                    if (shard >= report->shard_cpu_us.size()) continue;
                    match_cpu.push_back(report->shard_cpu_us[shard]);
                    match_off_cpu.push_back(report->shard_pause_us[shard] -
                                            report->shard_cpu_us[shard]);
                }
                longest_push.push_back(install.longest_push_us);
                longest_before.push_back(install.longest_before_us);
                elapsed.push_back(report->elapsed_us);
                forked.push_back(report->forked_shards);
                catch_ups.push_back(report->catch_up_us);
                slowed.push_back(report->throttled_us);
            }
            for (int b = 0; b < 20; ++b)
                load.push();
            const long long lost = load.lost();
            std::printf(
                "  %2u threads %7u players in %3u match%s (%u shards): %2d reloads; per shard "
                "median %7.0f us, p99 %7.0f us, max %7.0f us; each match held (its shard's "
                "step, %zu) median %6.0f us, p99 %6.0f us (on a core: median %6.0f us, p99 "
                "%6.0f us; waiting for one: median %6.0f us, p99 %6.0f us); largest shard "
                "per reload p99 "
                "%7.0f us; longest push p99 %7.0f us (before: %7.0f us); all shards across "
                "in median %6.0f ms (%llu pushes meanwhile); forked shards median %.0f, their "
                "catch-up %6.0f ms, stream slowed %5.0f ms (medians); their fork() median %5.0f "
                "us, "
                "p99 %5.0f us; events lost %lld, failed "
                "reloads %d\n",
                threads, players, load.matches, load.matches == 1 ? "  " : "es", h->shards(),
                reloads, median(steps), percentile(steps, 0.99), percentile(steps, 1.0),
                match_holds.size(), median(match_holds), percentile(match_holds, 0.99),
                median(match_cpu), percentile(match_cpu, 0.99), median(match_off_cpu),
                percentile(match_off_cpu, 0.99), percentile(largest_step, 0.99),
                percentile(longest_push, 0.99), percentile(longest_before, 0.99),
                median(elapsed) / 1000.0, static_cast<unsigned long long>(pushes_during),
                median(forked), median(catch_ups) / 1000.0, median(slowed) / 1000.0, median(forks),
                percentile(forks, 0.99), lost, failed);
            std::fflush(stdout);
        }
    }
}

// The reload `serve` makes with one thread (Host::begin_install forks, SnapshotHandover):
// a copy of the host saves while the old instance goes on answering; the new one restores
// and catches up on a thread of its own. The pause is the fork (and any wait for room
// among the calls kept); the longest push while it went on is beside the longest of as
// many pushes just before.
void run_forked_reload(const Settings& s, const std::vector<uint32_t>& counts) {
    std::printf(
        "forked reload of reference, one thread (Host::begin_install, as arbiter serve "
        "reloads): pause = the fork and any wait for room among the calls kept; the copy's "
        "save, the restore and the catch-up run while batches are pushed:\n");
    for (uint32_t players : counts) {
        const int reloads = reloads_for(s, players);
        ReloadLoad load(players, true, 1);
        auto& h = load.host;
        const host::PluginSettings settings = load.settings_of("reference");
        std::vector<double> pauses, waits, saves, restores, catch_ups, calls, kept_mib,
            longest_push, longest_before, elapsed, slowed;
        int failed = 0;
        for (int i = 0; i < reloads; ++i) {
            const auto install = load.install_while_pushing(h->prepare_plugin(settings));
            const host::ReloadReport* report = &install.report;
            if (!report->ok || !report->forked || report->state.rfind("carried", 0) != 0) {
                ++failed;
                std::fprintf(stderr, "forked reload failed: %s\n", report->describe().c_str());
                continue;
            }
            pauses.push_back(report->pause_us);
            waits.push_back(report->waited_us);
            saves.push_back(report->save_us);
            restores.push_back(report->restore_us);
            catch_ups.push_back(report->catch_up_us);
            calls.push_back(static_cast<double>(report->calls_made_again));
            kept_mib.push_back(static_cast<double>(report->most_kept_bytes) / (1 << 20));
            longest_push.push_back(install.longest_push_us);
            longest_before.push_back(install.longest_before_us);
            elapsed.push_back(report->elapsed_us);
            slowed.push_back(report->throttled_us);
        }
        for (int b = 0; b < 20; ++b)
            load.push();
        const long long lost = load.lost();
        std::printf(
            "   1 thread  %7u players in   1 match  : %2d reloads; pause median %6.0f us, p99 "
            "%6.0f us (of it waiting for room, median %4.0f us); save %6.1f ms, restore %6.1f "
            "ms, catch-up %7.1f ms of %6.0f calls, %6.1f MiB kept at most, stream slowed for "
            "it %5.0f ms (medians); longest push p99 %6.0f us (before: %6.0f us); start to end "
            "median %6.0f ms; events lost %lld, failed reloads %d\n",
            players, reloads, median(pauses), percentile(pauses, 0.99), median(waits),
            median(saves) / 1000.0, median(restores) / 1000.0, median(catch_ups) / 1000.0,
            median(calls), median(kept_mib), median(slowed) / 1000.0,
            percentile(longest_push, 0.99), percentile(longest_before, 0.99),
            median(elapsed) / 1000.0, lost, failed);
        std::fflush(stdout);
    }
}

// Hot reload under load: batches flow, the reference plugin is reloaded between them.
// Two layouts of the same players: one match (the worst case: with threads, every player
// is in one shard), and matches of 500 players as a community plays them (spread over the
// shards, which are carried at once).
void run_reload(const Settings& s) {
    std::vector<uint32_t> counts = {1000, 10'000, 100'000};
    if (s.quick) counts.pop_back();
    if (s.reload_players > 0) counts = {s.reload_players};
    std::printf(
        "hot reload of reference under load (pause = ReloadReport::pause_us, wall: with "
        "threads, the wait for the batches pushed before, then every shard carried, as many "
        "at once as threads; largest shard = the longest of those carries):\n");
    const uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
    // --filter whole, forked or staged: that table alone.
    const auto wanted = [&](const char* table) {
        return s.filter.empty() || std::string(table).find(s.filter) != std::string::npos;
    };
    for (uint32_t threads : {1u, cores}) {
        if (!wanted("whole")) break;
        if (threads == 1 && cores == 1) continue;
        for (bool one_match : {true, false}) {
            if (!one_match && threads == 1) continue;  // one shard: the same as one match
            for (uint32_t players : counts) {
                const int reloads = reloads_for(s, players);
                ReloadLoad load(players, one_match, threads);
                auto& h = load.host;
                const uint32_t matches = load.matches;
                std::vector<double> pauses, waits, largest_shard, saves, restores;
                int failed = 0;
                for (int i = 0; i < reloads; ++i) {
                    for (int b = 0; b < 20; ++b)
                        load.push();
                    auto report = h->reload_plugin("reference");
                    if (!report.ok) {
                        ++failed;
                        std::fprintf(stderr, "reload failed: %s\n", report.error.c_str());
                    }
                    pauses.push_back(report.pause_us);
                    waits.push_back(report.waited_us);
                    saves.push_back(report.save_us);
                    restores.push_back(report.restore_us);
                    largest_shard.push_back(
                        report.shard_pause_us.empty()
                            ? report.pause_us - report.waited_us
                            : *std::max_element(report.shard_pause_us.begin(),
                                                report.shard_pause_us.end()));
                }
                for (int b = 0; b < 20; ++b)
                    load.push();
                const long long lost = load.lost();
                // The first reload after start is the slowest (the new generation's memory
                // is fresh pages); p99 of 20 is that one, the median is the steady state.
                std::printf(
                    "  %2u thread%s %7u players in %3u match%s: %2d reloads, pause median %8.0f "
                    "us, p99 %8.0f us; of it waiting for batches in flight median %6.0f us; "
                    "largest shard median %8.0f us, p99 %8.0f us; save %8.0f us, restore %8.0f us "
                    "(medians, summed over shards); events lost %lld, refused batches %llu, "
                    "failed reloads %d\n",
                    threads, threads == 1 ? " " : "s", players, matches, matches == 1 ? "  " : "es",
                    reloads, median(pauses), percentile(pauses, 0.99), median(waits),
                    median(largest_shard), percentile(largest_shard, 0.99), median(saves),
                    median(restores), lost,
                    static_cast<unsigned long long>(h->counters().refused_batches), failed);
                std::fflush(stdout);
            }
        }
    }
    if (wanted("forked")) run_forked_reload(s, counts);
    if (wanted("staged")) run_staged_reload(s, counts);
    std::printf("\n");
}

// Dispatch over worker threads ([host] threads): matches played at once, their batches
// interleaved as a relay box sends them, through every bundled plugin, with 1, 2, ... up
// to the cores. The relay's building is done beforehand (it is the relay's thread, not
// Arbiter's); the clock is wall time from the first push to the last batch taken in.
void run_threads(const Settings& s) {
    const uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
    const uint32_t matches = 8;
    const uint32_t players = s.quick ? 100 : 500;  // per match
    const uint64_t warm_ticks = kWarmTicks;
    const uint64_t measured_ticks = s.quick ? 20 : 60;
    const std::vector<PluginSpec> plugins = every_bundled_plugin();
    std::string names;
    for (const auto& plugin : plugins)
        names += (names.empty() ? "" : " + ") + plugin.name;
    std::printf(
        "threads: %u matches x %u players at once, batches of %zu, every bundled plugin "
        "(%s); wall time of %llu ticks after %llu to warm up:\n",
        matches, players, kBatch, names.c_str(), static_cast<unsigned long long>(measured_ticks),
        static_cast<unsigned long long>(warm_ticks));
    // The batches, built once: warm-up, then the measured stretch, round robin by match.
    std::vector<std::vector<uint8_t>> warm_batches, measured;
    uint64_t measured_events = 0;
    {
        std::vector<MovementStream> streams;
        for (uint32_t m = 0; m < matches; ++m)
            streams.emplace_back(
                StreamOptions{.players = players, .batch_events = kBatch, .match_id = m + 1});
        const uint64_t per_match_warm = warm_ticks * players;
        const uint64_t per_match_all = (warm_ticks + measured_ticks) * players;
        for (bool more = true; more;) {
            more = false;
            for (auto& stream : streams) {
                if (stream.events() >= per_match_all) continue;
                more = true;
                const bool warming = stream.events() < per_match_warm;
                auto batch = stream.next();
                if (warming) {
                    warm_batches.push_back(std::move(batch));
                } else {
                    measured_events += kBatch;
                    measured.push_back(std::move(batch));
                }
            }
        }
    }
    double one_thread_rate = 0;
    for (uint32_t threads = 1; threads <= cores; ++threads) {
        std::vector<double> rates, cpu_per_event;
        for (int r = 0; r < s.reps; ++r) {
            auto h = make_host(plugins, threads);
            for (const auto& batch : warm_batches)
                h->push(batch);
            h->flush();
            const double wall_start = wall_seconds();
            const double cpu_start = cpu_seconds();
            for (const auto& batch : measured)
                if (auto refused = h->push(batch)) {
                    std::fprintf(stderr, "batch refused: %s\n", refused->c_str());
                    std::exit(1);
                }
            h->flush();
            const double wall = wall_seconds() - wall_start;
            rates.push_back(static_cast<double>(measured_events) / wall);
            cpu_per_event.push_back((cpu_seconds() - cpu_start) * 1e9 /
                                    static_cast<double>(measured_events));
        }
        const double rate = median(rates);
        if (threads == 1) one_thread_rate = rate;
        const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
        std::printf(
            "  %2u thread%s %6.2f M events/s (spread %.2f-%.2f)  speed-up %.2fx  "
            "CPU %6.0f ns/event%s\n",
            threads, threads == 1 ? " " : "s", rate / 1e6, *lo / 1e6, *hi / 1e6,
            rate / one_thread_rate, median(cpu_per_event),
            threads == 1   ? "   (goal: >= 2 M per core)"
            : threads == 2 ? "   (goal: >= 1.8x)"
                           : "");
        std::fflush(stdout);
    }
    std::printf("\n");
}

void run_serve(const Settings& s) {
    run_serve_section(s.quick);
}

void run_soak(const Settings& s) {
    run_serve_soak(s.soak_matches);
}

// A whole number from `min` to `max` given to `flag`, or nullopt after saying what is wrong
// with it (a typo must not run an hour-long table of some other size).
std::optional<uint64_t> count_argument(const std::string& flag, const char* text, uint64_t min,
                                       uint64_t max) {
    uint64_t value = 0;
    const char* end = text + std::strlen(text);
    const auto [stop, error] = std::from_chars(text, end, value);
    if (error != std::errc() || stop != end || value < min || value > max) {
        std::fprintf(stderr, "arbiter-bench: %s takes a whole number from %llu to %llu, not '%s'\n",
                     flag.c_str(), static_cast<unsigned long long>(min),
                     static_cast<unsigned long long>(max), text);
        return std::nullopt;
    }
    return value;
}

int usage() {
    std::fprintf(
        stderr,
        "usage: arbiter-bench [--reps N] [--seconds S] [--quick] [--skip SECTION]... "
        "[--only SECTION]... [--filter TEXT] [--soak-matches N] [--store-postgres CONNINFO] "
        "[--reload-players N] [--reloads N] [--shard-reload fork|carry]\n"
        "sections: core batch players plugins isolated memory reload store serve threads, and soak "
        "(only when named with --only); --filter whole, forked or staged runs that table of "
        "reload alone; --shard-reload makes the staged reload fork every shard or carry every "
        "shard (default: the host's rule, Host::forks_shard)\n");
    return 1;
}

}  // namespace
}  // namespace arbiter::bench

int main(int argc, char** argv) {
    using namespace arbiter::bench;
    Settings s;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--reps" && i + 1 < argc) {
            s.reps = std::max(1, std::atoi(argv[++i]));
        } else if (arg == "--seconds" && i + 1 < argc) {
            s.seconds = std::atof(argv[++i]);
        } else if (arg == "--quick") {
            s.quick = true;
            s.seconds = 0.1;
        } else if (arg == "--filter" && i + 1 < argc) {
            s.filter = argv[++i];
        } else if (arg == "--skip" && i + 1 < argc) {
            s.skip.insert(argv[++i]);
        } else if (arg == "--only" && i + 1 < argc) {
            s.only.insert(argv[++i]);
        } else if (arg == "--store-postgres" && i + 1 < argc) {
            s.store_postgres = argv[++i];
        } else if (arg == "--reload-players" && i + 1 < argc) {
            const auto players = count_argument(arg, argv[++i], 500, 1'000'000);
            if (!players) return usage();
            s.reload_players = static_cast<uint32_t>(*players);
        } else if (arg == "--reloads" && i + 1 < argc) {
            const auto reloads = count_argument(arg, argv[++i], 1, 10'000);
            if (!reloads) return usage();
            s.reloads = static_cast<int>(*reloads);
        } else if (arg == "--shard-reload" && i + 1 < argc) {
            s.shard_reload = argv[++i];
            if (s.shard_reload != "fork" && s.shard_reload != "carry") {
                std::fprintf(stderr,
                             "arbiter-bench: --shard-reload takes fork or carry, not '%s'\n",
                             s.shard_reload.c_str());
                return usage();
            }
        } else if (arg == "--soak-matches" && i + 1 < argc) {
            s.soak_matches = std::max<uint64_t>(8, std::strtoull(argv[++i], nullptr, 10));
        } else {
            return usage();
        }
    }
    try {
        std::printf("arbiter-bench: %d repetitions of %.2f s CPU each; median, spread min-max\n\n",
                    s.reps, s.seconds);
        print_header();
        const std::vector<std::pair<std::string, void (*)(const Settings&)>> sections = {
            {"core", run_core},       {"batch", run_batch},       {"players", run_players},
            {"plugins", run_plugins}, {"isolated", run_isolated}, {"memory", run_memory},
            {"reload", run_reload},   {"store", run_store},       {"serve", run_serve},
            {"threads", run_threads}, {"soak", run_soak}};
        // The soak is long and measures memory, not speed: it runs only when named.
        for (const auto& [name, run] : sections)
            if (s.only.empty() ? !s.skip.count(name) && name != "soak" : s.only.count(name) > 0)
                run(s);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "arbiter-bench: %s\n", error.what());
        return 2;
    }
    return 0;
}
