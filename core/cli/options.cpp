#include "cli/options.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "orchestrate/error.h"
#include "orchestrate/shell_word.h"
#include "store/run_store.h"

namespace orchestrate::cli {

namespace {

// An option for the commands' own use (`rerun` passing `--rerun-of` to
// `run`): parsed, never listed in help.
bool is_internal(const po::option_description& option) { return option.description().starts_with("internal:"); }

// The names the positional arguments fill, in order (an unbounded last one once).
std::vector<std::string> positional_names(const po::positional_options_description& positional) {
  std::vector<std::string> names;
  const unsigned count = std::min(positional.max_total_count(), 64u);
  for (unsigned i = 0; i < count; ++i) {
    const std::string& name = positional.name_for_position(i);
    if (names.empty() || names.back() != name) names.push_back(name);
  }
  return names;
}

// "recipe" -> "RECIPE", as the usage line names it.
std::string argument_name(std::string name) {
  for (char& c : name) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

// The help: usage, the positional arguments by their usage names, then the
// options, without the positional ones (shown as `--recipe arg` they read
// as options to type) and the internal ones.
void print_help(std::ostream& out, const std::string& command, const std::string& usage,
                const po::options_description& all, const po::positional_options_description& positional) {
  out << "usage: orchestrate " << command << " " << usage << "\n";
  const std::vector<std::string> positionals = positional_names(positional);
  if (!positionals.empty()) {
    out << "\narguments:\n";
    for (const std::string& name : positionals) {
      const po::option_description* option = all.find_nothrow(name, false);
      out << "  " << argument_name(name);
      if (option) out << std::string(std::max<std::size_t>(2, 22 - argument_name(name).size()), ' ') << option->description();
      out << "\n";
    }
  }
  po::options_description visible(command + " options");
  for (const auto& option : all.options())
    if (!is_internal(*option) &&
        std::find(positionals.begin(), positionals.end(), option->long_name()) == positionals.end())
      visible.add(option);
  out << "\n" << visible << "\n";
}

// The usage line where it is one line (an error is one line), else where to find it.
std::string usage_hint(const std::string& command, const std::string& usage) {
  if (usage.find('\n') == std::string::npos) return "usage: orchestrate " + command + " " + usage;
  return "see orchestrate " + command + " --help";
}

// What to say when there are more bare words than the command takes. The
// usual cause is a value given apart from its key, `--set optimizer.lr 0.01`:
// --set takes the key and the value stays a stray word.
std::string surplus_argument_problem(const std::vector<std::string>& arguments) {
  for (std::size_t i = 0; i + 2 < arguments.size(); ++i)
    if (arguments[i] == "--set" && arguments[i + 1].find('=') == std::string::npos)
      return "--set takes table.key=value: write --set " + arguments[i + 1] + "=" + arguments[i + 2];
  return "too many arguments";
}

}  // namespace

bool parse_options(const std::string& command, const std::string& usage, const po::options_description& options,
                   const po::positional_options_description& positional, const std::vector<std::string>& arguments,
                   po::variables_map& values) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(arguments).options(all).positional(positional).run(), values);
    if (values.count("help")) {
      print_help(std::cout, command, usage, all, positional);
      return false;
    }
    po::notify(values);
  } catch (const po::required_option& e) {
    // Boost names a missing positional argument as the option behind it
    // ("the option '--recipe' is required"), which the user never typed nor
    // saw in the usage line: name it as the usage line does.
    // Boost checks the required options in name order: a missing RECIPE is
    // named before a missing --checkpoint, as the usage line orders them.
    std::string name = e.get_option_name();
    name.erase(0, name.find_first_not_of('-'));
    for (const std::string& argument : positional_names(positional)) {
      const po::option_description* option = all.find_nothrow(argument, false);
      if (!values.count(argument) && option && option->semantic()->is_required()) {
        name = argument;
        break;
      }
    }
    const po::option_description* option = all.find_nothrow(name, false);
    const std::string what = option && !option->description().empty() ? ", " + option->description() : "";
    const std::vector<std::string> positionals = positional_names(positional);
    const bool is_positional = std::find(positionals.begin(), positionals.end(), name) != positionals.end();
    throw UsageError(command + ": missing " + (is_positional ? argument_name(name) : "--" + name) + what + " (" +
                     usage_hint(command, usage) + ")");
  } catch (const po::too_many_positional_options_error&) {
    throw UsageError(command + ": " + surplus_argument_problem(arguments) + " (" + usage_hint(command, usage) + ")");
  } catch (const po::unknown_option& e) {
    // `--max-steps 20` where a recipe key was meant: the commands that take
    // a recipe set its keys with --set, which the hint spells for this name.
    std::string name = e.get_option_name();
    name.erase(0, name.find_first_not_of('-'));
    std::replace(name.begin(), name.end(), '-', '_');
    const bool takes_set = all.find_nothrow("set", false) != nullptr;
    throw UsageError(command + ": " + e.what() +
                     (takes_set && !name.empty()
                          ? "; a recipe key is set with --set TABLE.KEY=VALUE, e.g. --set TABLE." + name +
                                "=VALUE (orchestrate describe recipe lists the tables)"
                          : " (see orchestrate " + command + " --help)"));
  } catch (const po::error& e) {
    throw UsageError(command + ": " + e.what() + " (see orchestrate " + command + " --help)");
  }
  return true;
}

