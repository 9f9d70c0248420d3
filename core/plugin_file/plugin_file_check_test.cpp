// plugin_file_check on real libraries: a sample built with the project, the
// built plugins, and copies of them truncated, overwritten and bit-flipped.
#include "plugin_file/plugin_file_check.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "orchestrate/testing/scratch_dir.h"
#include "plugin_file/plugin_build_note.h"

namespace orchestrate {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;
using Bytes = std::vector<std::uint8_t>;

Bytes read_bytes(const std::string& path) {
  const std::string text = testing::file_bytes(path);
  return Bytes(text.begin(), text.end());
}

std::string problem(const Bytes& bytes) { return plugin_file_problem(bytes.data(), bytes.size()); }

// The sample's headers, read directly: the test knows where to damage it.
template <typename T>
T& at(Bytes& bytes, std::uint64_t offset) {
  return *reinterpret_cast<T*>(bytes.data() + offset);
}
ElfW(Ehdr)& header(Bytes& bytes) { return at<ElfW(Ehdr)>(bytes, 0); }
ElfW(Phdr)& segment(Bytes& bytes, int i) {
  return at<ElfW(Phdr)>(bytes, header(bytes).e_phoff + i * sizeof(ElfW(Phdr)));
}
int segment_index(Bytes& bytes, std::uint32_t type) {
  for (int i = 0; i < header(bytes).e_phnum; ++i)
    if (segment(bytes, i).p_type == type) return i;
  return -1;
}
ElfW(Dyn)* dynamic_entry(Bytes& bytes, std::int64_t tag) {
  const auto& dynamic = segment(bytes, segment_index(bytes, PT_DYNAMIC));
  for (std::uint64_t offset = dynamic.p_offset; offset < dynamic.p_offset + dynamic.p_filesz; offset += sizeof(ElfW(Dyn)))
    if (at<ElfW(Dyn)>(bytes, offset).d_tag == tag) return &at<ElfW(Dyn)>(bytes, offset);
  return nullptr;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

class PluginFileCheck : public ::testing::Test {
 protected:
  Bytes sample = read_bytes(SAMPLE_LIBRARY);
};

TEST_F(PluginFileCheck, AcceptsTheSampleLibraryByPathAndByBytes) {
  ASSERT_GT(sample.size(), 1000u);
  EXPECT_EQ(plugin_file_problem(fs::path(SAMPLE_LIBRARY)), "");
  EXPECT_EQ(problem(sample), "");
}

TEST_F(PluginFileCheck, AcceptsEveryBuiltPlugin) {
  int checked = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(ORCHESTRATE_TEST_PLUGIN_DIR, ec)) {
    if (entry.path().extension() != ".so") continue;
    EXPECT_EQ(plugin_file_problem(entry.path()), "") << entry.path();
    ++checked;
  }
  // The build makes the plugins before this test (add_dependencies): none
  // found means a broken build, not a reason to pass.
  EXPECT_GT(checked, 0) << "no plugins built in " << ORCHESTRATE_TEST_PLUGIN_DIR;
}

TEST_F(PluginFileCheck, RefusesTheLibraryTruncatedAnywhere) {
  auto cut = [&](std::size_t size) { return problem(Bytes(sample.begin(), sample.begin() + size)); };
  const auto& h = header(sample);
  EXPECT_EQ(cut(0), "an empty file");
  EXPECT_EQ(cut(3), "not an ELF file (no valid ELF identification bytes)");
  for (std::size_t size : {std::size_t{EI_NIDENT}, sizeof(ElfW(Ehdr)) - 1})
    EXPECT_TRUE(starts_with(cut(size), "truncated or damaged: libelf cannot read the ELF header (")) << cut(size);

  const std::uint64_t program_headers = h.e_phnum * sizeof(ElfW(Phdr));
  EXPECT_EQ(cut(h.e_phoff + program_headers - 1),
            "truncated or damaged: the program header table (" + std::to_string(program_headers) +
                " bytes at offset " + std::to_string(h.e_phoff) + ") ends past the end of the file (" +
                std::to_string(h.e_phoff + program_headers - 1) + " bytes)");

  int last_load = -1;
  for (int i = 0; i < h.e_phnum; ++i)
    if (segment(sample, i).p_type == PT_LOAD) last_load = i;
  const auto& load = segment(sample, last_load);
  const std::size_t inside_load = load.p_offset + load.p_filesz / 2;
  EXPECT_EQ(cut(inside_load), "truncated or damaged: segment " + std::to_string(last_load) + " (LOAD) (" +
                                  std::to_string(load.p_filesz) + " bytes at offset " +
                                  std::to_string(load.p_offset) + ") ends past the end of the file (" +
                                  std::to_string(inside_load) + " bytes)");

  // The section headers come last: one byte short loses them.
  ASSERT_EQ(h.e_shoff + h.e_shnum * sizeof(ElfW(Shdr)), sample.size());
  EXPECT_EQ(cut(sample.size() - 1), "truncated or damaged: the section header table (" +
                                        std::to_string(h.e_shnum * sizeof(ElfW(Shdr))) + " bytes at offset " +
                                        std::to_string(h.e_shoff) + ") ends past the end of the file (" +
                                        std::to_string(sample.size() - 1) + " bytes)");
  // Every length short of the whole: refused, never accepted.
  for (std::size_t size = 1; size < sample.size(); size += 61) EXPECT_NE(cut(size), "") << size;
}

TEST_F(PluginFileCheck, RefusesATruncatedFileByPath) {
  ScratchDir dir;
  const std::string path = dir.file("libtruncated.so");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(sample.data()), 1000);
  EXPECT_TRUE(starts_with(plugin_file_problem(fs::path(path)), "truncated or damaged: "))
      << plugin_file_problem(fs::path(path));
  EXPECT_TRUE(starts_with(plugin_file_problem(dir.path() / "absent.so"), "cannot open it ("));
  EXPECT_EQ(plugin_file_problem(dir.path()), "not a regular file");
}

