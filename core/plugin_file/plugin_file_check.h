// Checks that a file is a shared library this process can hand to dlopen.
//
// dlopen trusts the file: a truncated or damaged library is mapped as it
// stands and the loader crashes on it (SIGSEGV/SIGBUS) before it can report
// anything. These checks read the ELF headers and the dynamic section with
// libelf and refuse what would send the loader outside the file or outside
// the memory it maps. They catch damage (truncation, flipped bytes, a file of
// another kind or machine), not malice: a plugin is code the user chose to
// run, and a library crafted to pass can do anything once loaded.
//
// Free of LibTorch and of the rest of orchestrate, so the fuzz target
// `plugin_file` links only this and libelf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace orchestrate {

// What is wrong with the file, in one line without the path ("truncated:
// segment 2 (LOAD) ends at byte 81920, past the end of the file (40000
// bytes)"), or "" when dlopen may be given it. Reads the headers and the
// dynamic section, not the whole file.
std::string plugin_file_problem(const std::filesystem::path& path);

// The same check on a file's bytes (tests and the fuzz target).
std::string plugin_file_problem(const std::uint8_t* bytes, std::size_t size);

}  // namespace orchestrate
