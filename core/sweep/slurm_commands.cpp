#include "sweep/slurm_commands.h"

#include <boost/asio/io_context.hpp>
#include <boost/process.hpp>

#include <future>
#include <sstream>

#include "orchestrate/error.h"

namespace bp = boost::process;

namespace orchestrate::sweep {

CommandOutput run_slurm_command(const std::string& command, const std::vector<std::string>& arguments) {
  const auto program = bp::search_path(command);
  if (program.empty())
    throw Error(command + " is not on PATH: a sweep with executor = \"slurm\" runs where Slurm's commands are "
                "(on Debian: apt-get install slurm-client)");
  // Both pipes read at once, as the command writes them: reading one to its
  // end first could leave the command blocked on a full other.
  boost::asio::io_context io;
  std::future<std::string> out, err;
  bp::child child(program, bp::args = arguments, bp::std_in < bp::null, bp::std_out > out, bp::std_err > err, io);
  io.run();
  child.wait();
  return {child.exit_code(), out.get(), err.get()};
}

std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

}  // namespace orchestrate::sweep
