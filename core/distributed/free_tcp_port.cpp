#include "distributed/free_tcp_port.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "orchestrate/error.h"

namespace orchestrate {

int pick_free_tcp_port(const std::string& host) {
  namespace ip = boost::asio::ip;
  boost::asio::io_context io;
  boost::system::error_code error;
  const auto endpoints = ip::tcp::resolver(io).resolve(host, "0", ip::tcp::resolver::numeric_service, error);
  if (error || endpoints.empty())
    throw Error("cannot resolve the master address '" + host + "': " + error.message() +
                "; give an address of this machine");
  for (const auto& entry : endpoints) {
    ip::tcp::acceptor acceptor(io);
    if (acceptor.open(entry.endpoint().protocol(), error) || acceptor.bind(entry.endpoint(), error)) continue;
    return acceptor.local_endpoint().port();
  }
  throw Error("cannot bind a TCP port on the master address '" + host + "': " + error.message() +
              "; give an address of this machine");
}

}  // namespace orchestrate
