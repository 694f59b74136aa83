// Follows the mod's segment files (<world>/arbiter/events/NNNNNNNNNN.jsonl) as they grow:
// hands out whole lines with where each ends, waits at a line the mod has not finished,
// and moves to the next segment once the mod has begun it (the mod closes a segment before
// it begins the next, so one whose successor exists is whole).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace arbiter::luanti {

// A place in the segments: the segment's number and the bytes of it already taken.
struct SegmentPlace {
    uint64_t segment = 0;  // 0: before the first segment there is
    uint64_t offset = 0;
    bool operator==(const SegmentPlace&) const = default;
};

struct FollowedLine {
    std::string text;        // without its newline
    SegmentPlace at;         // where the line begins
    SegmentPlace after;      // where the next one begins
    std::string problem;     // set when the line could not be read whole (too long, cut off)
};

class SegmentFollower {
  public:
    SegmentFollower(std::filesystem::path folder, SegmentPlace from);

    // The next whole line, or nothing while the mod has written no further.
    std::optional<FollowedLine> next();
    // Where the next line will be read from.
    SegmentPlace place() const { return place_; }
    // The segments before `place` (wholly taken): what may be deleted once the place is saved.
    std::vector<std::filesystem::path> segments_before(const SegmentPlace& place) const;
    std::filesystem::path path_of(uint64_t segment) const;

  private:
    // The lowest segment at or after `segment` on disk, if any.
    std::optional<uint64_t> first_segment_from(uint64_t segment) const;
    bool open_current();

    std::filesystem::path folder_;
    SegmentPlace place_;
    std::ifstream file_;
    bool file_open_ = false;
    std::string carried_;  // bytes read: lines handed out, then the rest, from place_
    size_t taken_ = 0;     // the bytes of carried_ already handed out as lines
    std::vector<char> buffer_;  // one read's bytes (64 KiB, made at the first read)
    bool skipping_ = false;  // inside a line too long to keep: dropped up to its newline
    SegmentPlace skip_start_;
};

}  // namespace arbiter::luanti
