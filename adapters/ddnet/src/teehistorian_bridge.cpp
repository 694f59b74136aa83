#include "teehistorian_bridge.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::ddnet {

namespace {

using nlohmann::json;

constexpr int kStateVersion = 1;

bool is_teehistorian(const std::filesystem::directory_entry& entry) {
    std::error_code error;
    return entry.is_regular_file(error) && entry.path().extension() == ".teehistorian";
}

}  // namespace

std::filesystem::path DdnetBridge::state_path(const std::filesystem::path& source) {
    std::error_code error;
    if (std::filesystem::is_directory(source, error)) return source / ".arbiter-ddnet-bridge.json";
    return source.string() + ".arbiter-ddnet-bridge.json";
}

std::string DdnetBridge::default_relay(const std::filesystem::path& source) {
    // The server's storage folder holds teehistorian/: its name says which server it is.
    std::filesystem::path folder = std::filesystem::absolute(source).lexically_normal();
    std::error_code error;
    if (!std::filesystem::is_directory(folder, error)) folder = folder.parent_path();
    if (folder.filename().empty()) folder = folder.parent_path();
    if (folder.filename() == "teehistorian") folder = folder.parent_path();
    std::string name = folder.filename().string();
    if (name.empty()) name = "server";
    // Relay names are at most 64 bytes of UTF-8 (the serve protocol's hello).
    return host::to_valid_utf8("ddnet-" + name, 64);
}

DdnetBridge::DdnetBridge(DdnetBridgeOptions options)
    : options_(std::move(options)),
      builder_(options_.connection.relay.empty() ? default_relay(options_.source) : options_.connection.relay) {
    if (options_.state.empty()) options_.state = state_path(options_.source);
}

DdnetBridge::~DdnetBridge() = default;

void DdnetBridge::report(const std::string& what) const {
    if (!options_.connection.quiet) std::fprintf(stderr, "arbiter ddnet-bridge: %s\n", what.c_str());
}

bool DdnetBridge::follows_folder() const {
    std::error_code error;
    return std::filesystem::is_directory(options_.source, error);
}

std::optional<std::filesystem::path> DdnetBridge::newest() const {
    if (!follows_folder()) {
        std::error_code error;
        if (std::filesystem::exists(options_.source, error)) return options_.source;
        return std::nullopt;
    }
    std::optional<std::filesystem::path> best;
    std::filesystem::file_time_type best_time{};
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(options_.source, error)) {
        if (!is_teehistorian(entry)) continue;
        const auto time = entry.last_write_time(error);
        if (error) continue;
        // Ties (two files written within the clock's step) go to the later name, so that
        // every reading picks the same one.
        if (!best || time > best_time || (time == best_time && entry.path() > *best)) {
            best = entry.path();
            best_time = time;
        }
    }
    return best;
}

DdnetBridge::Place DdnetBridge::fresh(const std::string& file) {
    Place place;
    place.file = file;
    return place;
}

void DdnetBridge::open(const Place& place) {
    const std::filesystem::path path =
        follows_folder() ? options_.source / place.file : options_.source;
    file_ = std::make_unique<ThFileReader>(path, place.offset, place.reader);
    builder_.restore(place.match);
    boundary_ = place;
    listed_at_.reset();
    followed_.insert(place.file);
    counts_.files = followed_.size();
    abandoned_ = false;
    told_bad_header_ = false;
}

void DdnetBridge::restore() {
    file_.reset();
    builder_.restore(ThBuilderState{});
    boundary_ = saved_ = Place{};
    auto saved = relay::load_json_state(options_.state);
    if (saved) {
        try {
            if (saved->at("version").get<int>() != kStateVersion)
                throw std::runtime_error("written by another version of the bridge");
            Place place;
            place.file = saved->at("file").get<std::string>();
            place.offset = saved->at("offset").get<uint64_t>();
            place.reader = th_state_from_json(saved->at("reader"));
            place.match = th_builder_from_json(saved->at("match"));
            if (place.file.find('/') != std::string::npos)
                throw std::runtime_error("the file's name has a '/'");
            saved_ = place;
        } catch (const std::exception& e) {
            throw std::runtime_error(fmt::format("{}: {}", options_.state.string(), e.what()));
        }
    }
    if (saved_.file.empty()) return;  // the newest file, once there is one (next())
    try {
        open(saved_);
    } catch (const std::exception& e) {
        // The file was removed (an operator cleaned up): the newest one is followed instead.
        report(fmt::format("{}; following the newest file instead", e.what()));
        file_.reset();
        saved_ = Place{};
        builder_.restore(ThBuilderState{});
    }
}

