#include "arbiter/host/event_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <zlib.h>

#include "arbiter/host/untrusted_text.hpp"

namespace arbiter::host {

namespace {
constexpr uint8_t kRecordMagic[4] = {'A', 'R', 'B', 'R'};

void put_u32(uint8_t* out, uint32_t value) {
    for (int i = 0; i < 4; ++i)
        out[i] = static_cast<uint8_t>(value >> (8 * i));
}
std::string system_error(const std::string& what, const std::filesystem::path& path) {
    return path.string() + ": " + what + ": " + std::strerror(errno);
}
}  // namespace

uint32_t crc32(std::span<const uint8_t> bytes) {
    uLong crc = ::crc32(0L, Z_NULL, 0);
    // zlib takes lengths as uInt: a long span goes in pieces.
    while (!bytes.empty()) {
        const size_t piece = std::min<size_t>(bytes.size(), size_t{1} << 30);
        crc = ::crc32(crc, bytes.data(), static_cast<uInt>(piece));
        bytes = bytes.subspan(piece);
    }
    return static_cast<uint32_t>(crc);
}

uint32_t read_u32_le(const uint8_t* in) {
    return uint32_t(in[0]) | uint32_t(in[1]) << 8 | uint32_t(in[2]) << 16 | uint32_t(in[3]) << 24;
}

std::vector<uint8_t> encode_file_header() {
    std::vector<uint8_t> header(kEventFileHeaderSize, 0);
    std::memcpy(header.data(), kEventFileMagic, sizeof kEventFileMagic);
    header[8] = static_cast<uint8_t>(kEventFileVersion);
    header[9] = static_cast<uint8_t>(kEventFileVersion >> 8);
    return header;
}

std::vector<uint8_t> encode_record_header(std::span<const uint8_t> payload,
                                          std::string_view magic) {
    if (payload.size() > kMaxRecordPayload)
        throw std::invalid_argument("a record payload is at most " +
                                    std::to_string(kMaxRecordPayload) + " bytes");
    if (magic.size() != 4) throw std::invalid_argument("a record magic is 4 bytes");
    std::vector<uint8_t> header(kRecordHeaderSize);
    std::memcpy(header.data(), magic.data(), 4);
    put_u32(header.data() + 4, static_cast<uint32_t>(payload.size()));
    put_u32(header.data() + 8, crc32(payload));
    put_u32(header.data() + 12, crc32({header.data(), 12}));
    return header;
}

EventFileWriter::EventFileWriter(const std::filesystem::path& path) : path_(path) {
    out_.open(path, std::ios::binary | std::ios::trunc);
    if (!out_) throw std::runtime_error(system_error("cannot create the event file", path));
    const auto header = encode_file_header();
    out_.write(reinterpret_cast<const char*>(header.data()),
               static_cast<std::streamsize>(header.size()));
}

void EventFileWriter::write(std::span<const uint8_t> batch) {
    auto header = encode_record_header(batch);
    out_.write(reinterpret_cast<const char*>(header.data()),
               static_cast<std::streamsize>(header.size()));
    out_.write(reinterpret_cast<const char*>(batch.data()),
               static_cast<std::streamsize>(batch.size()));
    if (!out_) throw std::runtime_error(system_error("cannot write the event file", path_));
}

void EventFileWriter::close() {
    if (!out_.is_open()) return;
    out_.flush();
    bool good = static_cast<bool>(out_);
    out_.close();
    if (!good) throw std::runtime_error(system_error("cannot write the event file", path_));
}

EventFileWriter::~EventFileWriter() {
    if (out_.is_open()) out_.close();
}

void write_event_file(const std::filesystem::path& path,
                      const std::vector<std::vector<uint8_t>>& batches) {
    EventFileWriter writer(path);
    for (const auto& batch : batches)
        writer.write(batch);
    writer.close();
}

EventFileReader::EventFileReader(const std::filesystem::path& path, uint32_t max_payload)
    : name_(path.string()), max_payload_(max_payload) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error(system_error("cannot open the event file", path));
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        ::close(fd);
        throw std::runtime_error(system_error("cannot read the event file", path));
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        throw std::runtime_error(path.string() + ": not a regular file");
    }
    mapping_size_ = static_cast<size_t>(info.st_size);
    if (mapping_size_ > 0) {
        mapping_ = ::mmap(nullptr, mapping_size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (mapping_ == MAP_FAILED) {
            mapping_ = nullptr;
            ::close(fd);
            throw std::runtime_error(system_error("cannot map the event file", path));
        }
        ::madvise(mapping_, mapping_size_, MADV_SEQUENTIAL);
    }
    ::close(fd);
    bytes_ = {static_cast<const uint8_t*>(mapping_), mapping_size_};
    check_header();
}