TEST_F(PluginFileCheck, RefusesRandomBytes) {
  std::mt19937 random(22);
  Bytes noise(sample.size());
  for (auto& byte : noise) byte = static_cast<std::uint8_t>(random());
  EXPECT_EQ(problem(noise), "not an ELF file (no valid ELF identification bytes)");
  // Random bytes behind a valid identification still fail on the headers.
  std::memcpy(noise.data(), sample.data(), EI_NIDENT);
  EXPECT_NE(problem(noise), "");
}

TEST_F(PluginFileCheck, RefusesAnotherClassTypeOrMachine) {
  Bytes other = sample;
  other[EI_CLASS] = ELFCLASS32;
  EXPECT_EQ(problem(other), "a 32-bit ELF file; this orchestrate loads 64-bit libraries");

  other = sample;
  header(other).e_type = ET_EXEC;
  EXPECT_EQ(problem(other), "an executable, not a shared library");
  header(other).e_type = ET_REL;
  EXPECT_EQ(problem(other), "an object file (.o), not a shared library");

  other = sample;
  const bool on_x86 = header(sample).e_machine == EM_X86_64;
  header(other).e_machine = on_x86 ? EM_AARCH64 : EM_X86_64;
  EXPECT_EQ(problem(other), on_x86 ? "built for AArch64, but this orchestrate runs on x86-64"
                                   : "built for x86-64, but this orchestrate runs on AArch64");
}

TEST_F(PluginFileCheck, RefusesFlippedProgramHeaders) {
  Bytes flipped = sample;
  const int load = segment_index(flipped, PT_LOAD);
  segment(flipped, load).p_offset ^= 0xff00000000ull;
  EXPECT_TRUE(starts_with(problem(flipped), "truncated or damaged: segment " + std::to_string(load) + " (LOAD) ("))
      << problem(flipped);

  flipped = sample;
  const int dynamic = segment_index(flipped, PT_DYNAMIC);
  segment(flipped, dynamic).p_type ^= 0xff;
  EXPECT_EQ(problem(flipped), "no dynamic section (PT_DYNAMIC), so not a shared library");

  flipped = sample;
  segment(flipped, dynamic).p_vaddr ^= 0xff000000ull;
  EXPECT_EQ(problem(flipped), "segment " + std::to_string(dynamic) + " (DYNAMIC) at address " +
                                  std::to_string(segment(flipped, dynamic).p_vaddr) +
                                  " lies outside the loadable segments");
}

