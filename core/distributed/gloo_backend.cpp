// Compiled with USE_C10D_GLOO and Debian's libgloo-dev headers: the wheel
// exports ProcessGroupGloo but ships no gloo headers. Only gloo types held by
// pointer are touched here (the device), so the headers' version need not
// match the gloo compiled into libtorch; tests/distributed proves it with
// multi-process all-reduce, all-gather and broadcast. Debian's libgloo itself
// is never linked.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <cstdlib>

#include "distributed/process_group_backends.h"

namespace orchestrate {

namespace {

bool is_loopback(const std::string& address) {
  return address == "localhost" || address.rfind("127.", 0) == 0 || address == "::1";
}

}  // namespace

c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                    std::chrono::milliseconds timeout, const std::string& master_addr) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface)
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
  else if (is_loopback(master_addr))
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  else
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
}

}  // namespace orchestrate
