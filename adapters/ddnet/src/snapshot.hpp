// Snapshots and snapshot deltas of the Teeworlds/DDNet 0.6 protocol (DDNet's
// src/engine/shared/snapshot.cpp). A snapshot is a list of items, each a type, an id
// and 32-bit integers; a delta holds the keys of the items gone since the snapshot it
// is based on, and for each new or changed item its integers as differences from the
// old ones. Every size is checked against the format's limits before anything is
// allocated: at most 1,024 items and 64 KiB per snapshot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace arbiter::ddnet {

constexpr size_t kMaxSnapshotItems = 1024;
constexpr size_t kMaxSnapshotBytes = 64 * 1024;
constexpr int32_t kMaxItemType = 0x7fff;
constexpr int32_t kMaxItemId = 0xffff;

struct SnapItem {
    int32_t type = 0;
    int32_t id = 0;
    std::vector<int32_t> data;
    int32_t key() const {
        return static_cast<int32_t>((static_cast<uint32_t>(type) << 16) |
                                    static_cast<uint32_t>(id));
    }
};

class Snapshot {
  public:
    const std::vector<SnapItem>& items() const { return items_; }
    const SnapItem* find(int32_t type, int32_t id) const;
    const SnapItem* find_key(int32_t key) const;
    // Adds an item; false when its key is already there or a limit would be passed.
    bool add(SnapItem item);
    size_t bytes() const;  // as the format counts: header, offsets, items

  private:
    std::vector<SnapItem> items_;
    std::unordered_map<int32_t, size_t> index_;
    size_t data_bytes_ = 0;
};

// The integers of a full snapshot chunk: data size in bytes, item count, the item
// offsets, then each item's key and data. Returns the snapshot or what is wrong.
std::variant<Snapshot, std::string> parse_snapshot(std::span<const int32_t> ints);
// The integers of a snapshot as the format writes them (for the tests' demo builder).
std::vector<int32_t> serialize_snapshot(const Snapshot& snapshot);

// The item sizes (in integers) of the 0.6 protocol's fixed-size types, which a delta
// leaves out; 0 for a type whose delta entries carry their size.
int32_t static_item_size(int32_t type);

// `from` with the delta applied, or what is wrong with the delta.
std::variant<Snapshot, std::string> apply_delta(const Snapshot& from,
                                                std::span<const int32_t> delta);
// The delta from `from` to `to` (for the tests' demo builder).
std::vector<int32_t> make_delta(const Snapshot& from, const Snapshot& to);

}  // namespace arbiter::ddnet
