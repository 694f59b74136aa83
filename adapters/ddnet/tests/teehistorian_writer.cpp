#include "teehistorian_writer.hpp"

#include "varint.hpp"

namespace arbiter::ddnet::test {

void put_int(std::vector<uint8_t>& out, int32_t value) {
    write_varint(out, value);
}

void put_string(std::vector<uint8_t>& out, const std::string& text) {
    out.insert(out.end(), text.begin(), text.end());
    out.push_back(0);
}

void put_uuid(std::vector<uint8_t>& out, const ThUuid& uuid) {
    out.insert(out.end(), uuid.begin(), uuid.end());
}

std::vector<uint8_t> start_info(const std::string& name, bool change) {
    std::vector<uint8_t> out;
    put_int(out, (change ? 21 : 20) << 1);  // the message id, a game message (not system)
    put_string(out, name);
    put_string(out, "clan");
    put_int(out, -1);  // country
    put_string(out, "greyfox");
    put_int(out, 0);
    put_int(out, 0);
    put_int(out, 0);
    return out;
}

ThWriter::ThWriter(const std::string& header_json) {
    put_uuid(out_, kTeehistorianUuid);
    put_string(out_, header_json);
}

void ThWriter::begin_tick(int32_t tick) {
    tick_ = tick;
    tick_written_ = false;
    prev_max_cid_ = max_cid_;
    max_cid_ = -1;
}

void ThWriter::write_tick() {
    put_int(out_, -2);
    put_int(out_, tick_ - last_written_tick_ - 1);
    tick_written_ = true;
    last_written_tick_ = tick_;
}

void ThWriter::ensure_tick() {
    if (!tick_written_) write_tick();
}

void ThWriter::ensure_tick_player(int32_t cid) {
    max_cid_ = cid;
    if (!tick_written_ && (cid > prev_max_cid_ || last_written_tick_ + 1 != tick_)) {
        write_tick();
    } else {
        last_written_tick_ = tick_;
        tick_written_ = true;
    }
}

void ThWriter::player(int32_t cid, int32_t x, int32_t y) {
    Prev& p = prev_[cid];
    if (!p.alive || p.x != x || p.y != y) {
        ensure_tick_player(cid);
        if (p.alive) {
            put_int(out_, cid);
            put_int(out_, x - p.x);
            put_int(out_, y - p.y);
        } else {
            put_int(out_, -3);
            put_int(out_, cid);
            put_int(out_, x);
            put_int(out_, y);
        }
    }
    p.alive = true;
    p.x = x;
    p.y = y;
}

void ThWriter::dead(int32_t cid) {
    if (prev_[cid].alive) {
        ensure_tick_player(cid);
        put_int(out_, -4);
        put_int(out_, cid);
    }
    prev_[cid].alive = false;
}

void ThWriter::input(int32_t cid, uint32_t connection, const ThInput& input) {
    Prev& p = prev_[cid];
    if (p.connection == connection) {
        if (p.input == input) return;
        ensure_tick();
        put_int(out_, -5);
        put_int(out_, cid);
        for (int i = 0; i < ThInput::kFields; ++i)
            put_int(out_, input.at(i) - p.input.at(i));
    } else {
        ensure_tick();
        put_int(out_, -6);
        put_int(out_, cid);
        for (int i = 0; i < ThInput::kFields; ++i)
            put_int(out_, input.at(i));
    }
    p.connection = connection;
    p.input = input;
}

void ThWriter::message(int32_t cid, const std::vector<uint8_t>& bytes) {
    ensure_tick();
    put_int(out_, -7);
    put_int(out_, cid);
    put_int(out_, static_cast<int32_t>(bytes.size()));
    out_.insert(out_.end(), bytes.begin(), bytes.end());
}

void ThWriter::join(int32_t cid, bool sixup) {
    ensure_tick();
    std::vector<uint8_t> payload;
    put_int(payload, cid);
    extra(th_uuid_of(sixup ? ThEx::joinver7 : ThEx::joinver6), payload);
    put_int(out_, -8);
    put_int(out_, cid);
}

void ThWriter::drop(int32_t cid, const std::string& reason) {
    ensure_tick();
    put_int(out_, -9);
    put_int(out_, cid);
    put_string(out_, reason);
}

void ThWriter::console(int32_t cid, int32_t flag_mask, const std::string& command,
                       const std::vector<std::string>& args) {
    ensure_tick();
    put_int(out_, -10);
    put_int(out_, cid);
    put_int(out_, flag_mask);
    put_string(out_, command);
    put_int(out_, static_cast<int32_t>(args.size()));
    for (const auto& arg : args)
        put_string(out_, arg);
}

void ThWriter::extra(const ThUuid& uuid, const std::vector<uint8_t>& payload) {
    ensure_tick();
    put_int(out_, -11);
    put_uuid(out_, uuid);
    put_int(out_, static_cast<int32_t>(payload.size()));
    out_.insert(out_.end(), payload.begin(), payload.end());
}

void ThWriter::finish() {
    put_int(out_, -1);
}

}  // namespace arbiter::ddnet::test
