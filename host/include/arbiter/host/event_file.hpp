// The Arbiter event log (.arbev): recorded matches, one EventBatch after another.
//
// File header (16 bytes): "ARBEVLOG", format version u16 (1), flags u16 (0),
// reserved u32 (0). Then records, each:
//   magic "ARBR" | payload length u32 | CRC-32 of the payload u32 |
//   CRC-32 of the 12 bytes before it u32 | payload (one EventBatch FlatBuffer)
// All integers little-endian. The header checksum lets a reader trust a length before
// it reads the payload, and the magic lets it find the next record after damage: a
// damaged or truncated record is reported with its offset, and the records before and
// after it are still read. docs/event-file-format.md describes the format in full.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arbiter/host/range_crc.hpp"

namespace arbiter::host {

inline constexpr char kEventFileMagic[8] = {'A', 'R', 'B', 'E', 'V', 'L', 'O', 'G'};
inline constexpr uint16_t kEventFileVersion = 1;
inline constexpr size_t kEventFileHeaderSize = 16;
inline constexpr size_t kRecordHeaderSize = 16;
inline constexpr uint32_t kMaxRecordPayload = 64u * 1024u * 1024u;

uint32_t crc32(std::span<const uint8_t> bytes);

// The 16-byte header at the start of a file (and of each direction of a serve stream).
std::vector<uint8_t> encode_file_header();
// The 16-byte header of one record for a payload; `magic` is "ARBR" in a file, and names
// the frame's kind in a serve stream (arbiter/host/wire.hpp).
std::vector<uint8_t> encode_record_header(std::span<const uint8_t> payload,
                                          std::string_view magic = "ARBR");
// A little-endian u32, as every integer of the format is stored.
uint32_t read_u32_le(const uint8_t* bytes);

class EventFileWriter {
  public:
    // Creates (truncates) the file and writes its header; throws std::runtime_error.
    explicit EventFileWriter(const std::filesystem::path& path);
    void write(std::span<const uint8_t> batch);
    // Flushes and closes; throws if anything failed to reach the file.
    void close();
    ~EventFileWriter();

  private:
    std::filesystem::path path_;
    std::ofstream out_;
};

// Writes a whole file in one go.
void write_event_file(const std::filesystem::path& path,
                      const std::vector<std::vector<uint8_t>>& batches);

// One step of reading: either a record's payload, or a stretch of damage.
struct EventFileItem {
    enum class Kind { record, damage };
    Kind kind = Kind::record;
    uint64_t offset = 0;               // where the record or the damage begins
    std::span<const uint8_t> payload;  // record: the batch bytes (valid while the reader lives)
    uint64_t skipped = 0;              // damage: how many bytes were passed over
    std::string problem;               // damage: what was wrong
};

// A damage report as a lost stretch's cause: "NAME: bytes 4096 to 8191 damaged (WHY)".
std::string damage_text(const std::string& file_name, const EventFileItem& damage);

class EventFileReader {
  public:
    // Maps the file; throws std::runtime_error naming the file when it cannot be read
    // or does not begin with the event-log header.
    explicit EventFileReader(const std::filesystem::path& path,
                             uint32_t max_payload = kMaxRecordPayload);
    // Reads from memory instead (the bytes must outlive the reader).
    EventFileReader(std::span<const uint8_t> bytes, std::string name,
                    uint32_t max_payload = kMaxRecordPayload);
    ~EventFileReader();
    EventFileReader(const EventFileReader&) = delete;
    EventFileReader& operator=(const EventFileReader&) = delete;

    // The next record or damage report; nullopt at the end of the file.
    std::optional<EventFileItem> next();
    const std::string& name() const { return name_; }
    uint64_t size() const { return bytes_.size(); }
    // Bytes run through a checksum so far. Damage recovery keeps this within a small
    // multiple of the file's size however the damage is made; the tests hold it to that.
    uint64_t bytes_checksummed() const { return checksummed_ + payload_crc_.bytes_hashed(); }

  private:
    void check_header();
    // The offset of the next whole, intact record at or after `from`, or the end. Each
    // byte is looked at a bounded number of times however the damage is made.
    uint64_t resync(uint64_t from);
    bool header_valid_at(uint64_t offset) const;
    bool record_valid_at(uint64_t offset);

    std::string name_;
    std::span<const uint8_t> bytes_;
    void* mapping_ = nullptr;
    size_t mapping_size_ = 0;
    uint64_t position_ = kEventFileHeaderSize;
    uint32_t max_payload_;
    RangeCrc payload_crc_;
    uint64_t checksummed_ = 0;  // for the payloads of candidate records while resyncing
};

}  // namespace arbiter::host
