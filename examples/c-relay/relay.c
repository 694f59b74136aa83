/*
 * A relay in C that embeds the Arbiter host through its C API (arbiter/arbiter_host.h).
 *
 * A real relay builds an EventBatch for each slice of its players' input and pushes it;
 * this one replays batches recorded in an event log (docs/event-file-format.md), so that
 * it runs anywhere. It prints each player whose action goes up as it happens, and one
 * line per player at the end.
 *
 *   arbiter-c-relay server_config.toml match.arbev
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arbiter/arbiter_host.h>

static const char* action_name(uint32_t action) {
    switch (action) {
        case ARBITER_ACTION_CLEAR: return "Clear";
        case ARBITER_ACTION_MONITOR: return "Monitor";
        case ARBITER_ACTION_FLAG_FOR_REVIEW: return "FlagForReview";
        case ARBITER_ACTION_SHADOW_RESTRICT: return "ShadowRestrict";
        default: return "?";
    }
}

static void on_action(void* user_data, const arbiter_assessment* a) {
    unsigned* raised = (unsigned*)user_data;
    ++*raised;
    printf("action: %s/%llu/%u reaches %s (score %.2f)\n", a->relay_id, (unsigned long long)a->match_id, a->player,
           action_name(a->action), a->combined_score);
}

static uint32_t read_u32(const uint8_t* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* CRC-32 (IEEE), bit by bit: the event log's record checksum. */
static uint32_t crc32_of(const uint8_t* data, size_t size) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < size; ++i) {
        crc ^= data[i];
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

/* Reads the whole file; NULL with a message on failure. */
static uint8_t* read_file(const char* path, size_t* size) {
    FILE* file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "%s: cannot open\n", path);
        return NULL;
    }
    uint8_t* bytes = NULL;
    size_t used = 0, capacity = 0, got;
    do {
        if (used == capacity) {
            capacity = capacity ? capacity * 2 : 1 << 20;
            uint8_t* grown = realloc(bytes, capacity);
            if (!grown) {
                free(bytes);
                fclose(file);
                fprintf(stderr, "%s: out of memory\n", path);
                return NULL;
            }
            bytes = grown;
        }
        got = fread(bytes + used, 1, capacity - used, file);
        used += got;
    } while (got > 0);
    fclose(file);
    *size = used;
    return bytes;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s CONFIG EVENTS.arbev\n", argv[0]);
        return 1;
    }
    arbiter_host* host = NULL;
    if (arbiter_host_create(argv[1], &host) != ARBITER_OK) {
        fprintf(stderr, "cannot start the host: %s\n", host ? arbiter_host_last_error(host) : "(no detail)");
        arbiter_host_destroy(host);
        return 2;
    }
    if (*arbiter_host_plugin_errors(host)) fprintf(stderr, "refused plugins:\n%s", arbiter_host_plugin_errors(host));
    unsigned raised = 0;
    arbiter_host_set_action_callback(host, on_action, &raised);

    size_t size = 0;
    uint8_t* file = read_file(argv[2], &size);
    if (!file) {
        arbiter_host_destroy(host);
        return 2;
    }
    int status = 0;
    if (size < 16 || memcmp(file, "ARBEVLOG", 8) != 0) {
        fprintf(stderr, "%s: not an Arbiter event log\n", argv[2]);
        status = 2;
    }
    unsigned pushed = 0, refused = 0;
    for (size_t at = 16; status == 0 && at + 16 <= size;) {
        const uint8_t* header = file + at;
        uint32_t length = read_u32(header + 4);
        if (memcmp(header, "ARBR", 4) != 0 || read_u32(header + 12) != crc32_of(header, 12) ||
            at + 16 + length > size || read_u32(header + 8) != crc32_of(header + 16, length)) {
            fprintf(stderr, "%s: damaged record at offset %zu; stopping\n", argv[2], at);
            status = 3;
            break;
        }
        if (arbiter_host_push(host, header + 16, length) == ARBITER_OK) {
            ++pushed;
        } else {
            ++refused;
            fprintf(stderr, "batch at offset %zu refused: %s\n", at, arbiter_host_last_error(host));
        }
        at += 16 + length;
    }
    free(file);

    const arbiter_assessment* all = NULL;
    uint64_t count = 0;
    if (arbiter_host_assessments(host, &all, &count) == ARBITER_OK) {
        for (uint64_t i = 0; i < count; ++i)
            printf("player %u (%s): %s %.2f\n", all[i].player, all[i].account_id, action_name(all[i].action),
                   all[i].combined_score);
    }
    printf("pushed %u batches, %u refused, %u action(s) raised\n", pushed, refused, raised);
    arbiter_host_destroy(host);
    return status;
}
