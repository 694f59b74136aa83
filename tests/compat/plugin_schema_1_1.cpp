// A plugin as it is built against event schema 1.1 (ABI 1.1): its reader is flatc's code
// for the frozen abi/released/events-1.1.fbs, which knows nothing of schema 1.2's look
// and aim. For every position update of player 1 it emits "compat.schema_1_1" with the
// position's x as its score, so a test can see that it reads a 1.2 batch (positions with
// look and aim after them) exactly as it reads a 1.1 one.
#include <cstdio>

#include <arbiter/arbiter_plugin.h>

#include "events-1.1_generated.h"

namespace {

struct Instance {
    char evidence[96];
};

arb_status create(const arb_create_args* args, arb_instance** out) {
    if (!args || !out) return ARB_ERR_INVALID_ARGUMENT;
    *out = reinterpret_cast<arb_instance*>(new Instance{});
    return ARB_OK;
}

void destroy(arb_instance* instance) {
    delete reinterpret_cast<Instance*>(instance);
}

const char* last_error(arb_instance*) {
    return "";
}

arb_status on_batch(arb_instance* handle, arb_bytes bytes, const arb_signal_sink* sink) {
    auto* instance = reinterpret_cast<Instance*>(handle);
    flatbuffers::Verifier verifier(bytes.data, bytes.size);
    if (!verifier.VerifyBuffer<arbiter::fb_1_1::EventBatch>(ARB_SCHEMA_FILE_IDENTIFIER))
        return ARB_ERR_INVALID_ARGUMENT;
    const auto* batch = flatbuffers::GetRoot<arbiter::fb_1_1::EventBatch>(bytes.data);
    if (!batch->events()) return ARB_OK;
    for (const auto* event : *batch->events()) {
        const auto* update = event->body_as_PositionUpdate();
        if (event->player() != 1 || !update || !update->position()) continue;
        const float x = update->position()->x();
        const int length = std::snprintf(instance->evidence, sizeof instance->evidence,
                                         "{\"x\":%.3f,\"batch_schema_minor\":%u}", x,
                                         static_cast<unsigned>(batch->schema_minor()));
        arb_signal signal{};
        signal.struct_size = sizeof signal;
        signal.player = 1;
        signal.score = x < 0 ? 0.0 : x > 1 ? 1.0 : x;
        signal.confidence = 1.0;
        signal.code = {"compat.schema_1_1", 17};
        signal.evidence_json = {instance->evidence, static_cast<uint64_t>(length)};
        if (const arb_status status = sink->emit(sink->context, &signal); status != ARB_OK)
            return status;
    }
    return ARB_OK;
}

const arb_plugin_api api = [] {
    arb_plugin_api table{};
    table.struct_size = sizeof table;
    table.create = create;
    table.destroy = destroy;
    table.last_error = last_error;
    table.on_batch = on_batch;
    return table;
}();

}  // namespace

extern "C" __attribute__((visibility("default"))) arb_status arbiter_plugin_entry(
    arb_negotiation* negotiation) {
    if (!negotiation || negotiation->struct_size < ARB_NEGOTIATION_SIZE_1_1)
        return ARB_ERR_INVALID_ARGUMENT;
    negotiation->plugin_abi_major = 1;
    negotiation->plugin_abi_minor = 1;
    negotiation->plugin_abi_minor_required = 0;
    negotiation->schema_major = 1;
    negotiation->schema_minor = 1;  // built against the released schema 1.1
    negotiation->schema_minor_required = 0;
    negotiation->plugin_api = &api;
    negotiation->name = "compat-schema-1-1";
    negotiation->version = "1.1.0";
    negotiation->contact = "tests@arbiter.invalid";
    negotiation->description = "built against the released event schema 1.1";
    negotiation->capabilities = 0;
    negotiation->model_class = ARB_CLASS_VALIDATION;
    negotiation->reserved0 = 0;
    return negotiation->host_abi_major == 1 ? ARB_OK : ARB_ERR_VERSION;
}
