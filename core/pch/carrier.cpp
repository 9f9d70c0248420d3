// The one source of each precompiled-header target (core/pch/CMakeLists.txt):
// CMake builds a target's PCH only with a source to compile; this one is empty.