// The loader protects the RELRO region by whole pages within the mapped
// pages of its segment: lld pads the region's end to the next page boundary,
// past the segment's last byte, and such a library loads. A region reaching
// a page past the segment's mapping would make memory it does not own read-only.
TEST_F(PluginFileCheck, TheRelroRegionMayEndAnywhereInItsSegmentsLastPage) {
  const int relro = segment_index(sample, PT_GNU_RELRO);
  ASSERT_GE(relro, 0) << "the sample library has no RELRO segment";
  const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t start = segment(sample, relro).p_vaddr;
  const ElfW(Phdr)* holder = nullptr;
  for (int i = 0; i < header(sample).e_phnum; ++i) {
    const ElfW(Phdr)& s = segment(sample, i);
    if (s.p_type == PT_LOAD && start >= s.p_vaddr && start < s.p_vaddr + s.p_memsz) holder = &s;
  }
  ASSERT_NE(holder, nullptr);
  const std::uint64_t mapped_end = (holder->p_vaddr + holder->p_memsz + page - 1) / page * page;

  Bytes padded = sample;
  segment(padded, relro).p_memsz = mapped_end - start;  // what lld writes
  EXPECT_EQ(problem(padded), "");

  Bytes too_long = sample;
  segment(too_long, relro).p_memsz = mapped_end + page - start;
  EXPECT_EQ(problem(too_long), "segment " + std::to_string(relro) + " (GNU_RELRO) at address " +
                                   std::to_string(start) + " lies outside the loadable segments");
}

TEST_F(PluginFileCheck, RefusesAFlippedDynamicSection) {
  Bytes flipped = sample;
  ElfW(Dyn)* strings = dynamic_entry(flipped, DT_STRTAB);
  ASSERT_NE(strings, nullptr);
  strings->d_un.d_ptr ^= 0xff000000ull;
  EXPECT_TRUE(starts_with(problem(flipped), "the dynamic section's DT_STRTAB (")) << problem(flipped);

  flipped = sample;
  ElfW(Dyn)* needed = dynamic_entry(flipped, DT_NEEDED);
  ASSERT_NE(needed, nullptr);
  needed->d_un.d_val ^= 0xff0000ull;
  EXPECT_TRUE(starts_with(problem(flipped), "the dynamic section's DT_NEEDED (offset ")) << problem(flipped);

  flipped = sample;
  ElfW(Dyn)* end = dynamic_entry(flipped, DT_NULL);
  ASSERT_NE(end, nullptr);
  const auto& dynamic = segment(flipped, segment_index(flipped, PT_DYNAMIC));
  for (auto* entry = end; reinterpret_cast<std::uint8_t*>(entry) < flipped.data() + dynamic.p_offset + dynamic.p_filesz; ++entry)
    entry->d_tag = DT_DEBUG;  // the end marker and the spare entries after it
  EXPECT_EQ(problem(flipped), "the dynamic section has no DT_NULL entry to end it");
}

// What the check exists for: any one damaged byte in the parts the loader
// reads first is either refused or loads without a signal. Each accepted
// copy is loaded in a child process, so a crash fails the test, not the run.
// Except the addresses of the DT_INIT and DT_FINI functions: one moved
// within the code is as undetectable as a damaged byte of the code itself.
TEST_F(PluginFileCheck, EveryByteFlipInTheHeadersIsRefusedOrLoadsWithoutASignal) {
  ScratchDir dir;
  const std::string copy = dir.file("libflipped.so");
  const auto& h = header(sample);
  const auto& dynamic = segment(sample, segment_index(sample, PT_DYNAMIC));
  std::vector<std::pair<std::uint64_t, std::uint64_t>> regions{
      {0, sizeof(ElfW(Ehdr))}, {h.e_phoff, h.e_phnum * sizeof(ElfW(Phdr))}, {dynamic.p_offset, dynamic.p_filesz}};
  std::vector<std::uint64_t> code_addresses;
  for (std::int64_t tag : {DT_INIT, DT_FINI})
    if (ElfW(Dyn)* entry = dynamic_entry(sample, tag))
      code_addresses.push_back(reinterpret_cast<std::uint8_t*>(&entry->d_un) - sample.data());
  auto is_code_address = [&](std::uint64_t offset) {
    for (std::uint64_t begin : code_addresses)
      if (offset >= begin && offset < begin + sizeof(ElfW(Addr))) return true;
    return false;
  };
  int accepted = 0, refused = 0;
  for (const auto& [begin, size] : regions) {
    for (std::uint64_t offset = begin; offset < begin + size; ++offset) {
      if (is_code_address(offset)) continue;
      Bytes flipped = sample;
      flipped[offset] ^= 0xff;
      if (!problem(flipped).empty()) {
        ++refused;
        continue;
      }
      ++accepted;
      std::ofstream(copy, std::ios::binary | std::ios::trunc)
          .write(reinterpret_cast<const char*>(flipped.data()), static_cast<std::streamsize>(flipped.size()));
      const pid_t child = fork();
      if (child == 0) {
        freopen("/dev/null", "w", stderr);  // the loader's own complaints about what it refuses
        dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
        _exit(0);
      }
      int status = 0;
      waitpid(child, &status, 0);
      EXPECT_FALSE(WIFSIGNALED(status)) << "byte " << offset << " flipped: accepted, and dlopen died of signal "
                                        << WTERMSIG(status);
    }
  }
  EXPECT_GT(refused, 0);
  std::cout << refused << " flips refused, " << accepted << " accepted and loaded\n";
}