std::vector<std::string> arguments_without(const std::vector<std::string>& arguments,
                                           const po::options_description& options,
                                           const po::positional_options_description& positional,
                                           const std::string& name) {
  // The parser's own reading of the tokens, so every spelling it accepts is
  // recognised the same way here.
  const auto parsed = po::command_line_parser(arguments).options(options).positional(positional).run();
  std::vector<std::string> kept;
  for (const auto& option : parsed.options)
    if (option.string_key != name)
      kept.insert(kept.end(), option.original_tokens.begin(), option.original_tokens.end());
  return kept;
}

void add_db_option(po::options_description& options) {
  options.add_options()("db", po::value<std::string>()->default_value(""),
                        (std::string("run store (SQLite file); default: $ORCHESTRATE_DB, then the recipe's [log] db, "
                                     "then ./") + RunStore::kDefaultFile).c_str());
}

std::string db_path(const po::variables_map& values, const std::string& recipe_db) {
  return RunStore::resolve_path(values["db"].as<std::string>(), recipe_db);
}

}  // namespace orchestrate::cli

namespace orchestrate::cli {

RunStore open_existing_store(const po::variables_map& values, StoreAccess access) {
  const std::string path = db_path(values);
  if (!std::filesystem::exists(path))
    throw UsageError(path + ": no run store here; give --db FILE or set $ORCHESTRATE_DB (runs are recorded by "
                            "orchestrate run)");
  return RunStore(path, access);
}

RunSummary find_run_or_throw(const RunStore& store, const std::string& id) {
  auto run = store.find_run(id);
  if (!run) throw UsageError("no run '" + id + "' in " + store.path() + "; `orchestrate runs` lists the runs");
  return *run;
}

void add_outcome_format_option(po::options_description& options, const std::string& command) {
  options.add_options()(
      "format", po::value<std::string>()->default_value("text")->notifier([command](const std::string& format) {
        if (format != "text" && format != "json")
          throw UsageError(command + ": --format " + format + ": use text (the default) or json");
      }),
      "text, or json: the outcome as one JSON object, last on stdout");
}

bool wants_json(const po::variables_map& values) { return values.count("format") && values["format"].as<std::string>() == "json"; }

std::string command_line_of(const std::string& command, const std::vector<std::string>& arguments) {
  std::string line = "orchestrate " + command;
  for (const std::string& argument : arguments) line += " " + shell_word(argument);
  return line;
}

}  // namespace orchestrate::cli
