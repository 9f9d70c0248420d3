// A plugin compiled with the pre-C++11 std::string ABI, as a toolchain that
// defaults to it (or a stray -D_GLIBCXX_USE_CXX11_ABI=0) builds one. Its
// std::string symbols are not the SDK's, so dlopen fails on an undefined
// symbol; the host must name both builds from the ELF note instead.
#undef _GLIBCXX_USE_CXX11_ABI
#define _GLIBCXX_USE_CXX11_ABI 0
#include "orchestrate/plugin.h"

namespace {
void register_components(orchestrate::Registry& registry) {
  registry.hooks().add("old_abi_tick", "a hook built with the old C++ ABI",
                       {orchestrate::int_param("every_n", 1, "updates between ticks").at_least(1)}, nullptr);
}
}  // namespace

ORCHESTRATE_PLUGIN("old_abi", "1.0.0", register_components)