void DdnetBridge::save() {
    if (boundary_.file.empty() || boundary_ == saved_) return;
    const json state{{"version", kStateVersion},
                     {"file", boundary_.file},
                     {"offset", boundary_.offset},
                     {"reader", th_state_to_json(boundary_.reader)},
                     {"match", th_builder_to_json(boundary_.match)}};
    std::string problem;
    if (!relay::save_json_atomically(options_.state, state, problem)) {
        report(problem + ": the place is not saved");
        return;
    }
    saved_ = boundary_;
    saved_at_ = std::chrono::steady_clock::now();
}

void DdnetBridge::idle() {
    if (std::chrono::steady_clock::now() - saved_at_ >= options_.save_every) save();
}

void DdnetBridge::take_problems() {
    for (const auto& problem : file_->reader().take_problems()) {
        ++counts_.damaged;
        report(fmt::format("{}: offset {}: {}", file_->path().filename().string(), problem.offset,
                           problem.what));
    }
}

bool DdnetBridge::next(std::vector<std::vector<uint8_t>>& batches) {
    if (!file_) {
        const auto first = newest();
        if (!first) return false;
        try {
            open(fresh(first->filename().string()));
        } catch (const std::exception& e) {
            report(e.what());
            return false;
        }
    }
    ThRecord record;
    const ThStatus status = file_->next(record, abandoned_);
    take_problems();
    const ThState& reader = file_->reader().state();
    // The match begins with the header (its MatchStart goes with the first record).
    if (reader.header_read && !builder_.open() && !reader.finished && builder_.state().tick < 0)
        builder_.start(file_->reader().header(), batches);
    if (status == ThStatus::record) {
        ++counts_.records;
        if (builder_.ends_tick(record)) {
            builder_.end_tick(batches);
            boundary_ = Place{.file = boundary_.file,
                              .offset = file_->reader().tick_start_offset(),
                              .reader = file_->reader().tick_start_state(),
                              .match = builder_.state()};
        }
        builder_.take(record, batches);
        if (record.kind == ThKind::finish) {
            // All of the file is sent with this: the place after it is a whole one.
            boundary_ = Place{.file = boundary_.file,
                              .offset = file_->reader().offset(),
                              .reader = reader,
                              .match = builder_.state()};
        }
        return true;
    }
    if (status == ThStatus::bad_header && !told_bad_header_) {
        told_bad_header_ = true;
        ++counts_.damaged;
        report(fmt::format("{}: not a teehistorian: {}", file_->path().string(),
                           file_->reader().header_problem()));
    }
    // Nothing more in this file for now. The server writes one file at a time: once a
    // newer one is there, this one is whole.
    // The folder is looked at once a second at most: a server's storage may hold thousands
    // of old files, and a new one is begun only at a map change or a start.
    const auto now = std::chrono::steady_clock::now();
    if (follows_folder() && (!listed_at_ || now - *listed_at_ >= std::chrono::seconds(1))) {
        listed_ = newest();
        listed_at_ = now;
    }
    const auto current = follows_folder() ? listed_ : std::nullopt;
    if (!current || current->filename() == file_->path().filename()) return !batches.empty();
    if (status == ThStatus::need_more && !abandoned_) {
        // Read the rest as a whole file: a record cut off at its end is reported now.
        abandoned_ = true;
        return true;
    }
    // On to the newer file; a match the server never finished ends here.
    builder_.end("the server began a new teehistorian file", batches);
    try {
        open(fresh(current->filename().string()));
        report(fmt::format("following {}", current->filename().string()));
    } catch (const std::exception& e) {
        report(e.what());
        file_.reset();
    }
    return true;
}

void DdnetBridge::sent() {
    // Every batch made so far is sent: the last tick start is a place to go on from.
    if (std::chrono::steady_clock::now() - saved_at_ >= options_.save_every) save();
}

int DdnetBridge::run(const std::atomic<bool>& stop) {
    relay::Connection connection = options_.connection;
    connection.relay = builder_.relay_id();
    feed_ = std::make_unique<relay::RelayFeed>(relay::FeedOptions{
        .command = "ddnet-bridge",
        .connection = std::move(connection),
        .poll = options_.poll,
    });
    const int status = feed_->run(*this, stop);
    counts_.batches = feed_->counts().batches;
    counts_.already_delivered = feed_->counts().already_delivered;
    counts_.reconnects = feed_->counts().reconnects;
    if (status != 0) return status;
    return counts_.damaged > 0 ? 3 : 0;
}

}  // namespace arbiter::ddnet