EventFileReader::EventFileReader(std::span<const uint8_t> bytes, std::string name,
                                 uint32_t max_payload)
    : name_(std::move(name)), bytes_(bytes), max_payload_(max_payload) {
    check_header();
}

EventFileReader::~EventFileReader() {
    if (mapping_) ::munmap(mapping_, mapping_size_);
}

void EventFileReader::check_header() {
    payload_crc_.attach(bytes_);
    auto fail = [&](const std::string& what) {
        if (mapping_) ::munmap(mapping_, mapping_size_);
        mapping_ = nullptr;
        throw std::runtime_error(name_ + ": " + what);
    };
    if (bytes_.size() < kEventFileHeaderSize)
        fail("not an Arbiter event log: " + std::to_string(bytes_.size()) +
             " bytes, shorter than the 16-byte header");
    if (std::memcmp(bytes_.data(), kEventFileMagic, 8) != 0)
        fail("not an Arbiter event log: it does not begin with \"ARBEVLOG\"");
    uint16_t version = static_cast<uint16_t>(bytes_[8] | bytes_[9] << 8);
    if (version != kEventFileVersion)
        fail("event log format version " + std::to_string(version) + ", this host reads version " +
             std::to_string(kEventFileVersion));
}

bool EventFileReader::header_valid_at(uint64_t offset) const {
    if (offset + kRecordHeaderSize > bytes_.size()) return false;
    const uint8_t* header = bytes_.data() + offset;
    return std::memcmp(header, kRecordMagic, 4) == 0 &&
           read_u32_le(header + 12) == crc32({header, 12});
}

bool EventFileReader::record_valid_at(uint64_t offset) {
    if (!header_valid_at(offset)) return false;
    const uint8_t* header = bytes_.data() + offset;
    const uint32_t length = read_u32_le(header + 4);
    const uint64_t payload = offset + kRecordHeaderSize;
    return length <= max_payload_ && payload + length <= bytes_.size() &&
           payload_crc_.of(payload, payload + length) == read_u32_le(header + 8);
}

uint64_t EventFileReader::resync(uint64_t from) {
    for (uint64_t offset = from; offset + kRecordHeaderSize <= bytes_.size(); ++offset) {
        const void* found = std::memchr(bytes_.data() + offset, 'A', bytes_.size() - offset);
        if (!found) break;
        offset = static_cast<uint64_t>(static_cast<const uint8_t*>(found) - bytes_.data());
        if (record_valid_at(offset)) return offset;
    }
    return bytes_.size();
}

std::optional<EventFileItem> EventFileReader::next() {
    if (position_ >= bytes_.size()) return std::nullopt;
    const uint64_t offset = position_;
    auto damage = [&](std::string problem) {
        uint64_t next = resync(offset + 1);
        position_ = next;
        EventFileItem item;
        item.kind = EventFileItem::Kind::damage;
        item.offset = offset;
        item.skipped = next - offset;
        item.problem = std::move(problem);
        return item;
    };

    if (offset + kRecordHeaderSize > bytes_.size())
        return damage("truncated record header: " + std::to_string(bytes_.size() - offset) +
                      " bytes left, a header has 16");
    const uint8_t* header = bytes_.data() + offset;
    if (std::memcmp(header, kRecordMagic, 4) != 0) return damage("no record magic \"ARBR\"");
    if (read_u32_le(header + 12) != crc32({header, 12}))
        return damage("record header checksum mismatch");
    uint32_t length = read_u32_le(header + 4);
    if (length > max_payload_)
        return damage("record of " + std::to_string(length) + " bytes exceeds the cap of " +
                      std::to_string(max_payload_));
    if (offset + kRecordHeaderSize + length > bytes_.size())
        return damage("truncated record: header says " + std::to_string(length) +
                      " bytes, the file has " +
                      std::to_string(bytes_.size() - offset - kRecordHeaderSize) + " left");
    std::span<const uint8_t> payload(header + kRecordHeaderSize, length);
    checksummed_ += length;
    if (crc32(payload) != read_u32_le(header + 8))
        return damage("record payload checksum mismatch");

    position_ = offset + kRecordHeaderSize + length;
    payload_crc_.forget_before(position_);
    EventFileItem item;
    item.kind = EventFileItem::Kind::record;
    item.offset = offset;
    item.payload = payload;
    return item;
}

std::string damage_text(const std::string& file_name, const EventFileItem& damage) {
    const uint64_t last = damage.offset + (damage.skipped ? damage.skipped - 1 : 0);
    return fmt::format("{}: bytes {} to {} damaged ({})", escape_for_message(file_name, 200),
                       damage.offset, last, damage.problem);
}

}  // namespace arbiter::host
