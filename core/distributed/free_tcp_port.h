// A TCP port that is free on a host of this machine, for a rendezvous that
// rank 0 will listen on a moment later (torchrun's --master_port 0 does the same).
#pragma once

#include <string>

namespace orchestrate {

// Binds port 0 on `host` (an address or a name of this machine), reads the
// port the kernel chose and releases it. Another process may take it before
// rank 0 binds it; the window is milliseconds. A host that does not resolve or
// is not this machine's is an Error naming it.
int pick_free_tcp_port(const std::string& host);

}  // namespace orchestrate
