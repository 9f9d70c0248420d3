#include "analysis/run_details_report.h"

namespace orchestrate {
namespace {

Section run_fields(const RunDetails& details) {
  const RunSummary& run = details.summary;
  const RunRecord& record = details.record;
  Section section{"run", {{"field", "value"}, {}}, true, ""};
  auto field = [&](const std::string& name, Cell value) { section.table.rows.push_back({text_cell(name), std::move(value)}); };
  // A fact that was not recorded (older rows, a run still going) is null, not "".
  auto text_or_null = [](const std::string& text) { return text.empty() ? Cell() : text_cell(text); };
  field("id", integer_cell(run.id));
  field("name", text_cell(run.name));
  field("kind", text_cell(run.kind));
  field("source_run", run.source_run_id != 0 ? integer_cell(run.source_run_id) : Cell());
  field("status", text_cell(run.status));
  // Times as `runs` prints them for people; ISO-8601 UTC for programs.
  field("started", time_cell(run.started_at));
  field("ended", time_cell(run.ended_at));
  field("duration_s", number_cell(run.duration_s, 1));
  field("last_seen", time_cell(run.last_seen_at));
  field("resumed", integer_cell(run.resumed_count));
  field("command_line", text_or_null(details.command_line));
  field("recipe", text_or_null(record.recipe_path));
  field("git_revision", text_or_null(record.git_revision));
  field("orchestrate", text_or_null(record.orchestrate_version));
  field("libtorch", text_or_null(record.torch_version));
  field("host", text_or_null(record.host));
  field("pid", run.pid != 0 ? integer_cell(run.pid) : Cell());
  field("device", text_or_null(record.device));
  field("world_size", integer_cell(record.world_size));
  field("tags", object_cell({run.tags.begin(), run.tags.end()}));
  field("error", text_or_null(run.error));
  return section;
}

Section metrics(const RunDetails& details) {
  Section section{"metrics", {{"metric", "final", "min", "max"}, {}}, false, ""};
  for (const auto& [name, final_value] : details.summary.final_metrics) {
    const auto extremes = details.metric_extremes.find(name);
    const bool known = extremes != details.metric_extremes.end();
    section.table.rows.push_back({text_cell(name), metric_cell(final_value),
                                  known ? metric_cell(extremes->second.min) : Cell(),
                                  known ? metric_cell(extremes->second.max) : Cell()});
  }
  return section;
}

Section plugins(const RunRecord& record) {
  Section section{"plugins", {{"name", "version", "sha256", "library"}, {}}, false, ""};
  for (const PluginRecord& plugin : record.plugins) {
    section.table.rows.push_back({text_cell(plugin.name), text_cell(plugin.version),
                                  plugin.sha256.empty() ? Cell() : text_cell(plugin.sha256),
                                  text_cell(plugin.library_path)});
  }
  return section;
}

Section event_rows(const std::vector<EventRecord>& events) {
  Section section{"events", {{"time", "kind", "message"}, {}}, false, ""};
  for (const EventRecord& event : events)
    section.table.rows.push_back({time_cell(event.time), text_cell(event.kind), text_cell(event.message)});
  return section;
}

}  // namespace

std::vector<Section> run_details_sections(const RunDetails& details, const std::vector<EventRecord>& events) {
  return {run_fields(details), metrics(details), plugins(details.record), event_rows(events),
          Section{"resolved recipe", {}, false, details.record.resolved_recipe}};
}

}  // namespace orchestrate
