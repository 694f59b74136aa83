// The C glue: ARBITER_PLUGIN(Class) exports the entry symbol and builds the C function
// table from the analyzer class, setting a capability bit for each optional member the
// class has. Every trampoline catches every exception and turns it into a status code
// and a last error, so nothing C++ ever crosses the ABI.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <arbiter/arbiter_plugin.h>
#include <arbiter/sdk/analyzer.hpp>
#include <arbiter/sdk/state.hpp>

namespace arbiter::detail {

template <class T>
concept HasMatchEnd = requires(T& t, const MatchKey& key, Signals& signals) {
    t.on_match_end(key, signals);
};
template <class T>
concept HasConfigure = requires(T& t, const Context& context) {
    t.configure(context);
};
template <class T>
concept HasSaveState = requires(T& t) {
    { t.save_state() } -> std::convertible_to<std::vector<uint8_t>>;
};
template <class T>
concept HasRestoreState = requires(T& t, std::span<const uint8_t> blob) {
    t.restore_state(blob);
};
template <class T>
concept HasBaselineBegin = requires(T& t) {
    t.baseline_begin();
};
template <class T>
concept HasBaselineEnd = requires(T& t) {
    { t.baseline_end() } -> std::convertible_to<std::vector<uint8_t>>;
};

// A member of that name, whatever its signature (when it is not overloaded). One that
// exists while the matching Has* concept is false is a near miss: a typo in the
// signature would otherwise compile and silently drop the capability.
template <class T>
concept NamesMatchEnd = requires { &T::on_match_end; };
template <class T>
concept NamesConfigure = requires { &T::configure; };
template <class T>
concept NamesSaveState = requires { &T::save_state; };
template <class T>
concept NamesRestoreState = requires { &T::restore_state; };
template <class T>
concept NamesBaselineBegin = requires { &T::baseline_begin; };
template <class T>
concept NamesBaselineEnd = requires { &T::baseline_end; };

// Everything a C handle points at: the analyzer, and what the C slots must keep alive
// between calls (the last error, the last blob returned).
template <class T>
struct Instance {
    std::unique_ptr<T> analyzer;
    std::string last_error;
    std::vector<uint8_t> returned_blob;
};

template <class T>
Instance<T>* unwrap(arb_instance* handle) {
    return reinterpret_cast<Instance<T>*>(handle);
}

// Runs body, turning every exception into a status and a last error.
template <class T, class Body>
arb_status guarded(Instance<T>* instance, Body&& body) noexcept {
    auto fail = [&](arb_status status, const char* message) noexcept {
        try {
            instance->last_error = message;
        } catch (...) {
            instance->last_error.clear();  // out of memory: the status alone must do
        }
        return status;
    };
    try {
        instance->last_error.clear();
        body();
        return ARB_OK;
    } catch (const ConfigError& error) {
        return fail(ARB_ERR_CONFIG, error.what());
    } catch (const StateError& error) {
        return fail(ARB_ERR_STATE, error.what());
    } catch (const std::bad_alloc&) {
        return fail(ARB_ERR_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception& error) {
        return fail(ARB_ERR_INTERNAL, error.what());
    } catch (...) {
        return fail(ARB_ERR_INTERNAL, "unknown exception (not derived from std::exception)");
    }
}

inline Context make_context(const arb_create_args* args) {
    Context context;
    context.host = HostServices(args->host, args->services);
    context.config =
        ConfigTable::parse({args->config.data, static_cast<size_t>(args->config.size)});
    context.baseline = {args->baseline.data, static_cast<size_t>(args->baseline.size)};
    context.shard_index = args->shard_index;
    context.shard_count = args->shard_count ? args->shard_count : 1;
    return context;
}

inline bool create_args_usable(const arb_create_args* args) {
    return args && args->struct_size >= ARB_CREATE_ARGS_SIZE_1_0 && args->services &&
           (args->config.data || args->config.size == 0) &&
           (args->baseline.data || args->baseline.size == 0);
}

template <class T>
struct Glue {
    static_assert(std::is_base_of_v<Analyzer, T>, "an analyzer derives from arbiter::Analyzer");
    static_assert(std::is_constructible_v<T, const Context&>,
                  "an analyzer is constructible from const arbiter::Context&");
    static_assert(HasMatchEnd<T> || !NamesMatchEnd<T>,
                  "on_match_end is declared, but not as `void on_match_end(const "
                  "arbiter::MatchKey&, arbiter::Signals&)`: the SDK cannot call it");
    static_assert(HasConfigure<T> || !NamesConfigure<T>,
                  "configure is declared, but not as `void configure(const arbiter::Context&)`: "
                  "the SDK cannot call it");
    static_assert(HasSaveState<T> || !NamesSaveState<T>,
                  "save_state is declared, but not as `std::vector<uint8_t> save_state()`: the "
                  "SDK cannot call it");
    static_assert(HasRestoreState<T> || !NamesRestoreState<T>,
                  "restore_state is declared, but not as `void restore_state(std::span<const "
                  "uint8_t>)`: the SDK cannot call it");
    static_assert(HasBaselineBegin<T> || !NamesBaselineBegin<T>,
                  "baseline_begin is declared, but not as `void baseline_begin()`: the SDK "
                  "cannot call it");
    static_assert(HasBaselineEnd<T> || !NamesBaselineEnd<T>,
                  "baseline_end is declared, but not as `std::vector<uint8_t> baseline_end()`: "
                  "the SDK cannot call it");
    static_assert(HasSaveState<T> == HasRestoreState<T>,
                  "save_state and restore_state come together");
    static_assert(HasBaselineBegin<T> == HasBaselineEnd<T>,
                  "baseline_begin and baseline_end come together");

    static_assert(T::info.requires_abi_minor <= ARB_ABI_VERSION_MINOR,
                  "requires_abi_minor is newer than the ABI this SDK speaks");
    static_assert(T::info.requires_schema_minor <= ARB_SCHEMA_VERSION_MINOR,
                  "requires_schema_minor is newer than the schema this SDK reads");

    // Every bit the class implements; negotiate() keeps those of the minor in use.
    static constexpr uint64_t capabilities() {
        uint64_t bits = 0;
        if constexpr (HasSaveState<T>) bits |= ARB_CAP_STATE;
        if constexpr (HasConfigure<T>) bits |= ARB_CAP_RECONFIGURE;
        if constexpr (HasMatchEnd<T>) bits |= ARB_CAP_MATCH_END;
        if constexpr (HasBaselineBegin<T>) bits |= ARB_CAP_BASELINE;
        if (T::info.shard_by_match) bits |= ARB_CAP_SHARD_BY_MATCH;
        if (T::info.describe_config) bits |= ARB_CAP_DESCRIBE_CONFIG;
        return bits;
    }

    // The JSON Schema of the config table, recorded once from the constructor, or the
    // reason it could not be (the text of what the constructor threw).
    struct DescribedConfig {
        std::string text;
        bool ok = false;
    };
    static DescribedConfig describe() noexcept {
        DescribedConfig out;
        try {
            Context context;
            context.config = ConfigTable::describing();
            T analyzer(context);
            out.text = context.config.schema_json();
            out.ok = true;
        } catch (const std::exception& error) {
            try {
                out.text = std::string("recording the config schema failed: ") + error.what();
            } catch (...) {
            }
        } catch (...) {
            out.text.clear();
        }
        return out;
    }

    static arb_status describe_config(arb_string* out) noexcept {
        if (!out) return ARB_ERR_INVALID_ARGUMENT;
        // A function-local static: made once, thread-safe, freed when the library unloads.
        static const DescribedConfig described = describe();
        *out = {described.text.data(), described.text.size()};
        return described.ok ? ARB_OK : ARB_ERR_INTERNAL;
    }

    static arb_status create(const arb_create_args* args, arb_instance** out) noexcept {
        if (!out) return ARB_ERR_INVALID_ARGUMENT;
        *out = nullptr;
        Instance<T>* instance = new (std::nothrow) Instance<T>();
        if (!instance) return ARB_ERR_OUT_OF_MEMORY;
        *out = reinterpret_cast<arb_instance*>(instance);
        if (!create_args_usable(args)) {
            instance->last_error = "create: arguments missing or from an older host";
            return ARB_ERR_INVALID_ARGUMENT;
        }
        return guarded(instance, [&] {
            Context context = make_context(args);
            instance->analyzer = std::make_unique<T>(context);
            context.config.reject_unknown_keys();
        });
    }

    static void destroy(arb_instance* handle) noexcept { delete unwrap<T>(handle); }

    static const char* last_error(arb_instance* handle) noexcept {
        return handle ? unwrap<T>(handle)->last_error.c_str() : "no instance";
    }

    // The analyzer of an instance that was created successfully, or null.
    static T* ready(Instance<T>* instance) {
        if (!instance->analyzer) {
            instance->last_error = "the instance was not created successfully";
            return nullptr;
        }
        return instance->analyzer.get();
    }

    static arb_status on_batch(arb_instance* handle, arb_bytes batch,
                               const arb_signal_sink* sink) noexcept {
        if (!handle) return ARB_ERR_INVALID_ARGUMENT;
        auto* instance = unwrap<T>(handle);
        if (!sink || !sink->emit || !batch.data) {
            instance->last_error = "on_batch: batch or sink missing";
            return ARB_ERR_INVALID_ARGUMENT;
        }
        return guarded(instance, [&] {
            T* analyzer = ready(instance);
            if (!analyzer) throw std::logic_error(instance->last_error);
            Signals signals(sink);
            analyzer->on_batch(Batch::trusted({batch.data, static_cast<size_t>(batch.size)}),
                               signals);
        });
    }

    static arb_status on_match_end(arb_instance* handle, arb_string relay_id, uint64_t match_id,
                                   const arb_signal_sink* sink) noexcept {
        if (!handle) return ARB_ERR_INVALID_ARGUMENT;
        auto* instance = unwrap<T>(handle);
        if (!sink || !sink->emit) return ARB_ERR_INVALID_ARGUMENT;
        return guarded(instance, [&] {
            T* analyzer = ready(instance);
            if (!analyzer) throw std::logic_error(instance->last_error);
            Signals signals(sink);
            MatchKey key{std::string(relay_id.data ? relay_id.data : "", relay_id.size), match_id};
            analyzer->on_match_end(key, signals);
        });
    }

    static arb_status configure(arb_instance* handle, const arb_create_args* args) noexcept {
        if (!handle) return ARB_ERR_INVALID_ARGUMENT;
        auto* instance = unwrap<T>(handle);
        if (!create_args_usable(args)) {
            instance->last_error = "configure: arguments missing or from an older host";
            return ARB_ERR_INVALID_ARGUMENT;
        }
        return guarded(instance, [&] {
            T* analyzer = ready(instance);
            if (!analyzer) throw std::logic_error(instance->last_error);
            analyzer->configure(make_context(args));
        });
    }

    static arb_status save_state(arb_instance* handle, arb_bytes* out) noexcept {
        if (!handle || !out) return ARB_ERR_INVALID_ARGUMENT;
        auto* instance = unwrap<T>(handle);
        return guarded(instance, [&] {
            T* analyzer = ready(instance);
            if (!analyzer) throw std::logic_error(instance->last_error);
            instance->returned_blob = analyzer->save_state();
            *out = {instance->returned_blob.data(), instance->returned_blob.size()};
        });
    }

    static arb_status restore_state(arb_instance* handle, arb_bytes blob) noexcept {
        if (!handle) return ARB_ERR_INVALID_ARGUMENT;
        auto* instance = unwrap<T>(handle);
        if (!blob.data && blob.size) return ARB_ERR_INVALID_ARGUMENT;
        return guarded(instance, [&] {
            T* analyzer = ready(instance);
            if (!analyzer) throw std::logic_error(instance->last_error);
            analyzer->restore_state({blob.data, static_cast<size_t>(blob.size)});
        });
    }

    static arb_status baseline_begin(arb_instance* handle) noexcept {
        if (!handle) return ARB_ERR_INVALID_ARGUMENT;
        auto* instance = unwrap<T>(handle);
        return guarded(instance, [&] {
            T* analyzer = ready(instance);
            if (!analyzer) throw std::logic_error(instance->last_error);
            analyzer->baseline_begin();
        });
    }

    static arb_status baseline_end(arb_instance* handle, arb_bytes* out) noexcept {
        if (!handle || !out) return ARB_ERR_INVALID_ARGUMENT;
        auto* instance = unwrap<T>(handle);
        return guarded(instance, [&] {
            T* analyzer = ready(instance);
            if (!analyzer) throw std::logic_error(instance->last_error);
            instance->returned_blob = analyzer->baseline_end();
            *out = {instance->returned_blob.data(), instance->returned_blob.size()};
        });
    }

    static constexpr arb_plugin_api make_api() {
        arb_plugin_api table{};
        table.struct_size = sizeof(arb_plugin_api);
        table.create = &create;
        table.destroy = &destroy;
        table.last_error = &last_error;
        table.on_batch = &on_batch;
        if constexpr (HasMatchEnd<T>) table.on_match_end = &on_match_end;
        if constexpr (HasConfigure<T>) table.configure = &configure;
        if constexpr (HasSaveState<T>) {
            table.save_state = &save_state;
            table.restore_state = &restore_state;
        }
        if constexpr (HasBaselineBegin<T>) {
            table.baseline_begin = &baseline_begin;
            table.baseline_end = &baseline_end;
        }
        if (T::info.describe_config) table.describe_config = &describe_config;
        return table;
    }

    static constexpr arb_plugin_api api = make_api();
};

// The body of the entry function: fills the negotiation's "out" fields by the rules of
// the header's "Versions" section, for a host of any minor of major 1.
template <class T>
arb_status negotiate(arb_negotiation* negotiation) noexcept {
    if (!negotiation || negotiation->struct_size < ARB_NEGOTIATION_FROZEN_SIZE)
        return ARB_ERR_INVALID_ARGUMENT;
    constexpr uint32_t abi_required = T::info.requires_abi_minor;
    constexpr uint32_t schema_required = T::info.requires_schema_minor;
    // A host older than 1.1 sends schema 1.0 and has no field for a required minor: it
    // reads plugin_abi_minor as the minor the plugin needs. A plugin that needs a newer
    // schema needs a host of 1.1 or later, the first to send one.
    const bool host_has_1_1_fields = negotiation->struct_size >= ARB_NEGOTIATION_SIZE_1_1;
    const uint32_t host_schema_minor = host_has_1_1_fields ? negotiation->host_schema_minor : 0;
    const uint32_t needs_abi_minor =
        !host_has_1_1_fields && schema_required > 0 && abi_required < 1 ? 1 : abi_required;

    // The frozen prefix first, so that any host can name both versions.
    negotiation->plugin_abi_major = ARB_ABI_VERSION_MAJOR;
    negotiation->plugin_abi_minor = host_has_1_1_fields ? ARB_ABI_VERSION_MINOR : needs_abi_minor;
    if (negotiation->host_abi_major != ARB_ABI_VERSION_MAJOR) return ARB_ERR_VERSION;
    if (negotiation->struct_size < ARB_NEGOTIATION_SIZE_1_0) return ARB_ERR_INVALID_ARGUMENT;

    const uint32_t host_minor = negotiation->host_abi_minor;
    const uint32_t in_use = host_minor < ARB_ABI_VERSION_MINOR ? host_minor : ARB_ABI_VERSION_MINOR;
    negotiation->schema_major = ARB_SCHEMA_VERSION_MAJOR;
    negotiation->schema_minor = ARB_SCHEMA_VERSION_MINOR;
    negotiation->plugin_api = &Glue<T>::api;
    negotiation->name = T::info.name;
    negotiation->version = T::info.version;
    negotiation->contact = T::info.contact;
    negotiation->description = T::info.description;
    // Only the bits the host's minor knows: an older host refuses any other. Their slots
    // past its table are never read by it.
    negotiation->capabilities = Glue<T>::capabilities() & ARB_CAP_ALL_FOR_MINOR(in_use);
    negotiation->model_class = static_cast<uint32_t>(T::info.model_class);
    negotiation->reserved0 = 0;
    if (host_has_1_1_fields) {
        negotiation->plugin_abi_minor_required = abi_required;
        negotiation->schema_minor_required = schema_required;
    }
    if (host_minor < needs_abi_minor) return ARB_ERR_VERSION;
    if (host_has_1_1_fields && negotiation->host_schema_major != ARB_SCHEMA_VERSION_MAJOR)
        return ARB_ERR_VERSION;
    if (host_schema_minor < schema_required) return ARB_ERR_VERSION;
    return ARB_OK;
}

}  // namespace arbiter::detail

// Exports the plugin's entry symbol for AnalyzerClass. Use once per plugin library.
#define ARBITER_PLUGIN(AnalyzerClass)                                                  \
    extern "C" __attribute__((visibility("default"))) arb_status arbiter_plugin_entry( \
        arb_negotiation* negotiation) {                                                \
        return ::arbiter::detail::negotiate<AnalyzerClass>(negotiation);               \
    }                                                                                  \
    static_assert(std::is_same_v<decltype(&arbiter_plugin_entry), arb_entry_fn>,       \
                  "arbiter_plugin_entry has the type of arb_entry_fn")
