// Pins the binary layout of the ABI: every offset and size of every struct. A moved
// slot breaks every plugin already built, so these numbers may only ever be added to
// (a new slot at the end), never changed. The sizes of the released 1.0 structs are
// checked against the frozen header itself in released_sizes_test.cpp.
#include <cstddef>

#include <gtest/gtest.h>

#include <arbiter/arbiter_plugin.h>

#define EXPECT_FIELD(type, field, offset, size)                           \
    EXPECT_EQ(offsetof(type, field), size_t{offset}) << #type "." #field; \
    EXPECT_EQ(sizeof(((type*)nullptr)->field), size_t{size}) << #type "." #field

TEST(AbiLayout, PlainData) {
    EXPECT_EQ(sizeof(arb_bytes), 16u);
    EXPECT_FIELD(arb_bytes, data, 0, 8);
    EXPECT_FIELD(arb_bytes, size, 8, 8);
    EXPECT_EQ(sizeof(arb_string), 16u);
    EXPECT_FIELD(arb_string, data, 0, 8);
    EXPECT_FIELD(arb_string, size, 8, 8);
    EXPECT_EQ(sizeof(arb_status), 4u);
}

TEST(AbiLayout, Signal) {
    EXPECT_EQ(sizeof(arb_signal), 64u);
    EXPECT_FIELD(arb_signal, struct_size, 0, 8);
    EXPECT_FIELD(arb_signal, player, 8, 4);
    EXPECT_FIELD(arb_signal, flags, 12, 4);
    EXPECT_FIELD(arb_signal, score, 16, 8);
    EXPECT_FIELD(arb_signal, confidence, 24, 8);
    EXPECT_FIELD(arb_signal, code, 32, 16);
    EXPECT_FIELD(arb_signal, evidence_json, 48, 16);
}

TEST(AbiLayout, SignalSink) {
    EXPECT_EQ(sizeof(arb_signal_sink), 24u);
    EXPECT_FIELD(arb_signal_sink, struct_size, 0, 8);
    EXPECT_FIELD(arb_signal_sink, context, 8, 8);
    EXPECT_FIELD(arb_signal_sink, emit, 16, 8);
}

TEST(AbiLayout, HostServices) {
    EXPECT_EQ(sizeof(arb_host_services), 40u);
    EXPECT_FIELD(arb_host_services, struct_size, 0, 8);
    EXPECT_FIELD(arb_host_services, log, 8, 8);
    EXPECT_FIELD(arb_host_services, relay_time_us, 16, 8);
    EXPECT_FIELD(arb_host_services, metric_add, 24, 8);
    EXPECT_FIELD(arb_host_services, metric_set, 32, 8);
}

TEST(AbiLayout, CreateArgs) {
    EXPECT_EQ(sizeof(arb_create_args), 64u);
    EXPECT_FIELD(arb_create_args, struct_size, 0, 8);
    EXPECT_FIELD(arb_create_args, host, 8, 8);
    EXPECT_FIELD(arb_create_args, services, 16, 8);
    EXPECT_FIELD(arb_create_args, config, 24, 16);
    EXPECT_FIELD(arb_create_args, baseline, 40, 16);
    EXPECT_FIELD(arb_create_args, shard_index, 56, 4);
    EXPECT_FIELD(arb_create_args, shard_count, 60, 4);
}

TEST(AbiLayout, PluginApi) {
    EXPECT_EQ(sizeof(arb_plugin_api), 96u);
    EXPECT_FIELD(arb_plugin_api, struct_size, 0, 8);
    EXPECT_FIELD(arb_plugin_api, create, 8, 8);
    EXPECT_FIELD(arb_plugin_api, destroy, 16, 8);
    EXPECT_FIELD(arb_plugin_api, last_error, 24, 8);
    EXPECT_FIELD(arb_plugin_api, on_batch, 32, 8);
    EXPECT_FIELD(arb_plugin_api, on_match_end, 40, 8);
    EXPECT_FIELD(arb_plugin_api, configure, 48, 8);
    EXPECT_FIELD(arb_plugin_api, save_state, 56, 8);
    EXPECT_FIELD(arb_plugin_api, restore_state, 64, 8);
    EXPECT_FIELD(arb_plugin_api, baseline_begin, 72, 8);
    EXPECT_FIELD(arb_plugin_api, baseline_end, 80, 8);
    EXPECT_FIELD(arb_plugin_api, describe_config, 88, 8);  // 1.1
    EXPECT_EQ(sizeof(arb_plugin_api), size_t{ARB_PLUGIN_API_SIZE_1_1});
}

