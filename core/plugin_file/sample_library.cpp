// A shared library with the parts a plugin has (a string table, symbols,
// relocations, a constructor), for plugin_file_check_test to damage.
#include <cstdlib>
#include <string>

namespace {
std::string greeting = std::getenv("HOME") ? "hello" : "hi";  // a constructor, so INIT_ARRAY is there
}  // namespace

extern "C" __attribute__((visibility("default"))) const char* sample_greeting() { return greeting.c_str(); }
