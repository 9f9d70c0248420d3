// `orchestrate conformance`: hands over to orchestrate-conformance, installed
// beside the engine (core/conformance), which checks plugins against their
// kind's contract. A separate executable so the engine does not carry
// GoogleTest; the arguments and the environment (LibTorch's lookup included)
// pass through unchanged.
#include <unistd.h>

#include <boost/dll/runtime_symbol_info.hpp>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "cli/command.h"
#include "orchestrate/error.h"

namespace orchestrate::cli {

int conformance_command(const std::vector<std::string>& arguments) {
  const std::string checker = (boost::dll::program_location().parent_path() / "orchestrate-conformance").string();
  std::vector<std::string> words{checker};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  execv(checker.c_str(), argv.data());
  throw Error("conformance: cannot run " + checker + ": " + std::strerror(errno) +
              " (it is built and installed with the engine; rebuild or reinstall orchestrate)");
}

}  // namespace orchestrate::cli
