#include "ps/transport/ucx/ucx_worker.h"

#include <cstdlib>
#include <cstring>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

void CheckUcs(ucs_status_t status, const char* what) {
  if (status != UCS_OK) throw Error(StrCat("UCX: ", what, " failed: ", ucs_status_string(status)));
}

UcxWorker::UcxWorker(const Settings& settings) {
  ucp_config_t* config = nullptr;
  CheckUcs(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
  auto modify = [&](const char* name, const char* value) {
    const ucs_status_t status = ucp_config_modify(config, name, value);
    if (status != UCS_OK) ucp_config_release(config);
    CheckUcs(status, "ucp_config_modify");
  };
  if (!settings.tls.empty()) modify("TLS", settings.tls.c_str());
  if (!settings.net_devices.empty()) modify("NET_DEVICES", settings.net_devices.c_str());
  if (std::getenv("UCX_RNDV_SCHEME") == nullptr) {
    modify("RNDV_SCHEME", settings.sender_writes ? "put_zcopy" : "get_zcopy");
  }
  // Between ranks of one host a second rendezvous rail can only be TCP: UCX adds one, then polls
  // its socket (a system call) on every progress call; and where the job spans hosts, UCX 1.13
  // aborts the process when the peer's wireup answer leaves that rail out ("endpoint
  // reconfiguration not supported yet"). Hosts with several NICs can ask for more rails.
  if (std::getenv("UCX_MAX_RNDV_RAILS") == nullptr) {
    modify("MAX_RNDV_RAILS", "1");
  }
  // Over TCP a rendezvous payload comes as fragments of one receive segment each, every one a trip
  // through the progress loop (epoll, recv, a copy out of the segment): larger segments make
  // fewer trips. Only TCP has this setting.
  if (std::getenv("UCX_TCP_RX_SEG_SIZE") == nullptr) modify("RX_SEG_SIZE", "512K");
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  const ucs_status_t status = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  CheckUcs(status, "ucp_init");
  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  try {
    CheckUcs(ucp_worker_create(context_, &worker_params, &worker_), "ucp_worker_create");
    CheckUcs(ucp_worker_get_efd(worker_, &event_fd_), "ucp_worker_get_efd");
  } catch (const Error&) {
    if (worker_ != nullptr) ucp_worker_destroy(worker_);
    ucp_cleanup(context_);
    throw;
  }
}

UcxWorker::~UcxWorker() {
  CloseEndpoints();
  ucp_worker_destroy(worker_);
  ucp_cleanup(context_);
}

void UcxWorker::SetHandler(unsigned id, ucp_am_recv_callback_t callback, void* arg) {
  ucp_am_handler_param_t am{};
  am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                  UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  am.id = id;
  am.cb = callback;
  am.arg = arg;
  am.flags = UCP_AM_FLAG_WHOLE_MSG;
  CheckUcs(ucp_worker_set_am_recv_handler(worker_, &am), "ucp_worker_set_am_recv_handler");
}

void UcxWorker::Connect(Bootstrap& bootstrap, std::chrono::milliseconds timeout) {
  ucp_address_t* address = nullptr;
  size_t length = 0;
  CheckUcs(ucp_worker_get_address(worker_, &address, &length), "ucp_worker_get_address");
  const auto* bytes = reinterpret_cast<const uint8_t*>(address);
  Bootstrap::Bytes mine(bytes, bytes + length);
  ucp_worker_release_address(worker_, address);
  const std::vector<Bootstrap::Bytes> addresses = bootstrap.AllGather(mine, timeout);
  endpoints_.assign(addresses.size(), nullptr);
  for (size_t r = 0; r < addresses.size(); ++r) {
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep.address = reinterpret_cast<const ucp_address_t*>(addresses[r].data());
    CheckUcs(ucp_ep_create(worker_, &ep, &endpoints_[r]), "ucp_ep_create");
  }
}

void UcxWorker::CloseEndpoints() {
  std::vector<ucs_status_ptr_t> requests;
  for (ucp_ep_h ep : endpoints_) {
    if (ep == nullptr) continue;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t r = ucp_ep_close_nbx(ep, &param);
    if (r != nullptr && !UCS_PTR_IS_ERR(r)) requests.push_back(r);
  }
  for (ucs_status_ptr_t r : requests) {
    while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(worker_);
    ucp_request_free(r);
  }
  endpoints_.clear();
}

}  // namespace pacer
