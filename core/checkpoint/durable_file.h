// Files that survive a crash: written in full and flushed to the disk before
// anyone can see them under their final name.
//
// POSIX gives atomic rename but not durable writes: without fsync a power cut
// can leave a renamed file empty, and without an fsync of the directory the
// rename itself can be lost. No Debian library wraps this sequence for
// directories, so it is written here, in one place.
#pragma once

#include <string>
#include <string_view>

namespace orchestrate {

// Writes `bytes` to `path` (created or truncated) and fsyncs it.
void write_file_durably(const std::string& path, std::string_view bytes);

// fsyncs a directory, so the entries created or renamed in it are on disk.
void sync_directory(const std::string& path);

// Makes the fully written directory `staged` visible as `final_path` in one
// step: a crash leaves either the old `final_path` (or none) or the new one,
// never a mix. An existing `final_path` is replaced. Both must be in the same
// parent directory, which is fsynced afterwards.
void publish_directory(const std::string& staged, const std::string& final_path);

// Throws an Error naming `directory` and how to fix it unless a file can be
// created, written and removed there; creates the directory if missing.
void require_writable_directory(const std::string& directory, const std::string& what);

}  // namespace orchestrate