TEST(AbiLayout, Negotiation) {
    EXPECT_EQ(sizeof(arb_negotiation), 120u);
    EXPECT_FIELD(arb_negotiation, struct_size, 0, 8);
    EXPECT_FIELD(arb_negotiation, host_abi_major, 8, 4);
    EXPECT_FIELD(arb_negotiation, host_abi_minor, 12, 4);
    EXPECT_FIELD(arb_negotiation, host_services, 16, 8);
    EXPECT_FIELD(arb_negotiation, host, 24, 8);
    EXPECT_FIELD(arb_negotiation, plugin_abi_major, 32, 4);
    EXPECT_FIELD(arb_negotiation, plugin_abi_minor, 36, 4);
    EXPECT_FIELD(arb_negotiation, schema_major, 40, 4);
    EXPECT_FIELD(arb_negotiation, schema_minor, 44, 4);
    EXPECT_FIELD(arb_negotiation, plugin_api, 48, 8);
    EXPECT_FIELD(arb_negotiation, name, 56, 8);
    EXPECT_FIELD(arb_negotiation, version, 64, 8);
    EXPECT_FIELD(arb_negotiation, contact, 72, 8);
    EXPECT_FIELD(arb_negotiation, description, 80, 8);
    EXPECT_FIELD(arb_negotiation, capabilities, 88, 8);
    EXPECT_FIELD(arb_negotiation, model_class, 96, 4);
    EXPECT_FIELD(arb_negotiation, reserved0, 100, 4);
    EXPECT_FIELD(arb_negotiation, plugin_abi_minor_required, 104, 4);  // 1.1
    EXPECT_FIELD(arb_negotiation, schema_minor_required, 108, 4);      // 1.1
    EXPECT_FIELD(arb_negotiation, host_schema_major, 112, 4);          // 1.1
    EXPECT_FIELD(arb_negotiation, host_schema_minor, 116, 4);          // 1.1
    EXPECT_EQ(sizeof(arb_negotiation), size_t{ARB_NEGOTIATION_SIZE_1_1});
    // The frozen prefix ends right after plugin_abi_minor.
    EXPECT_EQ(offsetof(arb_negotiation, plugin_abi_minor) + 4, size_t{ARB_NEGOTIATION_FROZEN_SIZE});
}

// Structs that 1.1 did not grow are still exactly their 1.0 size.
TEST(AbiLayout, UngrownStructsKeepTheirOneZeroSize) {
    EXPECT_EQ(sizeof(arb_signal), size_t{ARB_SIGNAL_SIZE_1_0});
    EXPECT_EQ(sizeof(arb_signal_sink), size_t{ARB_SIGNAL_SINK_SIZE_1_0});
    EXPECT_EQ(sizeof(arb_host_services), size_t{ARB_HOST_SERVICES_SIZE_1_0});
    EXPECT_EQ(sizeof(arb_create_args), size_t{ARB_CREATE_ARGS_SIZE_1_0});
}

TEST(AbiLayout, CapabilitiesKnowTheirMinor) {
    EXPECT_EQ(ARB_CAP_DESCRIBE_CONFIG, 32ull);
    EXPECT_EQ(ARB_CAP_ALL_FOR_MINOR(0u), ARB_CAP_ALL_1_0);
    EXPECT_EQ(ARB_CAP_ALL_FOR_MINOR(1u), ARB_CAP_ALL_1_1);
    EXPECT_EQ(ARB_CAP_ALL_1_0 & ARB_CAP_DESCRIBE_CONFIG, 0ull);
    EXPECT_EQ(ARB_MINOR_ABSENT, 0xFFFFFFFFu);
}

TEST(AbiLayout, ConstantsOfVersionOne) {
    EXPECT_EQ(ARB_ABI_VERSION_MAJOR, 1);
    EXPECT_EQ(ARB_OK, 0);
    EXPECT_EQ(ARB_ERR_INVALID_ARGUMENT, 1);
    EXPECT_EQ(ARB_ERR_CONFIG, 2);
    EXPECT_EQ(ARB_ERR_STATE, 3);
    EXPECT_EQ(ARB_ERR_UNSUPPORTED, 4);
    EXPECT_EQ(ARB_ERR_INTERNAL, 5);
    EXPECT_EQ(ARB_ERR_OUT_OF_MEMORY, 6);
    EXPECT_EQ(ARB_ERR_VERSION, 7);
    EXPECT_EQ(ARB_CAP_STATE, 1ull);
    EXPECT_EQ(ARB_CAP_RECONFIGURE, 2ull);
    EXPECT_EQ(ARB_CAP_MATCH_END, 4ull);
    EXPECT_EQ(ARB_CAP_BASELINE, 8ull);
    EXPECT_EQ(ARB_CAP_SHARD_BY_MATCH, 16ull);
    EXPECT_EQ(ARB_CLASS_VALIDATION, 1);
    EXPECT_EQ(ARB_CLASS_BEHAVIOURAL, 2);
    EXPECT_EQ(ARB_CLASS_STATISTICAL, 3);
    EXPECT_EQ(ARB_SIGNAL_TRIPWIRE, 1u);
    EXPECT_STREQ(ARB_ENTRY_SYMBOL, "arbiter_plugin_entry");
    EXPECT_STREQ(ARB_SCHEMA_FILE_IDENTIFIER, "ARB1");
}
