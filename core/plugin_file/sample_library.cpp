// A shared library with the parts a plugin has (a string table, symbols,
// relocations, a constructor), for plugin_file_check_test to damage.
#include <cstdlib>
#include <string>

namespace {
std::string greeting = std::getenv("HOME") ? "hello" : "hi";  // a constructor, so INIT_ARRAY is there
}  // namespace

extern "C" __attribute__((visibility("default"))) const char* sample_greeting() { return greeting.c_str(); }

// A build note laid out as ORCHESTRATE_PLUGIN writes it (orchestrate/plugin.h),
// for plugin_build_note's tests and the fuzz corpus.
__attribute__((section(".note.orchestrate"), used, aligned(4))) static const struct {
  unsigned owner_size, desc_size, type;
  char owner[12];
  unsigned api_version, cxx11_abi;
  char text[16];
} sample_build_note{12, 8 + sizeof("2.0.0\0GCC 1.2.3"), 1, "orchestrate", 5, 0, "2.0.0\0GCC 1.2.3"};
