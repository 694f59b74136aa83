#include "teehistorian_file.hpp"

#include <stdexcept>

namespace arbiter::ddnet {

namespace {
// Read at most this much at a time; a window's bytes already taken are dropped past it.
constexpr size_t kChunkBytes = 1u << 20;
}  // namespace

ThFileReader::ThFileReader(const std::filesystem::path& path, uint64_t offset, const ThState& state)
    : path_(path), reader_(offset, state), window_start_(offset) {
    file_.reset(std::fopen(path.c_str(), "rb"));
    if (!file_) throw std::runtime_error(path.string() + ": cannot be opened");
    if (offset > 0) {
        std::error_code error;
        const auto size = std::filesystem::file_size(path, error);
        if (error || size < offset)
            throw std::runtime_error(path.string() + ": shorter than the place saved in it (" +
                                     std::to_string(offset) + " bytes)");
        if (std::fseek(file_.get(), static_cast<long>(offset), SEEK_SET) != 0)
            throw std::runtime_error(path.string() + ": cannot seek to byte " +
                                     std::to_string(offset));
    }
}

size_t ThFileReader::fill() {
    const uint64_t taken = reader_.offset() - window_start_;
    if (taken >= kChunkBytes) {
        window_.erase(window_.begin(), window_.begin() + static_cast<ptrdiff_t>(taken));
        window_start_ += taken;
    }
    const size_t before = window_.size();
    window_.resize(before + kChunkBytes);
    // A file still being written has an end that moves: EOF is only where it is now.
    std::clearerr(file_.get());
    const size_t got = std::fread(window_.data() + before, 1, kChunkBytes, file_.get());
    window_.resize(before + got);
    return got;
}

ThStatus ThFileReader::next(ThRecord& record, bool complete) {
    bool at_end = false;
    for (;;) {
        const uint64_t from = reader_.offset() - window_start_;
        const auto bytes =
            std::span<const uint8_t>(window_).subspan(std::min<uint64_t>(from, window_.size()));
        const ThStatus status = reader_.read(bytes, record, at_end);
        if (status != ThStatus::need_more || at_end) return status;
        if (fill() == 0) {
            if (!complete) return ThStatus::need_more;
            at_end = true;
        }
    }
}

}  // namespace arbiter::ddnet
