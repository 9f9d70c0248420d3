-- Schema of the orchestrate run store (SQLite).
--
-- Embedded into the orchestrate_store library at build time, so the binary
-- needs no share/ directory at run time.
--
-- The file is a list of migrations. Each starts with a line
-- "-- migration: N" (N = 1, 2, 3, ... with no gaps) and is applied once, in
-- one transaction, to a database whose PRAGMA user_version is below N; the
-- store then sets user_version = N. Never edit a released migration: append a
-- new one, so existing databases are upgraded in place.

-- migration: 1

CREATE TABLE runs (
  id                  INTEGER PRIMARY KEY,
  name                TEXT    NOT NULL,
  status              TEXT    NOT NULL
                      CHECK (status IN ('running', 'finished', 'failed', 'interrupted')),
  recipe_path         TEXT    NOT NULL DEFAULT '',
  resolved_recipe     TEXT    NOT NULL DEFAULT '',  -- TOML, defaults filled in
  orchestrate_version TEXT    NOT NULL DEFAULT '',
  torch_version       TEXT    NOT NULL DEFAULT '',
  host                TEXT    NOT NULL DEFAULT '',
  device              TEXT    NOT NULL DEFAULT '',
  world_size          INTEGER NOT NULL DEFAULT 1,
  git_revision        TEXT    NOT NULL DEFAULT '',  -- of the recipe's directory; '' if none
  started_at          TEXT    NOT NULL,             -- ISO-8601 UTC with milliseconds
  ended_at            TEXT,                         -- NULL while running
  error               TEXT    NOT NULL DEFAULT ''
);
-- find_run by name picks the newest run with that name.
CREATE INDEX runs_by_name ON runs (name, id);

