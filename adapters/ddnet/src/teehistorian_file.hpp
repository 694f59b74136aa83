// A teehistorian file read record by record as it grows: the reader (teehistorian_reader.hpp)
// over a window of the file's bytes, refilled from the file when a record runs past what
// was read. The same for a finished file (`arbiter import`) and one a server is still
// writing (`arbiter ddnet-bridge`).
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "teehistorian_reader.hpp"

namespace arbiter::ddnet {

class ThFileReader {
  public:
    // Opens `path` to read from `offset` with the reader's state there (a new file: 0 and a
    // fresh state). Throws std::runtime_error when the file cannot be opened or is shorter
    // than `offset`.
    explicit ThFileReader(const std::filesystem::path& path, uint64_t offset = 0,
                          const ThState& state = {});

    // The next record. need_more: the file holds no more whole records yet; with
    // `complete` (nothing more will be written) a record cut off at its end is reported as
    // a truncated tail first.
    ThStatus next(ThRecord& record, bool complete);

    TeehistorianReader& reader() { return reader_; }
    const std::filesystem::path& path() const { return path_; }
    // Bytes of the file read so far (the window's end).
    uint64_t bytes_read() const { return window_start_ + window_.size(); }

  private:
    size_t fill();  // reads what the file holds past the window; the count read

    struct Closer {
        void operator()(std::FILE* f) const { std::fclose(f); }
    };
    std::filesystem::path path_;
    std::unique_ptr<std::FILE, Closer> file_;
    TeehistorianReader reader_;
    std::vector<uint8_t> window_;
    uint64_t window_start_ = 0;  // the file offset of window_[0]
};

}  // namespace arbiter::ddnet
