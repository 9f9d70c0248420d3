#include "plugin_file/elf_identity_check.h"

#include <link.h>

namespace orchestrate::plugin_file {
namespace {

// The ELF header of the binary this code is linked into, which the linker
// places in memory: the class, byte order and machine it gives are those of
// the running build, so no table of architectures is kept here.
extern "C" const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

std::string machine_name(unsigned machine) {
  switch (machine) {
    case EM_X86_64: return "x86-64";
    case EM_386: return "i386";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_PPC64: return "PowerPC64";
    case EM_RISCV: return "RISC-V";
    case EM_S390: return "s390";
  }
  return "machine " + std::to_string(machine);
}

std::string class_name(unsigned char elf_class) {
  return elf_class == ELFCLASS32 ? "32-bit" : elf_class == ELFCLASS64 ? "64-bit" : "class " + std::to_string(elf_class);
}

std::string type_problem(unsigned type) {
  switch (type) {
    case ET_DYN: return "";
    case ET_EXEC: return "an executable, not a shared library";
    case ET_REL: return "an object file (.o), not a shared library";
    case ET_CORE: return "a core dump, not a shared library";
  }
  return "ELF type " + std::to_string(type) + ", not a shared library";
}

}  // namespace

std::string check_identity(ElfImage& image) {
  switch (elf_kind(image.elf)) {
    case ELF_K_ELF: break;
    case ELF_K_AR: return "an ar archive (a static library), not a shared library";
    default: return "not an ELF file (no valid ELF identification bytes)";
  }
  const char* ident = elf_getident(image.elf, nullptr);
  if (ident == nullptr) return "not an ELF file (header cut short)";
  const ElfW(Ehdr)& own = __ehdr_start;
  if (static_cast<unsigned char>(ident[EI_CLASS]) != own.e_ident[EI_CLASS])
    return "a " + class_name(ident[EI_CLASS]) + " ELF file; this orchestrate loads " +
           class_name(own.e_ident[EI_CLASS]) + " libraries";
  if (static_cast<unsigned char>(ident[EI_DATA]) != own.e_ident[EI_DATA])
    return "ELF data in the other byte order than this machine's";
  if (gelf_getehdr(image.elf, &image.header) == nullptr)
    return std::string("unreadable ELF header (") + elf_errmsg(-1) + ")";
  if (image.header.e_version != EV_CURRENT) return "unknown ELF version " + std::to_string(image.header.e_version);
  if (auto problem = type_problem(image.header.e_type); !problem.empty()) return problem;
  if (image.header.e_machine != own.e_machine)
    return "built for " + machine_name(image.header.e_machine) + ", but this orchestrate runs on " +
           machine_name(own.e_machine);
  return "";
}

}  // namespace orchestrate::plugin_file