CREATE TABLE run_plugins (
  run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  name         TEXT    NOT NULL,
  version      TEXT    NOT NULL,
  library_path TEXT    NOT NULL,
  sha256       TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX run_plugins_by_run ON run_plugins (run_id);

-- The resolved recipe flattened to dotted keys ("optimizer.lr"), so runs can
-- be compared and filtered by parameter in SQL.
CREATE TABLE run_params (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  key    TEXT    NOT NULL,
  value  TEXT    NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

CREATE TABLE metrics (
  id          INTEGER PRIMARY KEY,  -- orders two values recorded at the same step
  run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step        INTEGER NOT NULL,
  epoch       INTEGER NOT NULL,
  name        TEXT    NOT NULL,
  value       REAL,                 -- NULL stands for NaN (SQLite stores no NaN)
  recorded_at TEXT    NOT NULL
);
-- Serves "last value of each metric of a run" and per-metric curves.
CREATE INDEX metrics_by_run ON metrics (run_id, name, step);

CREATE TABLE step_timings (  -- a REAL that is NULL stands for NaN (SQLite stores no NaN)
  run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step          INTEGER NOT NULL,
  epoch         INTEGER NOT NULL,
  images        INTEGER NOT NULL,
  data_wait_s   REAL,
  compute_s     REAL,  -- forward + backward
  sync_s        REAL,  -- gradient synchronisation
  optimizer_s   REAL,
  total_s       REAL,
  loss          REAL,
  learning_rate REAL
);
CREATE INDEX step_timings_by_run ON step_timings (run_id, step);

CREATE TABLE events (
  id      INTEGER PRIMARY KEY,
  run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  time    TEXT    NOT NULL,
  kind    TEXT    NOT NULL,
  message TEXT    NOT NULL
);
CREATE INDEX events_by_run ON events (run_id);

-- migration: 2
-- Checkpoints, resume and crash detection.

-- Who is writing a running run and when it was last heard from. A run whose
-- status says 'running' but whose process is gone (same host, pid not alive)
-- or whose heartbeat is stale is reported as "lost" by every read; "lost" is
-- derived, never stored, so the status CHECK of migration 1 stays as it is.
ALTER TABLE runs ADD COLUMN pid           INTEGER NOT NULL DEFAULT 0;  -- 0: unknown (rows older than migration 2)
ALTER TABLE runs ADD COLUMN heartbeat_at  TEXT;                        -- ISO-8601 UTC with milliseconds; NULL: never
ALTER TABLE runs ADD COLUMN resumed_count INTEGER NOT NULL DEFAULT 0;  -- times the run was resumed from a checkpoint

CREATE TABLE checkpoints (
  id         INTEGER PRIMARY KEY,  -- orders two checkpoints of the same step
  run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step       INTEGER NOT NULL,
  epoch      INTEGER NOT NULL,
  path       TEXT    NOT NULL,
  bytes      INTEGER NOT NULL DEFAULT 0,
  created_at TEXT    NOT NULL,                -- ISO-8601 UTC with milliseconds
  metrics    TEXT    NOT NULL DEFAULT '{}',   -- JSON object: metric name -> number (null for NaN)
  reason     TEXT    NOT NULL DEFAULT ''      -- interval, epoch, time, end or signal; no CHECK, so a new
                                              -- reason needs no migration
);
-- Serves "checkpoints of a run, oldest first" and resume's "steps after N".
CREATE INDEX checkpoints_by_run ON checkpoints (run_id, step);

-- What transfer learning did with each tensor: loaded, excluded, frozen,
-- missing, unexpected or mismatched (checked by the store, not by a CHECK,
-- for the same reason as checkpoints.reason).
CREATE TABLE run_tensors (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  name   TEXT    NOT NULL,
  shape  TEXT    NOT NULL DEFAULT '',  -- e.g. "[64, 3, 7, 7]"
  action TEXT    NOT NULL,
  detail TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX run_tensors_by_run ON run_tensors (run_id);

-- migration: 3
-- Runs made from other runs. `orchestrate eval` records the evaluation of a
-- checkpoint as a run of kind 'eval' whose source is the run that saved the
-- checkpoint; a rerun will record its source the same way.

-- 'train' or 'eval'. No CHECK: the store writes only the kinds it knows, and
-- a new kind then needs no migration. Rows older than migration 3 trained.
ALTER TABLE runs ADD COLUMN kind          TEXT    NOT NULL DEFAULT 'train';
-- The run this one derives from; NULL: none (a training run, or the eval of a
-- bare weights file). Deleting the source keeps the derived run, unlinked.
ALTER TABLE runs ADD COLUMN source_run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL;
-- Serves "the runs made from run N", and keeps ON DELETE SET NULL from scanning runs.
CREATE INDEX runs_by_source ON runs (source_run_id);

-- migration: 4
-- Data-parallel runs: each rank's step rows. Rank 0's row is the job's step
-- (its images are all ranks' images of that update, its times rank 0's); the
-- rows of ranks 1.. are their own (their images, their times), gathered to
-- rank 0 every [run] log_every updates. Rows older than migration 4 are a
-- single process's: rank 0.
ALTER TABLE step_timings ADD COLUMN rank INTEGER NOT NULL DEFAULT 0;

-- migration: 5
-- The bytes a rank sent for an update's gradients: the all-reduce payload,
-- or a gradient compressor's (values and indices), so a compression ratio is
-- measured, not claimed. NULL: nothing sent (one process, or before migration 5).
ALTER TABLE step_timings ADD COLUMN bytes_sent INTEGER;

-- migration: 6
-- Provenance and tags for the queries (`orchestrate runs --tag`, `show`,
-- `compare`). Self-contained: it touches only what it adds, so it can be
-- renumbered past another migration written at the same time.

-- How `orchestrate run` was invoked, shell-quoted; '' for rows older than
-- migration 6 and for runs begun by other programs.
ALTER TABLE runs ADD COLUMN command_line TEXT NOT NULL DEFAULT '';

-- The user's labels of a run (`orchestrate run ... --tag key=value`).
CREATE TABLE run_tags (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  key    TEXT    NOT NULL,
  value  TEXT    NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
-- Serves `runs --tag key=value` without reading every run's tags.
CREATE INDEX run_tags_by_key ON run_tags (key, value);

-- migration: 7
-- The measured peak of a device's matrix products, kept per host, device,
-- precision and intra-op threads, so that every run's model FLOPs
-- utilisation (`report throughput`'s mfu_percent) is taken against what
-- this machine does, measured once rather than before every run.
CREATE TABLE device_peaks (
  host        TEXT    NOT NULL,
  device      TEXT    NOT NULL,  -- the CPU's or GPU's model name
  precision   TEXT    NOT NULL,  -- [precision] mode: fp32, bf16 or fp16
  threads     INTEGER NOT NULL,  -- intra-op threads on a CPU; 0 on a GPU
  flops_per_s REAL    NOT NULL,
  method      TEXT    NOT NULL,  -- what was timed, e.g. "1024x1024 fp32 products by mm, the faster of mm and linear, 2 threads, best of 14"
  measured_at TEXT    NOT NULL,  -- ISO-8601 UTC
  PRIMARY KEY (host, device, precision, threads)
) WITHOUT ROWID;

-- migration: 8
-- Sweeps (`orchestrate sweep`): a search over a recipe's keys, each trial a
-- run tagged sweep=<name>, sweep_id=<id> and trial=<n>. The spec's text is
-- kept, so `sweep --resume ID` runs the same trials after the file changed
-- or went, and `sweep show ID` can say what was searched.
CREATE TABLE sweeps (
  id          INTEGER PRIMARY KEY,
  name        TEXT    NOT NULL,
  spec_path   TEXT    NOT NULL,  -- the spec file as given
  spec        TEXT    NOT NULL,  -- its text when the sweep began
  recipe_path TEXT    NOT NULL,  -- the base recipe, resolved
  metric      TEXT    NOT NULL,
  mode        TEXT    NOT NULL,  -- 'max' or 'min'
  scheduler   TEXT    NOT NULL,  -- 'none', 'asha' or 'median'
  -- 'running', then 'finished' (every trial ended), 'stopped' (Ctrl-C: resumable) or 'failed' (the controller failed)
  state       TEXT    NOT NULL,
  best_trial  INTEGER,           -- NULL until a trial has a value
  started_at  TEXT    NOT NULL,  -- ISO-8601 UTC
  ended_at    TEXT,
  host        TEXT    NOT NULL,  -- the controller's machine and process,
  pid         INTEGER NOT NULL,  -- to tell a live controller from a killed one
  command_line TEXT   NOT NULL
);
CREATE INDEX sweeps_by_name ON sweeps (name);

-- One row per trial, written before any trial starts (state 'pending'), so a
-- resumed sweep knows the whole set. state: 'pending', 'running', 'finished',
-- 'stopped' (by the scheduler, at rung `rung`), 'interrupted' (by Ctrl-C or a
-- lost controller: resumed from its checkpoint) or 'failed' (`reason` says why).
CREATE TABLE sweep_trials (
  sweep_id  INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  trial     INTEGER NOT NULL,
  overrides TEXT    NOT NULL,  -- JSON object: recipe key -> TOML value text
  state     TEXT    NOT NULL,
  run_id    INTEGER REFERENCES runs (id) ON DELETE SET NULL,
  rung      INTEGER,           -- the last rung the trial reached (0, 1, ...); NULL: none
  step      INTEGER,           -- the step of `value`
  value     REAL,              -- the metric at the trial's end, or at its last rung when stopped
  reason    TEXT    NOT NULL DEFAULT '',
  seconds   REAL    NOT NULL DEFAULT 0,  -- time its processes ran, all attempts
  PRIMARY KEY (sweep_id, trial)
) WITHOUT ROWID;
CREATE INDEX sweep_trials_by_run ON sweep_trials (run_id);

-- Runs brought in from another store file (`orchestrate store import`): a
-- trial on a Slurm node records into a store of its own (SQLite is not safe
-- for writers on several hosts through a network file system), which the
-- sweep imports when the trial ends. Importing the same run again (it was
-- resumed since) replaces its rows in place, keeping its id here.
CREATE TABLE run_imports (
  run_id        INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  source        TEXT    NOT NULL,  -- the source store file, an absolute path
  source_run_id INTEGER NOT NULL,
  imported_at   TEXT    NOT NULL,  -- ISO-8601 UTC, the last import
  UNIQUE (source, source_run_id)
);

-- migration: 9
-- Seconds a resumed run was stopped: from its end (or, lost, its last sign of
-- life) to each resume. Its duration leaves them out, so a run interrupted in
-- the evening and resumed in the morning is as long as it ran, and so is one
-- resumed when it had nothing left to train. Rows older than migration 9: 0.
ALTER TABLE runs ADD COLUMN paused_s REAL NOT NULL DEFAULT 0;
