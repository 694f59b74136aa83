#include <memory>

#include "store/correlator.hpp"
#include "store/store.hpp"

namespace arbiter::host {

HostAttachments attach_store(const ServerConfig& config) {
    HostAttachments attachments;
    if (config.store.enabled())
        attachments.ledger_sink = std::make_shared<StoreSink>(config.store, config.host.server_id,
                                                              config.sinks.report_threshold,
                                                              config.aggregation.review_threshold);
    if (config.correlation.enabled)
        attachments.correlation =
            std::make_unique<Correlator>(config.store, config.correlation, config.host.server_id);
    return attachments;
}

}  // namespace arbiter::host
