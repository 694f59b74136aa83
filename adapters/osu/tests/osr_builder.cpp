#include "osr_builder.hpp"

#include <cstring>
#include <stdexcept>

#include <lzma.h>

namespace arbiter::osu::test {

namespace {

template <class T>
void put(std::vector<uint8_t>& out, T value) {
    uint8_t bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out.insert(out.end(), bytes, bytes + sizeof(T));
}

}  // namespace

std::vector<uint8_t> lzma_alone(const std::string& text) {
    lzma_options_lzma options;
    if (lzma_lzma_preset(&options, 6)) throw std::runtime_error("lzma preset");
    options.dict_size = 1u << 16;
    lzma_stream stream = LZMA_STREAM_INIT;
    if (lzma_alone_encoder(&stream, &options) != LZMA_OK)
        throw std::runtime_error("lzma_alone_encoder");
    std::vector<uint8_t> out(text.size() + text.size() / 2 + 1024);
    stream.next_in = reinterpret_cast<const uint8_t*>(text.data());
    stream.avail_in = text.size();
    stream.next_out = out.data();
    stream.avail_out = out.size();
    const lzma_ret ret = lzma_code(&stream, LZMA_FINISH);
    const size_t written = out.size() - stream.avail_out;
    lzma_end(&stream);
    if (ret != LZMA_STREAM_END) throw std::runtime_error("lzma_code");
    out.resize(written);
    return out;
}

void put_string(std::vector<uint8_t>& out, const std::optional<std::string>& text) {
    if (!text) {
        out.push_back(0x00);
        return;
    }
    out.push_back(0x0b);
    uint64_t n = text->size();
    do {
        uint8_t byte = n & 0x7f;
        n >>= 7;
        if (n) byte |= 0x80;
        out.push_back(byte);
    } while (n);
    out.insert(out.end(), text->begin(), text->end());
}

std::vector<uint8_t> build_osr(const OsrSpec& s) {
    std::vector<uint8_t> out;
    out.push_back(s.mode);
    put(out, s.version);
    put_string(out, s.beatmap_md5);
    put_string(out, s.player_name);
    put_string(out, s.replay_md5);
    for (uint16_t count :
         {s.count_300, s.count_100, s.count_50, s.count_geki, s.count_katu, s.count_miss})
        put(out, count);
    put(out, s.score);
    put(out, s.max_combo);
    out.push_back(s.perfect);
    put(out, s.mods);
    put_string(out, s.life_bar);
    put(out, s.timestamp_ticks);
    const std::vector<uint8_t> data =
        s.compressed ? *s.compressed
                     : (s.frames.empty() ? std::vector<uint8_t>{} : lzma_alone(s.frames));
    put(out, s.compressed_length.value_or(static_cast<int32_t>(data.size())));
    out.insert(out.end(), data.begin(), data.end());
    if (s.online_score_id) put(out, *s.online_score_id);
    if (s.target_practice_accuracy) put(out, *s.target_practice_accuracy);
    return out;
}

std::string frames_text(const std::vector<std::string>& frames, bool placeholders,
                        std::optional<int32_t> seed) {
    std::string text;
    if (placeholders) text += "0|256|-500|0,-1|256|-500|0,";
    for (const auto& f : frames)
        text += f + ",";
    if (seed) text += "-12345|0|0|" + std::to_string(*seed) + ",";
    return text;
}

}  // namespace arbiter::osu::test
