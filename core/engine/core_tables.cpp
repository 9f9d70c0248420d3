#include "core_tables.h"

namespace orchestrate {

ParamSchema run_table_schema() {
  return {
      string_param("name", "", "run name shown in `orchestrate runs`; empty: the recipe file's name"),
      int_param("seed", 42, "fixes data order, augmentation and weight init").at_least(0),
      string_param("device", "auto", "auto (CUDA when available), cpu or cuda").one_of({"auto", "cpu", "cuda"}),
      int_param("epochs", 1, "passes over the training split").at_least(0),
      int_param("max_steps", 0, "stop after this many steps; 0: run all epochs").at_least(0),
      int_param("batch_size", 64, "images per training step").at_least(1),
      int_param("num_workers", 2, "data pipeline threads; 0 loads batches on the training thread").between(0, 64),
      int_param("prefetch_batches", 4, "batches prepared ahead of the training step").between(1, 1024),
      int_param("log_every", 50, "record the training loss and refresh progress every N steps").at_least(1),
      int_param("threads", 0, "intra-op CPU threads for LibTorch; 0: LibTorch's default").between(0, 1024),
  };
}

ParamSchema eval_table_schema() {
  return {
      bool_param("enabled", true, "evaluate on the test split"),
      int_param("every_epochs", 1, "evaluate after every N epochs (and always at the end); 0: only at the end")
          .at_least(0),
      int_param("batch_size", 1000, "images per evaluation batch").at_least(1),
  };
}

ParamSchema log_table_schema() {
  return {
      string_param("db", "", "SQLite run store; empty: --db, then $ORCHESTRATE_DB, then ./orchestrate.db"),
      string_param("progress", "auto", "progress line: auto (redrawn on a terminal, one line per log_every otherwise), "
                                       "always or never")
          .one_of({"auto", "always", "never"}),
  };
}

const std::vector<ComponentTable>& component_tables() {
  static const std::vector<ComponentTable> tables{
      {"data", ComponentKind::dataset, nullptr},
      {"model", ComponentKind::model, nullptr},
      {"optimizer", ComponentKind::optimizer, nullptr},
      {"schedule", ComponentKind::lr_schedule, "fixed"},
  };
  return tables;
}

const std::vector<std::string>& known_tables() {
  static const std::vector<std::string> tables{"run", "data", "model", "optimizer", "schedule", "eval", "log"};
  return tables;
}

}  // namespace orchestrate