// The build note ORCHESTRATE_PLUGIN embeds, read before dlopen
// (plugin_build_note.h): the sample's hand-written one, and every built plugin's.
TEST_F(PluginFileCheck, ReadsTheBuildNoteOfTheSampleAndOfEveryBuiltPlugin) {
  for (const auto& note : {plugin_build_note(fs::path(SAMPLE_LIBRARY)), plugin_build_note(sample.data(), sample.size())}) {
    ASSERT_TRUE(note.has_value());
    EXPECT_EQ(note->api_version, 5u);
    EXPECT_EQ(note->cxx11_abi, 0u);
    EXPECT_EQ(note->torch_version, "2.0.0");
    EXPECT_EQ(note->compiler, "GCC 1.2.3");
  }
  // The plugins: liborchestrate_*.so (the sanitizer build puts only the
  // sample there, which is checked above).
  int read = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(ORCHESTRATE_TEST_PLUGIN_DIR, ec)) {
    if (entry.path().extension() != ".so" || !starts_with(entry.path().filename().string(), "liborchestrate_")) continue;
    const auto note = plugin_build_note(entry.path());
    ASSERT_TRUE(note.has_value()) << entry.path();
    EXPECT_GT(note->api_version, 0u) << entry.path();
    EXPECT_EQ(note->cxx11_abi, 1u) << entry.path();
    EXPECT_FALSE(note->torch_version.empty()) << entry.path();
    EXPECT_TRUE(starts_with(note->compiler, "GCC ")) << entry.path();
    ++read;
  }
  if (fs::path(SAMPLE_LIBRARY).parent_path() != fs::path(ORCHESTRATE_TEST_PLUGIN_DIR))
    EXPECT_GT(read, 0) << "no plugins built in " << ORCHESTRATE_TEST_PLUGIN_DIR;
}

// A note whose sizes or strings are wrong is no note (the host then falls
// back to the descriptor); no read goes past the bytes it was given.
TEST_F(PluginFileCheck, ADamagedBuildNoteIsNoNote) {
  const std::string owner = "orchestrate";
  const auto found = std::search(sample.begin(), sample.end(), owner.begin(), owner.end());
  ASSERT_NE(found, sample.end());
  const std::size_t owner_at = static_cast<std::size_t>(found - sample.begin());
  const std::size_t desc_size_at = owner_at - 8;  // n_namesz, n_descsz, n_type, then the owner
  auto read = [](const Bytes& bytes) { return plugin_build_note(bytes.data(), bytes.size()); };
  Bytes damaged = sample;
  at<std::uint32_t>(damaged, desc_size_at) = 0xfffffff0u;  // past the section
  EXPECT_FALSE(read(damaged).has_value());
  damaged = sample;
  at<std::uint32_t>(damaged, desc_size_at) = 7;  // shorter than the two numbers
  EXPECT_FALSE(read(damaged).has_value());
  damaged = sample;
  for (std::size_t i = owner_at + 12 + 8; i < owner_at + 12 + 8 + 16; ++i) damaged[i] = 'x';  // no NUL in the text
  EXPECT_FALSE(read(damaged).has_value());
  damaged = sample;
  damaged[owner_at] = 'O';  // another owner's note
  EXPECT_FALSE(read(damaged).has_value());
  for (std::size_t size = 1; size < sample.size(); size += 37) read(Bytes(sample.begin(), sample.begin() + size));
}

}  // namespace
}  // namespace orchestrate
