#include "segment_follower.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lines.hpp"

namespace arbiter::luanti {

namespace {

// The number of a segment's file name (ten digits and ".jsonl"), or nothing.
std::optional<uint64_t> segment_number(const std::filesystem::path& path) {
    const std::string name = path.filename().string();
    if (name.size() != 16 || name.substr(10) != ".jsonl") return std::nullopt;
    uint64_t number = 0;
    for (size_t i = 0; i < 10; ++i) {
        if (name[i] < '0' || name[i] > '9') return std::nullopt;
        number = number * 10 + static_cast<uint64_t>(name[i] - '0');
    }
    return number;
}

}  // namespace

SegmentFollower::SegmentFollower(std::filesystem::path folder, SegmentPlace from)
    : folder_(std::move(folder)), place_(from) {}

std::filesystem::path SegmentFollower::path_of(uint64_t segment) const {
    return folder_ / fmt::format("{:010d}.jsonl", segment);
}

std::optional<uint64_t> SegmentFollower::first_segment_from(uint64_t segment) const {
    std::optional<uint64_t> first;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(folder_, error)) {
        const auto number = segment_number(entry.path());
        if (number && *number >= segment && (!first || *number < *first)) first = number;
    }
    return first;
}

std::vector<std::filesystem::path> SegmentFollower::segments_before(
    const SegmentPlace& place) const {
    std::vector<std::filesystem::path> before;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(folder_, error)) {
        const auto number = segment_number(entry.path());
        if (number && *number < place.segment) before.push_back(entry.path());
    }
    std::sort(before.begin(), before.end());
    return before;
}

bool SegmentFollower::open_current() {
    const auto first = first_segment_from(std::max<uint64_t>(place_.segment, 1));
    if (!first) return false;
    // A segment that is gone (or never was) is passed over: its successor is where the
    // lines go on.
    if (*first != place_.segment) place_ = {*first, 0};
    file_ = std::ifstream(path_of(place_.segment), std::ios::binary);
    if (!file_) return false;
    file_.seekg(static_cast<std::streamoff>(place_.offset));
    carried_.clear();
    taken_ = 0;
    skipping_ = false;
    file_open_ = true;
    return true;
}

std::optional<FollowedLine> SegmentFollower::next() {
    if (buffer_.empty()) buffer_.resize(64 * 1024);
    bool looked_for_successor = false;
    for (;;) {
        if (!file_open_ && !open_current()) return std::nullopt;
        // The lines already handed out stay in carried_ until the next read, so that taking a
        // line moves no bytes; what is left is moved down once a read.
        if (const size_t newline = carried_.find('\n', taken_); newline != std::string::npos) {
            const size_t length = newline - taken_;
            FollowedLine line;
            line.at = skipping_ ? skip_start_ : place_;
            place_.offset += length + 1;
            line.after = place_;
            if (skipping_) {
                line.problem = fmt::format("the line is longer than {} bytes", kMaxLineBytes);
                skipping_ = false;
            } else {
                line.text = carried_.substr(taken_, length);
            }
            taken_ = newline + 1;
            return line;
        }
        carried_.erase(0, taken_);
        taken_ = 0;
        // Only a line shorter than the bound is held whole; the rest of a longer one is
        // dropped as it comes, so a hostile line costs no more memory than a good one.
        if (carried_.size() > kMaxLineBytes) {
            if (!skipping_) skip_start_ = place_;
            skipping_ = true;
            place_.offset += carried_.size();
            carried_.clear();
        }
        file_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
        const auto got = static_cast<size_t>(file_.gcount());
        if (got > 0) {
            carried_.append(buffer_.data(), got);
            continue;
        }
        file_.clear();  // at the end: the mod may write more
        if (looked_for_successor) return std::nullopt;
        const auto successor = first_segment_from(place_.segment + 1);
        if (!successor) return std::nullopt;
        // The mod begins a segment only after it closed the one before, so this one is
        // whole once a read after seeing its successor finds nothing more.
        looked_for_successor = true;
        file_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
        if (const auto more = static_cast<size_t>(file_.gcount()); more > 0) {
            carried_.append(buffer_.data(), more);
            file_.clear();
            looked_for_successor = false;
            continue;
        }
        file_.clear();
        std::optional<FollowedLine> cut;
        if (!carried_.empty() || skipping_) {
            // A server that died while writing leaves a line without its end.
            cut.emplace();
            cut->at = skipping_ ? skip_start_ : place_;
            cut->problem = "the segment ends inside a line (the server stopped while writing it)";
        }
        place_ = {*successor, 0};
        file_open_ = false;
        carried_.clear();
        skipping_ = false;
        if (cut) {
            cut->after = place_;
            return cut;
        }
        looked_for_successor = false;
    }
}

}  // namespace arbiter::luanti
